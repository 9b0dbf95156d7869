"""The tools ``graphrag-integrations serve`` exposes, independent of the MCP SDK.

A :class:`ServedIndex` is one loaded index and what the server was told about it; its
:meth:`~ServedIndex.tools` are :class:`ToolSpec` records (name, description, JSON schemas,
hints and the function a call runs). :mod:`graphrag_integrations.cli.mcp_server` turns them
into MCP tools.

Tools
    ``search`` (one per index): arguments ``query``, ``k`` (default: the index's, at most
    the server's ``max_k``) and ``filter`` (LangChain's dict language, see
    :mod:`graphrag_integrations.core.retrieval.filters`; a JSON string of it is accepted
    too). A server filter (``--filter``) is ANDed with the call's, so a call can narrow what
    the server shows but never widen it: ``{}`` or ``null`` leave the server filter alone.
    ``insert`` / ``delete`` (``--allow-writes``): add documents
    (``[{"text", "id"?, "metadata"?}]``) or remove documents by id, then persist the index
    to its folder; one write at a time per index, while searches go on.

Errors
    A bad argument (unknown name, empty query, ``k`` out of range, a malformed filter)
    raises :class:`~graphrag_integrations.errors.InvalidArgumentError` (or another
    ``GraphRAGError``) with a one-line message, before the index does any work.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.cli.mcp_results import PASSAGE_SCHEMA, passage_row, render_passages
from graphrag_integrations.core.retrieval.filters import (
    AllOf,
    MetadataFilter,
    parse_filter,
    retrieve_with_filter,
)
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.errors import GraphRAGError, InvalidArgumentError

#: A tool name every LLM API accepts (OpenAI's function names are the strictest).
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The largest ``k`` a call may ask for, unless the server sets another (``--max-k``).
DEFAULT_MAX_K = 50

_FILTER_HELP = (
    'Optional metadata filter in LangChain\'s dict language, e.g. {"file_name": "a.txt"}, '
    '{"year": {"$gte": 2000}}, {"$or": [{...}, {...}]}; operators $eq $ne $gt $gte $lt '
    "$lte $in $nin $contains. Keys: the documents' metadata (file_name, source, title...) and "
    "doc_id. A key no passage has matches nothing."
)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns: ``text`` for the LLM and ``data``, the structured content."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what a client lists and the function a call runs (in a worker thread)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    run: Callable[[Mapping[str, Any]], ToolResult]


def derived_tool_name(path: Path) -> str:
    """The default search tool name of the index in ``path``: ``search_<folder>``, in
    lower-case letters, digits and ``_`` (at most 57 characters, so that the write tools'
    ``_insert`` / ``_delete`` names stay within 64).

    Examples
    --------
    >>> derived_tool_name(Path("indexes/Wiki Films (clue)"))
    'search_wiki_films_clue'
    """
    base = re.sub(r"[^a-z0-9]+", "_", path.resolve().name.lower()).strip("_") or "index"
    return f"search_{base}"[:57]


def derived_description(name: str, method: str, about: str, documents: int) -> str:
    """The default description of a search tool: the corpus, the method and what comes back.

    Examples
    --------
    >>> derived_description("search_wiki", "bm25", "lexical BM25 (bm25s)", 60)[:60]
    'Search the wiki index (60 documents; method bm25: lexical BM'
    """
    corpus = name.removeprefix("search_") or name
    return (
        f"Search the {corpus} index ({documents} documents; method {method}: {about}) for "
        "passages relevant to a natural-language question or keywords. Returns the best "
        "passages first, each with its passage id, document id, score, source metadata and "
        "why it was retrieved."
    )


def check_tool_name(name: str) -> str:
    """``name`` if it is 1-64 letters, digits, ``_`` or ``-``, else ``InvalidArgumentError``.

    Examples
    --------
    >>> check_tool_name("search films")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: tool name 'search films' must be 1-64 \
