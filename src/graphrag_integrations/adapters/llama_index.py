"""Any core retriever as a LlamaIndex ``BaseRetriever`` (and from there a query engine).

Results become ``NodeWithScore(TextNode)``: node id = passage id, ``ref_doc_id`` = the source
document id, score = the core score. The metadata this package adds (``passage_id``,
``doc_id``, ``score`` and the possibly long ``explanation``) is excluded from the text LlamaIndex
shows an LLM or an embedding model; the source document's own metadata (title, path...)
stays visible.

Metadata filters: ``LlamaIndexRetriever(..., filters=MetadataFilters(...))`` (and
``as_llama_index_retriever(filters=...)``, ``as_query_engine(filters=...)``) keeps only passages
whose metadata matches; :func:`from_metadata_filters` converts LlamaIndex's ``MetadataFilters``
(operators ``==  !=  >  >=  <  <=  in  nin  any  all  contains  text_match
text_match_insensitive``, conditions ``and``/``or``/``not``, nested ``MetadataFilters``) into the
core language (:mod:`graphrag_integrations.core.retrieval.filters`); ``is_empty`` is refused.

Errors raised by the core retriever (for example
:class:`~graphrag_integrations.errors.EmptyQueryError` on an empty query) propagate unchanged.
"""

from __future__ import annotations

import logging
from typing import Any

from llama_index.core import Settings
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.llms import LLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import MetadataFilter as LlamaMetadataFilter
from llama_index.core.vector_stores.types import MetadataFilters

from graphrag_integrations.adapters.validation import as_core_retriever, check_k
from graphrag_integrations.core.retrieval.filters import (
    FILTER_NODES,
    Comparison,
    MetadataFilter,
    aretrieve_with_filter,
    group,
    parse_filter,
    retrieve_with_filter,
)
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import InvalidArgumentError, ModelUnavailableError

logger = logging.getLogger(__name__)

#: Metadata keys added by :meth:`RetrievedPassage.to_metadata`; hidden from LLM and embed text.
ADAPTER_METADATA_KEYS: tuple[str, ...] = ("passage_id", "doc_id", "score", "explanation")


def to_node_with_score(passage: RetrievedPassage) -> NodeWithScore:
    """Convert a core result into a LlamaIndex ``NodeWithScore``.

    Examples
    --------
    >>> from graphrag_integrations.core.types import Passage, RetrievedPassage
    >>> nws = to_node_with_score(RetrievedPassage(Passage("p1", "Rome is in Italy.", "d1"), 0.9))
    >>> nws.node.node_id, nws.node.ref_doc_id, nws.score
    ('p1', 'd1', 0.9)
    """
    node = TextNode(
        id_=passage.id,
        text=passage.text,
        metadata=passage.to_metadata(),
        excluded_llm_metadata_keys=list(ADAPTER_METADATA_KEYS),
        excluded_embed_metadata_keys=list(ADAPTER_METADATA_KEYS),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=passage.doc_id)},
    )
    return NodeWithScore(node=node, score=float(passage.score))


#: LlamaIndex ``FilterOperator`` values -> core operators.
_OPERATORS = {
    "==": "eq",
    "!=": "ne",
    ">": "gt",
    ">=": "gte",
    "<": "lt",
    "<=": "lte",
    "in": "in",
    "nin": "nin",
    "any": "any",
    "all": "all",
    "contains": "contains",
    "text_match": "text_match",
    "text_match_insensitive": "text_match_insensitive",
}


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


