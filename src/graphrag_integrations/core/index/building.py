"""The module-level helpers the indexes build with: chunking options, query check, insert rules.

What :class:`~graphrag_integrations.core.index.base.BaseIndex` and every method's
``from_documents`` / ``from_passages`` / ``insert`` share (the rules are in the
:mod:`~graphrag_integrations.core.index.base` module notes): :func:`pop_splitter` /
:func:`chosen_splitter` (the ``splitter=`` / ``chunking=`` options), :func:`check_query`,
:func:`drop_indexed` and :func:`document_ids` (the ``insert`` rule and its result),
:func:`build_from_passages`; and the type aliases of the typed ``from_documents`` signatures.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeAlias, TypeVar

from graphrag_integrations.core.text.chunking import check_splitter
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError, InvalidArgumentError

PassageT = TypeVar("PassageT", bound=Passage)
#: ``path=`` of ``from_documents`` (files or folders to read, see ``load_documents``).
DocumentPaths: TypeAlias = "str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None"
#: ``checkpoint_dir=`` of ``from_documents`` (see
#: :mod:`~graphrag_integrations.core.index.checkpoint`).
CheckpointDir: TypeAlias = "str | os.PathLike[str] | None"

logger = logging.getLogger(__name__)

#: Options of ``from_documents`` / ``insert`` / ``upsert`` that choose how documents are cut
#: (see :func:`pop_splitter`).
CHUNKING_OPTIONS: tuple[str, ...] = ("chunking", "splitter", "chunker")


class _ClassDefault:
    """Marker: "the index's default splitter" (distinct from ``None``, no chunking)."""

    def __repr__(self) -> str:
        return "DEFAULT_SPLITTER"


#: Passed as ``default`` to :func:`pop_splitter`: the class's :meth:`BaseIndex.default_splitter`.
DEFAULT_SPLITTER: Any = _ClassDefault()


def pop_splitter(options: dict[str, Any], default: Any = DEFAULT_SPLITTER) -> Any:
    """Remove the :data:`CHUNKING_OPTIONS` from ``options`` and return the splitter they name.

    ``chunking=True`` is :data:`DEFAULT_SPLITTER` (the class default); ``chunking=False`` /
    ``None`` and ``splitter=None`` (or ``chunker=None``) mean no chunking (``None``);
    ``splitter=X`` / ``chunker=X`` is ``X`` (checked by
    :func:`~graphrag_integrations.core.text.chunking.check_splitter`). Without any of them:
    ``default``.

    Raises
    ------
    InvalidArgumentError
        Several of them at once, or ``chunking`` not a bool or ``None``.
    TypeError
        A splitter that cannot cut documents.

    Examples
    --------
    >>> options = {"chunking": False, "errors": "skip"}
    >>> pop_splitter(options), options
    (None, {'errors': 'skip'})
    >>> pop_splitter({}, default="mine")
    'mine'
    """
    given = [name for name in CHUNKING_OPTIONS if name in options]
    if len(given) > 1:
        raise InvalidArgumentError(f"pass only one of {', '.join(given)}")
    if not given:
        return default
    name = given[0]
    value = options.pop(name)
    if name == "chunking":
        if value is True:
            return DEFAULT_SPLITTER
        if value is False or value is None:
            return None
        raise InvalidArgumentError(
            f"chunking must be True, False or None, got {value!r}; pass a splitter as splitter=..."
        )
    return None if value is None else check_splitter(value)


def chosen_splitter(splitter: Any = DEFAULT_SPLITTER, chunking: bool | None = True) -> Any:
    """The splitter of ``from_documents(splitter=..., chunking=...)`` (see :func:`pop_splitter`;
    the defaults mean the class's splitter).

    Examples
    --------
    >>> chosen_splitter(chunking=False) is None, chosen_splitter() is DEFAULT_SPLITTER
    (True, True)
    """
    options: dict[str, Any] = {}
    if splitter is not DEFAULT_SPLITTER:
        options["splitter"] = splitter
    if chunking is not True:
        options["chunking"] = chunking
    return pop_splitter(options)


def drop_indexed(passages: Sequence[PassageT], indexed_doc_ids: Collection[str]) -> list[PassageT]:
    """The passages whose document is not indexed yet (the ``insert`` rule).

    The skipped documents are named in one warning.

    Parameters
    ----------
    passages : sequence of Passage
        Passages of the documents being inserted.
    indexed_doc_ids : collection of str
        Ids of the documents the index holds.

    Examples
    --------
    >>> ps = [Passage("p1", "Old text.", "a"), Passage("p2", "New text.", "b")]
    >>> [p.id for p in drop_indexed(ps, {"a"})]
    ['p2']
    """
    kept = [p for p in passages if p.doc_id not in indexed_doc_ids]
    if len(kept) < len(passages):
        skipped = sorted({p.doc_id for p in passages if p.doc_id in indexed_doc_ids})
        logger.warning(
            "insert: %d document(s) already indexed, skipped (upsert replaces them): %s",
            len(skipped),
            ", ".join(skipped),
        )
    return kept


def document_ids(passages: Iterable[Passage]) -> list[str]:
    """The distinct ``doc_id`` of ``passages``, in order (what ``insert`` returns).

    Examples
    --------
    >>> document_ids([Passage("p1", "x", "a"), Passage("p2", "y", "b"), Passage("p3", "z", "a")])
    ['a', 'b']
    """
    return list(dict.fromkeys(p.doc_id for p in passages))


def build_from_passages(cls: Callable[..., Any], passages: Sequence[Passage], **kwargs: Any) -> Any:
    """``cls(**kwargs)`` filled with ``passages`` by its ``add_passages``: the ``from_passages`` of
    the indexes built incrementally (Clue, KG-Translator, QCG).

    Raises
    ------
    EmptyCorpusError
        When ``passages`` is empty.
    """
    if not passages:
        raise EmptyCorpusError("no non-empty passages to index")
    index = cls(**kwargs)
    index.add_passages(passages)
    return index
