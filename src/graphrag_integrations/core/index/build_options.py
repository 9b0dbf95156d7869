"""The options every ``from_documents`` shares, typed once: :class:`DocumentBuildOptions`.

An index's ``from_documents`` takes the shared options as
``**options: Unpack[DocumentBuildOptions]`` (PEP 692) next to its own named arguments
(``embedding``, ``index_params``, ``query_params``, ``preset``, ``llm``...), or types its
constructor's arguments too, in one TypedDict: :class:`IndexOptions` (``index_params``,
``query_params``, ``preset``) and :class:`EmbeddingIndexOptions` (with ``embedding`` and
``show_progress``), generic in the two parameter classes, which a method extends with its
own keys. Either way mypy and IDEs check and complete every key, and the call forwards them in
one line to :func:`~graphrag_integrations.core.index.base.build_from_documents`.
:func:`named_parameters` is the signature with those keys spelled out (what the API contract
checks: no argument hidden in an untyped ``**kwargs``).

Examples
--------
>>> from graphrag_integrations.baselines.bm25 import BM25Retriever
>>> names = list(named_parameters(BM25Retriever.from_documents))
>>> names[0], {"index_params", "query_params", "preset", "checkpoint_dir"} <= set(names)
('documents', True)
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Container, Mapping
from typing import Any, Generic, TypeVar, get_args, get_origin

from typing_extensions import TypedDict, Unpack, is_typeddict

from graphrag_integrations.core.index.building import CheckpointDir, DocumentPaths
from graphrag_integrations.core.index.executors import ExecutorSpec
from graphrag_integrations.core.text.documents import DecodeErrors, LoadReport

__all__ = [
    "DocumentBuildOptions",
    "DocumentOptions",
    "EmbeddingIndexOptions",
    "IndexOptions",
    "check_options",
    "named_parameters",
]

IndexParamsT = TypeVar("IndexParamsT")
QueryParamsT = TypeVar("QueryParamsT")

#: ``Unpack`` of typing_extensions and, on Python >= 3.11, of typing.
_UNPACK = (Unpack, getattr(typing, "Unpack", Unpack))


class DocumentOptions(TypedDict, total=False):
    """How ``from_documents`` reads and cuts its documents: the keys
    :func:`~graphrag_integrations.core.index.base.build_from_documents` takes.

    A key left out has the default below.

    Parameters
    ----------
    splitter : splitter or None, optional
        How documents are cut: a LangChain text splitter, a LlamaIndex node parser or a
        :class:`~graphrag_integrations.core.text.chunking.TokenChunker`; ``None``: each
        document whole. Default: the class's ``default_splitter()`` (see
        :func:`~graphrag_integrations.core.index.building.pop_splitter`). It stays the
        index's splitter for later ``insert`` / ``upsert`` calls.
    chunking : bool or None, optional
        ``False`` (or ``None``): no chunking; default ``True`` (the splitter's).
    errors : {"strict", "replace", "ignore", "skip"}, optional
        Undecodable files (default ``"strict"``: abort; ``"skip"``: leave them out, logged
        and counted); see :func:`~graphrag_integrations.core.text.documents.load_documents`.
    report : LoadReport, optional
        Receives the files skipped with ``errors="skip"``.
    path : str, PathLike or sequence of them, optional
        Files or folders to read as well (strings here are paths).
    pattern : str, optional
        Glob of the files a folder walk reads (default: text and Markdown files).
    """

    splitter: Any
    chunking: bool | None
    errors: DecodeErrors
    report: LoadReport | None
    path: DocumentPaths
    pattern: str | None


class DocumentBuildOptions(DocumentOptions, total=False):
    """The keyword options of every index's ``from_documents`` besides its own arguments:
    the :class:`DocumentOptions` and how the build runs (keys the checkpoint and executor
    wrappers of ``from_documents`` take; a key left out has the default below).

    Parameters
    ----------
    checkpoint_dir : str or PathLike, optional
        Build in batches and save after each, so a killed build resumes
        (:mod:`~graphrag_integrations.core.index.checkpoint`); default: no checkpoint.
    checkpoint_every : int, optional
        Documents per checkpointed batch (needs ``checkpoint_dir``; default 500).
    executor : str or Executor, optional
        Who runs the per-passage work: ``None`` / ``"local"`` (default), ``"ray"`` or an
        :class:`~graphrag_integrations.core.index.executors.Executor`
        (:mod:`~graphrag_integrations.core.index.executors`; an index whose build is not split
        into ``preparer()`` / ``merge()`` takes ``"local"`` only).
    """

    checkpoint_dir: CheckpointDir
    checkpoint_every: int | None
    executor: ExecutorSpec


class IndexOptions(DocumentBuildOptions, Generic[IndexParamsT, QueryParamsT], total=False):
    """Every keyword of a ``from_documents`` that takes its constructor's arguments as
    options too: the :class:`DocumentBuildOptions` and the parameters every index takes
    (a key left out has the constructor's default).

    Parameters
    ----------
    index_params : IndexParamsT or None, optional
        The index-time parameters (default: the preset's).
    query_params : QueryParamsT or None, optional
        The query-time parameters (default: the preset's).
    preset : str or None, optional
        A named preset of both (not together with a params object).
    """

    index_params: IndexParamsT | None
    query_params: QueryParamsT | None
    preset: str | None


class EmbeddingIndexOptions(IndexOptions[IndexParamsT, QueryParamsT], total=False):
    """The :class:`IndexOptions` of an index that embeds (a key left out has the
    constructor's default).

    Parameters
    ----------
    embedding : Any, optional
        What :func:`~graphrag_integrations.core.encoders.embeddings.as_embedder` takes: a
        sentence-transformers name or path, an ``Embedder``, a LangChain or LlamaIndex
        embedding; ``None``: the offline default (all-MiniLM-L6-v2).
    show_progress : bool or None, optional
        Progress bars: forced, off, or ``None`` (shown for a large build; see
        :mod:`~graphrag_integrations.core.progress`).
    """

    embedding: Any
    show_progress: bool | None


def check_options(function: str, options: Mapping[str, Any], accepted: Container[str]) -> None:
    """Refuse a key of ``options`` that is not ``accepted`` (the keys of a TypedDict's
    ``__annotations__``, or the :func:`named_parameters` of a function), as Python refuses an
    unknown keyword argument of ``function``.

    Raises
    ------
    TypeError
        Naming ``function`` and the first unknown key.

    Examples
    --------
    >>> keys = DocumentOptions.__annotations__
    >>> check_options("X.from_documents()", {"errors": "skip"}, keys)
    >>> check_options("X.from_documents()", {"eror": "skip"}, keys)
    Traceback (most recent call last):
    ...
    TypeError: X.from_documents() got an unexpected keyword argument 'eror'
    """
    unknown = [name for name in options if name not in accepted]
    if unknown:
        raise TypeError(f"{function} got an unexpected keyword argument {unknown[0]!r}")


def named_parameters(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The parameters of ``function`` by name, a ``**name: Unpack[SomeTypedDict]`` replaced by
    the keyword-only parameters it types (one per key, annotated as in the TypedDict, no
    default: a key left out takes the callee's).

    Any other ``**kwargs`` stays as it is (a ``VAR_KEYWORD`` parameter): arguments a reader
    of the signature cannot see.

    Examples
    --------
    >>> def build(documents: Any, *, preset: str | None = None, **options: Any) -> None: ...
    >>> [p.kind.name for p in named_parameters(build).values()]
    ['POSITIONAL_OR_KEYWORD', 'KEYWORD_ONLY', 'VAR_KEYWORD']
    """
    parameters: dict[str, inspect.Parameter] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        typed = _unpacked(function, parameter)
        if typed is None:
            parameters[name] = parameter
            continue
        names = _type_arguments(typed)
        for key, annotation in (get_origin(typed) or typed).__annotations__.items():
            text = getattr(annotation, "__forward_arg__", annotation)  # a string, as inspect's
            if isinstance(text, str) and names:  # a generic's type variables, by their values
                text = re.sub(r"\w+", functools.partial(_renamed, names), text)
            keyword = inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, annotation=text)
            parameters[key] = keyword
    return parameters


def _unpacked(function: Callable[..., Any], parameter: inspect.Parameter) -> Any:
    """The TypedDict of ``**name: Unpack[TypedDict]`` (a generic one with its type
    arguments, ``Options[A, B]``), else ``None``."""
    if parameter.kind is not inspect.Parameter.VAR_KEYWORD:
        return None
    annotation = parameter.annotation
    if isinstance(annotation, str):  # postponed (PEP 563): evaluated as inspect does it
        namespace = getattr(inspect.unwrap(function), "__globals__", {})
        try:
            annotation = eval(annotation, namespace)
        except NameError:
            return None
    if get_origin(annotation) not in _UNPACK:
        return None
    (typed,) = get_args(annotation)
    return typed if is_typeddict(get_origin(typed) or typed) else None


def _type_arguments(typed: Any) -> dict[str, str]:
    """The names of the type arguments of a generic TypedDict by its type variables' names:
    those of ``Options[A, B]`` itself, else of the generic it extends
    (``class Sub(Options[A, B])``)."""
    names: dict[str, str] = {}
    origin = get_origin(typed) or typed
    for generic in (*getattr(origin, "__orig_bases__", ()), typed):
        variables, arguments = getattr(get_origin(generic), "__parameters__", ()), get_args(generic)
        if len(variables) != len(arguments):  # not a parameterised generic TypedDict
            continue
        for variable, argument in zip(variables, arguments, strict=True):
            if not isinstance(argument, TypeVar):
                names[variable.__name__] = getattr(argument, "__name__", str(argument))
    return names


def _renamed(names: Mapping[str, str], word: re.Match[str]) -> str:
    return names.get(word[0], word[0])
