"""Re-rankers: score ``(query, passage)`` pairs, higher is better.

Two implementations behind one protocol:

- :class:`BiEncoderReranker` scores by the cosine of the query and passage embeddings. It is
  the offline default because it needs no extra model, but it is no stronger than dense
  retrieval with the same embedder: use it when no cross-encoder is available, not as a
  substitute for one.
- :class:`CrossEncoderReranker` runs a ``sentence_transformers.CrossEncoder`` (e.g.
  ``"BAAI/bge-reranker-v2-m3"`` or ``"cross-encoder/ms-marco-MiniLM-L-6-v2"``), which reads
  query and passage together and is the stronger choice when its weights are available.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.encoders.models import LazyModel
from graphrag_integrations.core.threads import default_thread_limit
from graphrag_integrations.core.validation import check_query
from graphrag_integrations.errors import ModelUnavailableError


@runtime_checkable
class Reranker(Protocol):
    """Scores texts against a query.

    Attributes
    ----------
    model_name : str
        Identifies the scoring model (recorded in manifests / explanations).
    """

    model_name: str

    def score(self, query: str, texts: Sequence[str]) -> FloatMatrix:
        """One ``float32`` score per text, shape ``(len(texts),)``; higher is more relevant."""
        ...


class BiEncoderReranker:
    """Cosine similarity of L2-normalised embeddings (the offline default).

    Scores lie in ``[-1, 1]``. See the module notes: this adds no signal beyond dense
    retrieval with the same embedder; it exists so that every method runs offline.

    Parameters
    ----------
    embedder : Embedder, str, LangChain Embeddings or LlamaIndex BaseEmbedding, optional
        Normalised by :func:`~graphrag_integrations.core.encoders.embeddings.as_embedder`; ``None``
        is
        the offline all-MiniLM-L6-v2.

    Examples
    --------
    With a model-free embedder (``None`` would load the offline MiniLM):

    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> r = BiEncoderReranker(FakeEmbedder())
    >>> r.score("capital of France", ["Paris is the capital of France.", "Bananas."]).round(3)
    array([0.707, 0.   ], dtype=float32)
    """

    def __init__(self, embedder: Any = None) -> None:
        self.embedder: Embedder = as_embedder(embedder)
        self.model_name = f"bi-encoder:{self.embedder.model_name}"

    def score(self, query: str, texts: Sequence[str]) -> FloatMatrix:
        query = check_query(query)
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float32)
        matrix = self.embedder.embed(list(texts))
        return np.asarray(matrix @ self.embedder.embed_query(query), dtype=np.float32)


class CrossEncoderReranker:
    """A ``sentence_transformers.CrossEncoder`` relevance model (loaded on first use).

    Parameters
    ----------
    model_name_or_path : str
        Hub name or local folder of a cross-encoder with one output (``num_labels=1``).
    batch_size : int
        Pairs per forward pass.
    max_length : int
        Truncation length of the joint ``query [SEP] passage`` input, in word pieces.
    device : str, optional
        Torch device; CPU by default.

    Examples
    --------
    The model is loaded by the first :meth:`score` that has something to score, so building
    the reranker (and validating a query) costs nothing:

    >>> r = CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2", batch_size=16)
    >>> r.model_name
    'cross-encoder/ms-marco-MiniLM-L-6-v2'
    >>> r.score("  ", ["Paris is in France."])
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.EmptyQueryError: query is empty
    """

    def __init__(
        self,
        model_name_or_path: str,
        *,
        batch_size: int = 32,
        max_length: int = 512,
        device: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}")
        self.model_name = model_name_or_path
        self.batch_size = batch_size
        self.max_length = max_length
        self._device = device
        self._model: LazyModel[Any] = LazyModel(self._load)

    def _load(self) -> Any:
        default_thread_limit()  # the library's thread default, before torch starts its pools
        from sentence_transformers import CrossEncoder

        try:
            return CrossEncoder(
                self.model_name, max_length=self.max_length, device=self._device or "cpu"
            )
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(
                f"cannot load cross-encoder {self.model_name!r}: {exc}"
            ) from exc

    @property
    def model(self) -> Any:
        """The loaded ``CrossEncoder`` (loaded on first access)."""
        return self._model.get()

    def score(self, query: str, texts: Sequence[str]) -> FloatMatrix:
        query = check_query(query)
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float32)
        scores = np.asarray(
            self.model.predict(
                [(query, text) for text in texts],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            ),
            dtype=np.float32,
        )
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.shape != (len(texts),):
            raise ModelUnavailableError(
                f"{self.model_name!r} returns scores of shape {scores.shape} for {len(texts)} "
                "pairs; a re-ranker needs one relevance score per pair (num_labels=1)"
            )
        return scores


def as_reranker(obj: Any = None, embedder: Any = None) -> Reranker:
    """Normalise ``obj`` into a :class:`Reranker`.

    Parameters
    ----------
    obj : None, str or Reranker
        ``None``: :class:`BiEncoderReranker` over ``embedder``; ``str``: a
        :class:`CrossEncoderReranker` name or path; a :class:`Reranker`: returned unchanged.
    embedder : optional
        Used only when ``obj`` is ``None``.

    Raises
    ------
    TypeError
        If ``obj`` is none of the above.

    Examples
    --------
    >>> as_reranker("cross-encoder/ms-marco-MiniLM-L-6-v2").model_name
    'cross-encoder/ms-marco-MiniLM-L-6-v2'
    """
    if obj is None:
        return BiEncoderReranker(embedder)
    if isinstance(obj, str):
        return CrossEncoderReranker(obj)
    if isinstance(obj, Reranker):
        return obj
    raise TypeError(
        "reranker must be None, a cross-encoder name/path or a Reranker (model_name and "
        f"score(query, texts)); got {type(obj).__name__}"
    )