def from_metadata_filters(filters: Any) -> MetadataFilter:
    """Convert LlamaIndex ``MetadataFilters`` (or one ``MetadataFilter``) to a core filter.

    Raises
    ------
    InvalidArgumentError
        On an operator without a core equivalent (``is_empty``), an unknown condition, an
        empty ``filters`` list or a value of the wrong type (a ``ValueError``).

    Examples
    --------
    >>> from llama_index.core.vector_stores.types import (
    ...     FilterCondition, FilterOperator, MetadataFilter, MetadataFilters)
    >>> where = from_metadata_filters(MetadataFilters(
    ...     filters=[MetadataFilter(key="year", value=2000, operator=FilterOperator.GTE),
    ...              MetadataFilter(key="lang", value="en")],
    ...     condition=FilterCondition.OR))
    >>> where.matches({"year": 1990, "lang": "en"}), where.matches({"year": 1990})
    (True, False)
    """
    if isinstance(filters, MetadataFilters):
        condition = str(_enum_value(filters.condition) or "and")
        return group(condition, [from_metadata_filters(f) for f in filters.filters])
    if isinstance(filters, LlamaMetadataFilter):
        operator = str(_enum_value(filters.operator))
        if operator not in _OPERATORS:
            raise InvalidArgumentError(
                f"LlamaIndex filter operator {operator!r} on key {filters.key!r} is not "
                f"supported (supported: {', '.join(_OPERATORS)})"
            )
        value: Any = filters.value  # checked by Comparison
        if isinstance(value, list):
            value = tuple(value)
        return Comparison(filters.key, _OPERATORS[operator], value)
    raise InvalidArgumentError(
        f"expected LlamaIndex MetadataFilters or MetadataFilter, got {type(filters).__name__}"
    )


def as_filter(filters: Any) -> MetadataFilter | None:
    """``filters`` of a LlamaIndex retriever as a core filter: LlamaIndex ``MetadataFilters``,
    a core filter tree, the LangChain dict form, or ``None``.

    Examples
    --------
    >>> as_filter({"lang": "en"})
    Comparison(key='lang', operator='eq', value='en')
    """
    if isinstance(filters, (MetadataFilters, LlamaMetadataFilter)):
        return from_metadata_filters(filters)
    if filters is None or isinstance(filters, (dict, *FILTER_NODES)):
        return parse_filter(filters)
    raise InvalidArgumentError(
        "filters must be LlamaIndex MetadataFilters, a "
        "graphrag_integrations.core.retrieval.filters "
        f"tree, a dict or None, got {type(filters).__name__}"
    )


def check_llm(llm: Any) -> LLM | None:
    """Return ``llm`` if it is ``None`` or a LlamaIndex ``LLM``, else raise ``TypeError``.

    Examples
    --------
    >>> from llama_index.core.llms import MockLLM
    >>> check_llm(MockLLM()) is not None
    True
    """
    if llm is None or isinstance(llm, LLM):
        return llm
    raise TypeError(
        "llm must be a LlamaIndex LLM (llama_index.core.llms.LLM) or None for Settings.llm, "
        f"got {type(llm).__name__}"
    )


def build_query_engine(retriever: Any, llm: Any = None, **kwargs: Any) -> RetrieverQueryEngine:
    """A ``RetrieverQueryEngine`` over any LlamaIndex retriever.

    Parameters
    ----------
    retriever : llama_index.core.retrievers.BaseRetriever
        Supplies the context nodes.
    llm : llama_index.core.llms.LLM, optional
        The answering LLM. ``None`` uses ``llama_index.core.Settings.llm``, whose default is
        OpenAI (needs ``llama-index-llms-openai``, a key and the network); for fully offline
        answers pass a local LlamaIndex LLM.
    **kwargs
        Passed to ``RetrieverQueryEngine.from_args`` (``response_mode``,
        ``node_postprocessors``, ``streaming``...).

    Returns
    -------
    RetrieverQueryEngine

    Raises
    ------
    TypeError
        If ``llm`` is neither ``None`` nor a LlamaIndex ``LLM``.
    ModelUnavailableError
        If ``llm`` is ``None`` and ``Settings.llm`` cannot be resolved (LlamaIndex's OpenAI
        default without ``llama-index-llms-openai`` or without a key).

    Examples
    --------
    >>> from llama_index.core.llms import MockLLM
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> engine = build_query_engine(LlamaIndexRetriever(index, 1), llm=MockLLM())
    >>> engine.query("Where is Paris?").source_nodes[0].node.get_content()
    'Paris is in France.'
    """
    answer_llm = check_llm(llm)
    if answer_llm is None:
        answer_llm = settings_llm()
        logger.info("no llm given: answering with llama_index Settings.llm (%s)", answer_llm)
    return RetrieverQueryEngine.from_args(retriever, llm=answer_llm, **kwargs)


