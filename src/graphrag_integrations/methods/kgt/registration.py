"""KG-Translator's method registration (``"kgt"``), its builder and its trainer entry.

Importing this module is cheap: :func:`build` imports the index on first call, the trainer
(``methods.kgt.training:train``) is imported by ``graphrag-integrations train``.

Examples
--------
>>> KGT.name, sorted(KGT.inputs), KGT.trainer
('kgt', ['passages'], 'graphrag_integrations.methods.kgt.training:train')
>>> opts = KGT.parse_options({"preset": "paper-musique", "k": "3", "passage_vectors": "build"})
>>> opts.query_params.beta, opts.query_params.k, opts.index_params.passage_vectors
(5, 3, 'build')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.registry import STORE_OBJECTS, MethodRegistration
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.params import KGTIndexParams, KGTQueryParams, KGTTrainParams

if TYPE_CHECKING:
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever

__all__ = ["KGT", "REGISTRATIONS", "build"]


def build(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: KGTIndexParams | None = None,
    query_params: KGTQueryParams | None = None,
    show_progress: bool = False,
    translator: Any = None,
    decomposer: Any = None,
    vector_index: Any = None,
    graph_store: Any = None,
) -> ParseKGTranslatorRetriever:
    """Build a :class:`~graphrag_integrations.methods.kgt.index.ParseKGTranslatorRetriever`.

    Parameters
    ----------
    embedder : Embedder
        Passage ranker.
    passages : sequence of Passage
        The corpus.
    index_params, query_params : KGTIndexParams, KGTQueryParams, optional
        Build and query options (``None``: defaults).
    show_progress : bool
        Progress bars while parsing.
    translator : str, Path or TransformersLLM, optional
        ``None``: the committed MuSiQue-100 fold-a adapter on SmolLM2-135M-Instruct
        (:data:`~graphrag_integrations.methods.kgt.assets.DEFAULT_TRANSLATOR`); ``"base"``:
        the untuned SmolLM2; a folder written by ``train --method kgt`` or a model path.
    decomposer : LLM, optional
        Multi-step mode (``max_steps > 1``).
    vector_index, graph_store : optional
        Where the passage vectors and the graph live (as for
        :class:`~graphrag_integrations.methods.kgt.index.ParseKGTranslatorRetriever`).

    Examples
    --------
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> corpus = [Passage("p1", "Marie Curie was born in Warsaw.", "d1")]
    >>> index = build(FakeEmbedder(), passages=corpus, translator="base")
    >>> index.stats().passages, index.default_k
    (1, 5)
    """
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever

    return ParseKGTranslatorRetriever.from_passages(
        list(passages),
        embedding=embedder,
        translator=translator,
        index_params=index_params,
        query_params=query_params,
        decomposer=decomposer,
        vector_index=vector_index,
        graph_store=graph_store,
        show_progress=show_progress,
    )


KGT = MethodRegistration(
    name="kgt",
    index_class="graphrag_integrations.methods.kgt.index:ParseKGTranslatorRetriever",
    builder="graphrag_integrations.methods.kgt.registration:build",
    index_params=KGTIndexParams,
    query_params=KGTQueryParams,
    inputs=frozenset({"passages"}),
    objects={
        "translator": "translation LM: trained folder, model path, 'base' or TransformersLLM "
        "(default: the committed MuSiQue-100 fold-a adapter)",
        "decomposer": "multi-step question decomposition LLM (max_steps > 1)",
        **STORE_OBJECTS,
    },
    named_objects=frozenset({"translator", "decomposer", "graph_store"}),
    description="KG-Translator: ParseKG + KG-constrained query-to-clue translation",
    trainer="graphrag_integrations.methods.kgt.training:train",
    train_params=KGTTrainParams,
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (KGT,)
