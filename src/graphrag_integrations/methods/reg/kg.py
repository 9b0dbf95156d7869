"""KG sources ReG indexes: (head, relation, tail) triples from wherever users have them.

* Python triples (:func:`check_triples`);
* files (:func:`read_triples`): TSV, CSV, or MetaQA's ``head|relation|tail`` lines (the
  delimiter is picked from the suffix, ``.tsv`` / ``.csv``, or given);
* LangChain ``GraphDocument`` objects (:func:`triples_from_graph_documents`): each
  relationship ``(source.id, type, target.id)``;
* a LlamaIndex property-graph store (:func:`triples_from_property_graph_store`): its
  ``get_triplets()`` as ``(source.name or id, relation.label, target.name or id)``;
* plain documents, for users without a KG (:func:`triples_from_parses`): the core spaCy
  pipeline parses each document; in every sentence with at least two linkable entities, each
  subject entity (dependency ``nsubj``/``nsubjpass``; the first entity when none is a
  subject) becomes a head and every other entity of the sentence a tail, and the relation is
  the sentence with its entities masked as ``"##"`` (the hyperrelation of KG-Translator).
  Entity names are ``normalize_entity`` keys, so the same name links across sentences and
  documents. Numeric entity labels (``CARDINAL``, ``ORDINAL``, ``QUANTITY``, ``PERCENT``,
  ``MONEY``) are not linked.

The KG is a directed multigraph: two triples with the same ends and different relations
are two edges; a triple is identified by all three fields.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import TypedDict, Unpack

from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.core.text.nlp import ParsedText
from graphrag_integrations.errors import DocumentLoadError, EmptyCorpusError

if TYPE_CHECKING:
    from graphrag_integrations.core.graph.backends import GraphStoreSpec
    from graphrag_integrations.methods.reg.params import RegIndexParams, RegQueryParams

Triple = tuple[str, str, str]
"""``(head, relation, tail)``: entity name, relation text, entity name."""

#: spaCy labels that get no entity node when triples are extracted from text.
NUMERIC_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
#: Longest relation text kept for a text-extracted triple (characters).
MAX_RELATION_CHARS = 200


def check_triples(triples: Iterable[Sequence[str]]) -> list[Triple]:
    """Validate and deduplicate triples, keeping their first-seen order.

    Raises
    ------
    ValueError
        A triple without exactly three non-empty string fields.

    Examples
    --------
    >>> check_triples([("Kismet", "directed_by", "William Dieterle"), ["a", "r", "b"]] * 2)
    [('Kismet', 'directed_by', 'William Dieterle'), ('a', 'r', 'b')]
    """
    out: dict[Triple, None] = {}
    for n, triple in enumerate(triples):
        if isinstance(triple, str) or len(triple) != 3:
            raise ValueError(f"triple {n} must be (head, relation, tail), got {triple!r}")
        head, rel, tail = (str(x).strip() for x in triple)
        if not (head and rel and tail):
            raise ValueError(f"triple {n} has an empty field: {triple!r}")
        out[(head, rel, tail)] = None
    return list(out)


def read_triples(path: str | Path, *, delimiter: str | None = None) -> list[Triple]:
    """Triples of a file: ``.tsv`` (tab), ``.csv`` (comma) or ``|`` (MetaQA ``kb.txt``).

    A first row ``head, relation, tail`` (any case, also ``subject``/``predicate``/``object``)
    is a header and skipped. Blank lines are skipped.

    Raises
    ------
    DocumentLoadError
        A missing file or a row without three fields.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "kb.txt")
    >>> _ = open(p, "w").write("Kismet|directed_by|William Dieterle\\n")
    >>> read_triples(p)
    [('Kismet', 'directed_by', 'William Dieterle')]
    """
    src = Path(path)
    if not src.is_file():
        raise DocumentLoadError(f"{src} is not a file")
    if delimiter is None:
        delimiter = {".tsv": "\t", ".csv": ","}.get(src.suffix.lower(), "|")
    rows: list[Sequence[str]] = []
    with src.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL)
        if delimiter == "|":
            reader = (line.rstrip("\r\n").split("|") for line in fh)  # type: ignore[assignment]
        for n, row in enumerate(reader, 1):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != 3:
                raise DocumentLoadError(f"{src}:{n}: expected 3 fields, got {row!r}")
            if n == 1 and {c.strip().lower() for c in row} in _HEADERS:
                continue
            rows.append(row)
    try:
        return check_triples(rows)
    except ValueError as exc:
        raise DocumentLoadError(f"{src}: {exc}") from exc


_HEADERS = ({"head", "relation", "tail"}, {"subject", "predicate", "object"})
#: File suffixes ``from_documents`` reads as triples (:func:`read_triples`), not as text.
TRIPLE_SUFFIXES = (".tsv", ".csv")


def is_triple_file(obj: Any) -> bool:
    """Whether ``obj`` is a path (``Path`` or ``str``) to an existing ``.tsv`` / ``.csv`` file.

    Examples
    --------
    >>> is_triple_file("kb.tsv"), is_triple_file("Paris is in France.")
    (False, False)
    """
    if not isinstance(obj, (str, os.PathLike)) or (isinstance(obj, str) and "\n" in obj):
        return False
    path = Path(obj)
    return path.suffix.lower() in TRIPLE_SUFFIXES and path.is_file()


def triples_from_graph_documents(graph_documents: Iterable[Any]) -> list[Triple]:
    """Triples of graph documents: LangChain's ``GraphDocument`` (``langchain_community``,
    ``langchain_neo4j``) or any object with ``relationships`` whose items have ``source``,
    ``target`` (nodes with an ``id``, or names) and ``type``; nothing is imported.

    Raises
    ------
    TypeError
        An object without ``relationships``, or a relationship without ``source``,
        ``target`` or ``type``.

    Examples
    --------
    >>> from types import SimpleNamespace as N
    >>> rel = N(source=N(id="Paris"), type="CAPITAL_OF", target=N(id="France"))
    >>> triples_from_graph_documents([N(nodes=[], relationships=[rel])])
    [('Paris', 'CAPITAL_OF', 'France')]
    """
    out: list[tuple[str, str, str]] = []
    for n, doc in enumerate(graph_documents):
        rels = getattr(doc, "relationships", None)
        if rels is None:
            raise TypeError(
                f"graph document {n} ({type(doc).__name__}) has no relationships: expected a "
                "GraphDocument or an object with .nodes and .relationships"
            )
        for r in rels:
            ends = [getattr(r, name, None) for name in ("source", "target", "type")]
            if any(e is None for e in ends):
                raise TypeError(
                    f"graph document {n}: a relationship ({type(r).__name__}) needs .source, "
                    ".target and .type"
                )
            source, target, kind = ends
            out.append(
                (str(getattr(source, "id", source)), str(kind), str(getattr(target, "id", target)))
            )
    return check_triples(out)


def _node_name(node: Any) -> str:
    name = getattr(node, "name", None)
    return str(name if name else node.id)


def triples_from_property_graph_store(store: Any, **filters: Any) -> list[Triple]:
    """Triples of a LlamaIndex property-graph store.

    ``get_triplets()`` of LlamaIndex stores returns nothing without a filter, so a store with an
    in-memory graph (``SimplePropertyGraphStore.graph``) is read whole; any other store is
    asked ``get_triplets(**filters)`` (pass ``entity_names=``, ``relation_names=`` or
    ``ids=``). Entity nodes contribute their ``name``; other nodes their ``id``.

    Raises
    ------
    TypeError
        Not a property-graph store.
    ValueError
        The store returned no triplet.

    Examples
    --------
    >>> from types import SimpleNamespace as N
    >>> store = N(get_triplets=lambda **f: [(N(name="Paris", id="p"), N(label="in"), N(id="x"))])
    >>> triples_from_property_graph_store(store, ids=["p"])
    [('Paris', 'in', 'x')]
    """
    getter = getattr(store, "get_triplets", None)
    if getter is None:
        raise TypeError(f"{type(store).__name__} has no get_triplets(): not a property graph store")
    graph = getattr(store, "graph", None)
    if not filters and callable(getattr(graph, "get_triplets", None)):
        triplets = graph.get_triplets()  # type: ignore[union-attr]
    else:
        triplets = getter(**filters)
    if not triplets:
        raise ValueError(
            f"{type(store).__name__}.get_triplets({filters or ''}) returned no triplet; "
            "pass entity_names=, relation_names= or ids="
        )
    return check_triples((_node_name(s), str(r.label), _node_name(t)) for s, r, t in triplets)


def triples_from_parses(
    parses: Iterable[ParsedText], *, excluded_labels: Iterable[str] = NUMERIC_LABELS
) -> list[Triple]:
    """Text triples (see the module docstring) of already parsed documents.

    Examples
    --------
    >>> from graphrag_integrations.core.text.nlp import Entity, ParsedText, Sentence
    >>> ents = (Entity("Paris", "GPE", 0, 5, True, "paris"),
    ...         Entity("France", "GPE", 24, 30, False, "france"))
    >>> s = Sentence("Paris is the capital of France.", 0, 31, ents)
    >>> triples_from_parses([ParsedText("Paris is the capital of France.", (s,))])
    [('paris', '## is the capital of ##.', 'france')]
    """
    excluded = frozenset(excluded_labels)
    out: list[tuple[str, str, str]] = []
    for parsed in parses:
        for sent in parsed.sentences:
            ents = [e for e in sent.entities if e.label not in excluded and e.norm]
            names = list(dict.fromkeys(e.norm for e in ents))
            if len(names) < 2:
                continue
            heads = list(dict.fromkeys(e.norm for e in ents if e.is_subject)) or names[:1]
            relation = " ".join(sent.masked().split())[:MAX_RELATION_CHARS]
            out.extend((h, relation, t) for h in heads for t in names if t != h)
    return check_triples(out) if out else []


_S = TypeVar("_S", bound="KGSources")


class RegIndexArguments(TypedDict, total=False):
    """The arguments of the ReG index's constructor (see ``RefinedSubgraphRetriever``), typed
    once for the constructors that forward them: :class:`KGSources`' and ``from_passages``
    (``**arguments: Unpack[RegIndexArguments]``)."""

    embedding: Any
    index_params: RegIndexParams | None
    query_params: RegQueryParams | None
    preset: str | None
    show_progress: bool | None
    graph_store: GraphStoreSpec


class KGSources:
    """The index constructors from KG sources (mixed into ``RefinedSubgraphRetriever``):
    Python triples, files, graph documents, LlamaIndex property-graph stores. Each takes the
    index's constructor arguments (:class:`RegIndexArguments`: the embedding, the params,
    ``graph_store``, where the KG lives...)."""

    if TYPE_CHECKING:  # what the constructors use of the index

        def __init__(self, **arguments: Unpack[RegIndexArguments]) -> None: ...

        def insert_triples(self, triples: Iterable[Sequence[str]], doc_id: str) -> int: ...

    @classmethod
    def from_triples(
        cls: type[_S],
        triples: Iterable[Sequence[str]],
        *,
        doc_id: str = "triples",
        **arguments: Unpack[RegIndexArguments],
    ) -> _S:
        """Build from Python triples, all under provenance ``doc_id``."""
        checked = check_triples(triples)
        if not checked:
            raise EmptyCorpusError("no triples to index")
        index = cls(**arguments)
        index.insert_triples(checked, doc_id)
        return index

    @classmethod
    def from_file(
        cls: type[_S],
        path: str | Path,
        *,
        delimiter: str | None = None,
        **arguments: Unpack[RegIndexArguments],
    ) -> _S:
        """Build from a TSV / CSV / ``h|r|t`` file (provenance: the file name)."""
        triples = read_triples(path, delimiter=delimiter)
        return cls.from_triples(triples, doc_id=Path(path).name, **arguments)

    @classmethod
    def from_graph_documents(
        cls: type[_S], graph_documents: Iterable[Any] | Any, **arguments: Unpack[RegIndexArguments]
    ) -> _S:
        """Build from graph documents (:func:`.kg.triples_from_graph_documents`: LangChain's
        ``GraphDocument`` of ``langchain_community`` or ``langchain_neo4j``, or any object
        with ``.relationships`` of ``.source`` / ``.target`` / ``.type``; one or an iterable).
        Each one's provenance is the content id of its source document (or of its triples
        when it has none)."""
        index = cls(**arguments)
        if hasattr(graph_documents, "relationships"):
            graph_documents = [graph_documents]
        added = 0
        for gdoc in graph_documents:
            triples = triples_from_graph_documents([gdoc])
            source = getattr(getattr(gdoc, "source", None), "page_content", None)
            doc_id = content_id(source if source else json.dumps(triples))
            if triples:
                added += index.insert_triples(triples, doc_id)
        if not added:
            raise EmptyCorpusError("the graph documents hold no relationships")
        return index

    @classmethod
    def from_property_graph_store(
        cls: type[_S],
        store: Any,
        *,
        doc_id: str = "property_graph",
        filters: dict[str, Any] | None = None,
        **arguments: Unpack[RegIndexArguments],
    ) -> _S:
        """Build from a LlamaIndex property-graph store's triplets
        (:func:`.kg.triples_from_property_graph_store`, ``filters`` passed on)."""
        triples = triples_from_property_graph_store(store, **(filters or {}))
        return cls.from_triples(triples, doc_id=doc_id, **arguments)