def settings_llm() -> LLM:
    """``llama_index.core.Settings.llm``, or :class:`ModelUnavailableError` if unresolvable.

    LlamaIndex resolves its default (OpenAI) on first access; without
    ``llama-index-llms-openai`` or an API key that fails, and the error says how to pass a
    local LLM instead.
    """
    try:
        return Settings.llm
    except (ImportError, ValueError) as exc:
        raise ModelUnavailableError(
            "no llm given and llama_index Settings.llm cannot be resolved "
            f"({exc}); pass llm=<a LlamaIndex LLM, e.g. a local one> or set "
            "llama_index.core.Settings.llm"
        ) from exc


class LlamaIndexRetriever(BaseRetriever):
    """LlamaIndex retriever over any core retriever.

    Parameters
    ----------
    retriever : Retriever
        Anything with ``retrieve(query, k)`` and ``aretrieve(query, k)``.
    similarity_top_k : int, optional
        Nodes per call; ``None`` leaves the choice to the core retriever's default.
    filters : MetadataFilters, dict or filter tree, optional
        Keep only passages whose metadata matches (see :func:`as_filter`).
    callback_manager : llama_index.core.callbacks.CallbackManager, optional
        LlamaIndex callbacks for this retriever.
    verbose : bool
        LlamaIndex verbosity flag.

    Raises
    ------
    TypeError
        If ``retriever`` is not a core retriever or ``similarity_top_k`` is not an int.
    ValueError
        If ``similarity_top_k`` < 1 or ``filters`` is malformed.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> nodes = LlamaIndexRetriever(index, similarity_top_k=1).retrieve("Paris?")
    >>> nodes[0].node.get_content()
    'Paris is in France.'
    >>> from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters
    >>> index = BM25Retriever.from_documents(
    ...     [{"text": "Paris is in France.", "country": "FR"}, {"text": "Rome is in Italy."}])
    >>> no_fr = MetadataFilters(filters=[MetadataFilter(key="country", value="FR")])
    >>> nodes = LlamaIndexRetriever(index, 2, filters=no_fr).retrieve("Rome?")
    >>> [n.node.get_content() for n in nodes]
    ['Paris is in France.']
    """

    def __init__(
        self,
        retriever: Any,
        similarity_top_k: int | None = None,
        *,
        filters: Any = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.retriever = as_core_retriever(retriever)
        self.similarity_top_k = check_k(similarity_top_k, "similarity_top_k")
        self.filters = as_filter(filters)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = retrieve_with_filter(
            self.retriever, query_bundle.query_str, self.similarity_top_k, self.filters
        )
        return [to_node_with_score(r) for r in results]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = await aretrieve_with_filter(
            self.retriever, query_bundle.query_str, self.similarity_top_k, self.filters
        )
        return [to_node_with_score(r) for r in results]

    def as_query_engine(self, llm: Any = None, **kwargs: Any) -> RetrieverQueryEngine:
        """A ``RetrieverQueryEngine`` answering from this retriever's nodes.

        See :func:`build_query_engine` for ``llm`` (``None``: ``Settings.llm``) and ``kwargs``.

        Examples
        --------
        >>> from llama_index.core.llms import MockLLM
        >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
        >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
        >>> engine = LlamaIndexRetriever(index, 1).as_query_engine(llm=MockLLM())
        >>> engine.query("Where is Paris?").source_nodes[0].node.get_content()
        'Paris is in France.'
        """
        return build_query_engine(self, llm=llm, **kwargs)