letters, digits, _ or -
    """
    if not TOOL_NAME.fullmatch(name):
        raise InvalidArgumentError(f"tool name {name!r} must be 1-64 letters, digits, _ or -")
    return name


def parse_call_filter(value: Any) -> MetadataFilter | None:
    """A call's ``filter`` argument: ``None``, a dict, or the same dict as a JSON string.

    Examples
    --------
    >>> parse_call_filter('{"lang": "en"}')
    Comparison(key='lang', operator='eq', value='en')
    >>> parse_call_filter("lang=en")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: filter is not JSON: Expecting value: ...
    """
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidArgumentError(f"filter is not JSON: {exc}") from None
    return parse_filter(value)


def combined_filter(
    server: MetadataFilter | None, call: MetadataFilter | None
) -> MetadataFilter | None:
    """The server's filter AND the call's (either may be ``None``): a call narrows, never
    widens.

    Examples
    --------
    >>> tenant = parse_filter({"tenant": "a"})
    >>> combined_filter(tenant, parse_filter({})).matches({"tenant": "b"})
    False
    """
    if server is None:
        return call
    if call is None:
        return server
    return AllOf((server, call))


def _check_names(arguments: Mapping[str, Any], allowed: Sequence[str], tool: str) -> None:
    unknown = sorted(set(arguments) - set(allowed))
    if unknown:
        raise InvalidArgumentError(
            f"unknown argument(s) {', '.join(unknown)}; {tool} takes {', '.join(allowed)}"
        )


def _string_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise InvalidArgumentError(f"{what} must be a non-empty list")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise InvalidArgumentError(f"every item of {what} must be a non-empty string")
    return list(dict.fromkeys(value))


def _documents(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise InvalidArgumentError("documents must be a non-empty list of {text, id, metadata}")
    docs: list[dict[str, Any]] = []
    for i, doc in enumerate(value):
        if not isinstance(doc, Mapping):
            raise InvalidArgumentError(f"documents[{i}] must be an object with a text")
        _check_names(doc, ("text", "id", "metadata"), f"documents[{i}]")
        if not isinstance(doc.get("text"), str) or not doc["text"].strip():
            raise InvalidArgumentError(f"documents[{i}].text must be a non-empty string")
        if "id" in doc and (not isinstance(doc["id"], str) or not doc["id"].strip()):
            raise InvalidArgumentError(f"documents[{i}].id must be a non-empty string")
        if "metadata" in doc and not isinstance(doc["metadata"], Mapping):
            raise InvalidArgumentError(f"documents[{i}].metadata must be an object")
        docs.append(dict(doc))
    return docs


@dataclass
class ServedIndex:
    """A loaded index as a server exposes it.

    Parameters
    ----------
    name, description : str
        The search tool's; the write tools are ``<name>_insert`` and ``<name>_delete``.
    path : Path
        The index folder (where writes persist).
    method : str
        The index's method.
    index : BaseIndex
        The loaded index (writes go here).
    retriever : core Retriever
        What searches run on: the index, or ``index.as_retriever(**query options)``.
    where : MetadataFilter, optional
        The server filter, ANDed with every call's.
    max_k : int
        The largest ``k`` a call may ask for.
    writable : bool
        Whether the insert / delete tools exist.
    """

    name: str
    description: str
    path: Path
    method: str
    index: Any
    retriever: Any
    where: MetadataFilter | None = None
    max_k: int = DEFAULT_MAX_K
    writable: bool = False
    _writes: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def default_k(self) -> int:
        """``k`` of a call that gives none (the retriever's default, at most :attr:`max_k`)."""
        return min(int(getattr(self.retriever, "default_k", 5)), self.max_k)

    def search(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run one search call (see the module notes)."""
        _check_names(arguments, ("query", "k", "filter"), self.name)
        if "query" not in arguments:
            raise InvalidArgumentError("query is missing")
        query = check_query(arguments["query"])
        k = check_k(arguments.get("k"), self.default_k)
        if k > self.max_k:
            raise InvalidArgumentError(f"k must be <= {self.max_k} on this server, got {k}")
        where = combined_filter(self.where, parse_call_filter(arguments.get("filter")))
        hits = retrieve_with_filter(self.retriever, query, k, where)
        rows = [passage_row(rank, hit) for rank, hit in enumerate(hits, 1)]
        data = {"index": self.name, "method": self.method, "query": query, "k": k}
        return ToolResult(render_passages(query, self.name, rows), {**data, "passages": rows})

    def insert(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Insert documents and persist the index (documents already indexed are skipped)."""
        _check_names(arguments, ("documents",), f"{self.name}_insert")
        docs = _documents(arguments.get("documents"))
        with self._writes:
            added = list(self.index.insert(docs))
            self._persist(f"{len(added)} document(s) inserted")
        skipped = len(docs) - len(added)
        text = f"inserted {len(added)} document(s) into {self.name}: {', '.join(added) or '-'}"
        text += f"; {skipped} already indexed, skipped" if skipped else ""
        return ToolResult(text, {"index": self.name, "inserted": added, "skipped": skipped})

    def delete(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Delete documents by id and persist the index."""
        _check_names(arguments, ("doc_ids",), f"{self.name}_delete")
        ids = _string_list(arguments.get("doc_ids"), "doc_ids")
        with self._writes:
            deleted = list(self.index.delete_many(ids))
            if deleted:
                self._persist(f"{len(deleted)} document(s) deleted")
        missing = [doc_id for doc_id in ids if doc_id not in set(deleted)]
        text = f"deleted {len(deleted)} document(s) from {self.name}: {', '.join(deleted) or '-'}"
        text += f"; not indexed: {', '.join(missing)}" if missing else ""
        return ToolResult(text, {"index": self.name, "deleted": deleted, "not_found": missing})

    def _persist(self, done: str) -> None:
        try:
            self.index.persist(self.path, overwrite=True)
        except Exception as exc:
            raise GraphRAGError(f"{done} but {self.path} was not updated: {exc}") from exc

    def tools(self) -> list[ToolSpec]:
        """The search tool, then the write tools when :attr:`writable`."""
        search_input = {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "a natural-language question or keywords",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_k,
                    "default": self.default_k,
                    "description": "number of passages to return",
                },
                "filter": {"type": ["object", "string", "null"], "description": _FILTER_HELP},
            },
            "required": ["query"],
            "additionalProperties": False,
        }
        search_output = {
            "type": "object",
            "properties": {
                "index": {"type": "string"},
                "method": {"type": "string"},
                "query": {"type": "string"},
                "k": {"type": "integer"},
                "passages": {"type": "array", "items": PASSAGE_SCHEMA},
            },
            "required": ["index", "method", "query", "k", "passages"],
        }
        specs = [
            ToolSpec(
                self.name, self.description, search_input, search_output, True, False, self.search
            )
        ]
        if self.writable:
            specs += self._write_tools()
        return specs

    def _write_tools(self) -> list[ToolSpec]:
        ids = {"type": "array", "items": {"type": "string"}}
        document = {
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1},
                "id": {"type": "string", "description": "document id (default: from the text)"},
                "metadata": {"type": "object", "description": "e.g. title, source"},
            },
            "required": ["text"],
            "additionalProperties": False,
        }
        insert_input = {
            "type": "object",
            "properties": {"documents": {"type": "array", "items": document, "minItems": 1}},
            "required": ["documents"],
            "additionalProperties": False,
        }
        insert_output = {
            "type": "object",
            "properties": {
                "index": {"type": "string"},
                "inserted": ids,
                "skipped": {"type": "integer"},
            },
            "required": ["index", "inserted", "skipped"],
        }
        delete_input = {
            "type": "object",
            "properties": {"doc_ids": {**ids, "minItems": 1}},
            "required": ["doc_ids"],
            "additionalProperties": False,
        }
        delete_output = {
            "type": "object",
            "properties": {"index": {"type": "string"}, "deleted": ids, "not_found": ids},
            "required": ["index", "deleted", "not_found"],
        }
        return [
            ToolSpec(
                f"{self.name}_insert",
                f"Add documents to the index of {self.name} and save it; documents already "
                "indexed (same id) are skipped. Returns the ids added.",
                insert_input,
                insert_output,
                False,
                False,
                self.insert,
            ),
            ToolSpec(
                f"{self.name}_delete",
                f"Remove documents (by document id, as {self.name} returns them) and "
                "everything derived from them from the index, and save it.",
                delete_input,
                delete_output,
                False,
                True,
                self.delete,
            ),
        ]
