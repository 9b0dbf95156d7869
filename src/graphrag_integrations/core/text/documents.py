"""Source documents: accept what users have, give every document a stable id.

:func:`load_documents` turns plain strings, :class:`SourceDocument`, LangChain ``Document``,
LlamaIndex ``Document``/``TextNode``, mappings with a ``"text"`` key, and files or folders
(given as :class:`pathlib.Path`, or as strings through ``path=`` / :func:`from_path`) into one
list of :class:`SourceDocument`. A plain ``str`` in ``inputs`` is document *text*, and never
loaded as a path; but a string that looks like a path (:func:`looks_like_path`: one word
naming an existing file or folder, or shaped like a path) is refused with a one-line
:class:`~graphrag_integrations.errors.DocumentLoadError` saying to pass ``Path(...)``, so
``from_documents("my_docs/")`` never indexes the folder's name as a passage.

Ids are a content hash of the text unless the user (or the framework document) supplies one.
Empty documents are dropped and exact duplicates (same id, same text) are kept once; both are
logged. Whether an empty result is an error is the caller's decision (see
:func:`require_nonempty`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphrag_integrations.errors import DocumentLoadError, EmptyCorpusError

logger = logging.getLogger(__name__)

#: How undecodable bytes in a file are handled: ``"strict"`` raises
#: :class:`~graphrag_integrations.errors.DocumentLoadError`, ``"replace"``/``"ignore"`` decode
#: anyway (logged), ``"skip"`` leaves the file out (logged, and listed in a :class:`LoadReport`).
DecodeErrors = Literal["strict", "replace", "ignore", "skip"]
_DECODE_ERRORS: tuple[str, ...] = ("strict", "replace", "ignore", "skip")

#: Keyword arguments of :func:`load_documents` that a ``from_documents``/``insert`` forwards
#: unchanged (see :func:`pop_load_options`).
LOAD_OPTIONS: tuple[str, ...] = ("path", "pattern", "recursive", "encoding", "errors", "report")

#: File suffixes a folder walk loads when no ``pattern`` is given.
DEFAULT_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".rst")

#: Files read as JSON records (a record, a list of records, or one record per line).
JSON_SUFFIXES: tuple[str, ...] = (".json", ".jsonl")

#: Suffixes that make a one-word string look like a file name (:func:`looks_like_path`).
PATH_SUFFIXES: tuple[str, ...] = (
    *DEFAULT_SUFFIXES,
    *JSON_SUFFIXES,
    ".pdf",
    ".html",
    ".htm",
    ".csv",
    ".docx",
)

#: Keys holding a record's text, in order of preference.
TEXT_KEYS: tuple[str, ...] = ("text", "page_content", "content")

#: Keys holding a record's id, in order of preference.
ID_KEYS: tuple[str, ...] = ("id", "doc_id", "id_")


def content_id(*parts: str) -> str:
    """Stable 16-hex-digit id from the SHA-256 of ``parts`` (joined by a NUL byte).

    Examples
    --------
    >>> content_id("a", "b") == content_id("a", "b")
    True
    >>> content_id("a", "b") == content_id("ab")
    False
    >>> len(content_id("hello"))
    16
    """
    h = hashlib.sha256("\x00".join(parts).encode("utf-8"))
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class SourceDocument:
    """A document as given by the user, before chunking.

    Parameters
    ----------
    text : str
        The full text.
    id : str
        Defaults to :func:`content_id` of the text; an id supplied by the user (or by the
        framework document) wins, so ``delete(doc_id)`` can use the user's own ids.
    metadata : Mapping[str, Any]
        Carried over to every passage cut from the document (file documents get ``source``
        and ``file_name``).

    Examples
    --------
    >>> doc = SourceDocument("Paris is the capital of France.")
    >>> doc.id == content_id("Paris is the capital of France.")
    True
    >>> SourceDocument("text", id="my-id").id
    'my-id'
    """

    text: str
    id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise DocumentLoadError(f"document text must be a str, got {type(self.text).__name__}")
        if not self.id:
            object.__setattr__(self, "id", content_id(self.text))


@dataclass
class LoadReport:
    """What a load left out: pass one as ``report=`` and inspect it afterwards.

    Attributes
    ----------
    skipped : list of (str, str)
        ``(path, reason)`` of every file left out with ``errors="skip"``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "good.txt").write_text("fine", encoding="utf-8")
    ...     _ = (Path(d) / "bad.txt").write_bytes(b"caf\\xe9")
    ...     report = LoadReport()
    ...     docs = load_documents(path=d, errors="skip", report=report)
    >>> [doc.metadata["file_name"] for doc in docs], report.count
    (['good.txt'], 1)
    """

    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Number of files skipped."""
        return len(self.skipped)


class _UndecodableFileError(DocumentLoadError):
    """A file with bytes that are not valid in its encoding (skippable with errors="skip")."""


def pop_load_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Remove the :data:`LOAD_OPTIONS` from ``kwargs`` and return them.

    A ``from_documents(documents, **kwargs)`` calls
    ``load_documents(documents, **pop_load_options(kwargs))`` and passes the rest to its
    constructor, so ``errors="skip"`` and friends reach the loader unchanged.

    Examples
    --------
    >>> kwargs = {"errors": "skip", "k": 3}
    >>> pop_load_options(kwargs), kwargs
    ({'errors': 'skip'}, {'k': 3})
    """
    return {name: kwargs.pop(name) for name in LOAD_OPTIONS if name in kwargs}


def _is_path(obj: Any) -> bool:
    return isinstance(obj, os.PathLike)


def looks_like_path(text: str) -> bool:
    """Whether a string given as document text is almost certainly meant as a path.

    The rule: a string without whitespace that names an existing file or folder, or that
    ends with a path separator (``"docs/"``), starts like a path (``"/"``, ``"./"``,
    ``"../"``, ``"~/"``), or ends in a document suffix (:data:`PATH_SUFFIXES`, e.g.
    ``"notes.txt"``). Any text with a space or a line break is text.

    Examples
    --------
    >>> looks_like_path("my_docs/"), looks_like_path("no_such_file.txt")
    (True, True)
    >>> looks_like_path("TCP/IP"), looks_like_path("Paris is in France.")
    (False, False)
    """
    if not text or any(c.isspace() for c in text):
        return False
    separators = ("/", os.sep, *((os.altsep,) if os.altsep else ()))
    if text.endswith(separators) or text.startswith(("/", "./", "../", "~/", "~" + os.sep)):
        return True
    if Path(text).suffix.lower() in PATH_SUFFIXES:
        return True
    try:
        return Path(text).expanduser().exists()
    except (OSError, ValueError, RuntimeError):  # too long a name, no home directory
        return False


def _refuse_path_text(text: str) -> None:
    """Raise :class:`DocumentLoadError` for a document text that :func:`looks_like_path`."""
    if not looks_like_path(text):
        return
    try:
        target = Path(text).expanduser()
        found = "folder" if target.is_dir() else "file" if target.exists() else ""
    except (OSError, ValueError, RuntimeError):
        found = ""
    what = f"names an existing {found}" if found else "looks like a file path (none exists)"
    raise DocumentLoadError(
        f"the document text {text!r} {what}: a str is indexed as text, so pass "
        f"Path({text!r}) to load files, or SourceDocument({text!r}) to index the string itself"
    )


def _is_langchain_document(obj: Any) -> bool:
    return hasattr(obj, "page_content") and hasattr(obj, "metadata")


def _is_llama_index_node(obj: Any) -> bool:
    return hasattr(obj, "get_content") and hasattr(obj, "metadata") and hasattr(obj, "id_")


def _from_mapping(record: Mapping[str, Any], *, where: str) -> SourceDocument:
    """A record such as ``{"text": ..., "id": ..., "title": ...}`` (other keys -> metadata)."""
    text_key = next((k for k in TEXT_KEYS if k in record), None)
    if text_key is None:
        raise DocumentLoadError(
            f"{where}: a document mapping needs one of the keys {list(TEXT_KEYS)}; "
            f"got keys {sorted(map(str, record))}"
        )
    text = record[text_key]
    if not isinstance(text, str):
        raise DocumentLoadError(
            f"{where}: {text_key!r} must be a string, got {type(text).__name__}"
        )
    doc_id = next((record[k] for k in ID_KEYS if record.get(k) not in (None, "")), "")
    meta: dict[str, Any] = {
        k: v for k, v in record.items() if k != text_key and k not in ID_KEYS and k != "metadata"
    }
    nested = record.get("metadata")
    if isinstance(nested, Mapping):
        meta.update(nested)
    return SourceDocument(text=text, id=str(doc_id), metadata=meta)


def to_source_document(obj: Any) -> SourceDocument:
    """Convert one non-file input into a :class:`SourceDocument`.

    Parameters
    ----------
    obj : str, SourceDocument, Mapping, LangChain Document or LlamaIndex Document/TextNode
        A ``str`` is the document text. A mapping needs a ``"text"`` (or ``"page_content"``,
        ``"content"``) key; ``"id"``/``"doc_id"`` is its id and the other keys (plus a nested
        ``"metadata"`` mapping) become metadata. A LangChain document keeps its ``id`` (or
        ``metadata["doc_id"]``); a LlamaIndex node uses its ``ref_doc_id`` when present (so all
        nodes of one source document share that id, and ``metadata["node_id"]`` keeps the
        node's own id), else its ``id_``.

    Returns
    -------
    SourceDocument

    Raises
    ------
    DocumentLoadError
        For paths (use :func:`load_documents` or :func:`from_path`, which can expand folders),
        bytes, and any other type.

    Examples
    --------
    >>> to_source_document("Some text").text
    'Some text'
    >>> to_source_document({"text": "Body", "id": "d1", "title": "T"})
    SourceDocument(text='Body', id='d1', metadata={'title': 'T'})
    """
    if isinstance(obj, SourceDocument):
        return obj
    if isinstance(obj, str):
        return SourceDocument(text=obj)
    if _is_path(obj):
        raise DocumentLoadError(
            f"{obj!s} is a path: use load_documents(...) or from_path(...) to read files"
        )
    if isinstance(obj, (bytes, bytearray)):
        raise DocumentLoadError("got bytes: decode them to str first, or pass a Path to a file")
    if isinstance(obj, Mapping):
        return _from_mapping(obj, where="mapping")
    if _is_langchain_document(obj):
        meta = dict(obj.metadata or {})
        doc_id = getattr(obj, "id", None) or meta.get("doc_id") or ""
        return SourceDocument(text=str(obj.page_content), id=str(doc_id), metadata=meta)
    if _is_llama_index_node(obj):
        meta = dict(obj.metadata or {})
        ref_doc_id = getattr(obj, "ref_doc_id", None)
        if ref_doc_id:
            meta.setdefault("node_id", obj.id_)
        doc_id = ref_doc_id or obj.id_ or ""
        return SourceDocument(text=str(obj.get_content()), id=str(doc_id), metadata=meta)
    raise DocumentLoadError(
        f"cannot turn a {type(obj).__name__} into a document; expected str, SourceDocument, "
        "a mapping with a 'text' key, a LangChain or LlamaIndex document, or a pathlib.Path"
    )


def _decode(path: Path, encoding: str, errors: DecodeErrors) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentLoadError(f"{path}: no such file") from exc
    except OSError as exc:
        raise DocumentLoadError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        text = data.decode(codec, errors="strict")
    except UnicodeDecodeError as exc:
        if errors in ("strict", "skip"):
            raise _UndecodableFileError(
                f"{path}: not valid {encoding} (byte {exc.start}: {exc.reason}); pass "
                "errors='replace' to decode with replacement characters, errors='skip' to leave "
                "such files out, or the right encoding"
            ) from exc
        logger.warning(
            "%s: not valid %s (byte %d); decoding with errors=%r", path, encoding, exc.start, errors
        )
        text = data.decode(codec, errors=errors)
    except LookupError as exc:
        raise DocumentLoadError(f"{path}: unknown encoding {encoding!r}") from exc
    # Same newline translation as text-mode open(); offsets refer to this text.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _file_metadata(path: Path) -> dict[str, Any]:
    return {"source": str(path), "file_name": path.name}


def _json_records(path: Path, text: str) -> Iterator[tuple[Any, str]]:
    """Yield ``(record, location)`` from a ``.json`` or ``.jsonl`` file."""
    if path.suffix.lower() == ".jsonl":
        for line_no, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    yield json.loads(line), f"{path}:{line_no}"
                except json.JSONDecodeError as exc:
                    raise DocumentLoadError(f"{path}:{line_no}: invalid JSON ({exc.msg})") from exc
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentLoadError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})"
        ) from exc
    if isinstance(data, list):
        for i, record in enumerate(data):
            yield record, f"{path}[{i}]"
    else:
        yield data, str(path)


def read_file(
    path: str | os.PathLike[str],
    *,
    encoding: str = "utf-8",
    errors: DecodeErrors = "strict",
) -> list[SourceDocument]:
    """Read one file into documents.

    ``.json`` files hold a string, a record (``{"text": ..., "id": ..., ...}``) or a list of
    them; ``.jsonl`` files one per line. Any other file is one plain-text document.
    Metadata gets ``source`` (the path) and ``file_name``; JSON records also ``record_index``.

    Parameters
    ----------
    path : str or PathLike
        The file.
    encoding : str
        Text encoding; a UTF-8 byte-order mark is dropped.
    errors : {"strict", "replace", "ignore", "skip"}
        ``"strict"`` raises on undecodable bytes; ``"replace"``/``"ignore"`` decode anyway
        (logged); ``"skip"`` also raises here (a single file has nothing to fall back on):
        :func:`from_path` and :func:`load_documents` catch it and leave the file out.

    Raises
    ------
    DocumentLoadError
        Missing or unreadable file, undecodable bytes (``errors="strict"``/``"skip"``),
        invalid JSON, an unknown ``errors`` value.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "a.txt"
    ...     _ = p.write_text("Hello", encoding="utf-8")
    ...     [doc.text for doc in read_file(p)]
    ['Hello']
    """
    path = Path(path)
    _check_errors(errors)
    if not path.is_file():
        what = "is not a file" if path.exists() else "no such file"
        raise DocumentLoadError(f"{path}: {what}")
    text = _decode(path, encoding, errors)
    base = _file_metadata(path)
    if path.suffix.lower() not in JSON_SUFFIXES:
        return [SourceDocument(text=text, metadata=base)]
    docs: list[SourceDocument] = []
    for index, (record, where) in enumerate(_json_records(path, text)):
        if isinstance(record, str):
            doc = SourceDocument(text=record)
        elif isinstance(record, Mapping):
            doc = _from_mapping(record, where=where)
        else:
            raise DocumentLoadError(
                f"{where}: expected a string or an object, got {type(record).__name__}"
            )
        meta = {**base, "record_index": index, **doc.metadata}
        docs.append(SourceDocument(text=doc.text, id=doc.id, metadata=meta))
    return docs


def _check_errors(errors: str) -> None:
    if errors not in _DECODE_ERRORS:
        raise DocumentLoadError(f"errors must be one of {list(_DECODE_ERRORS)}, got {errors!r}")


def _read_or_skip(
    path: Path, encoding: str, errors: DecodeErrors, report: LoadReport | None
) -> list[SourceDocument]:
    """:func:`read_file`, but with ``errors="skip"`` an undecodable file is logged and left out."""
    try:
        return read_file(path, encoding=encoding, errors=errors)
    except _UndecodableFileError as exc:
        if errors != "skip":
            raise
        logger.warning("skipping %s", exc)
        if report is not None:
            report.skipped.append((str(path), str(exc)))
        return []


def _walk(folder: Path, pattern: str | None, recursive: bool) -> list[Path]:
    if pattern is not None:
        candidates = folder.rglob(pattern) if recursive else folder.glob(pattern)
    else:
        candidates = folder.rglob("*") if recursive else folder.glob("*")
    files = []
    for p in candidates:
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue  # hidden files and folders (.git, .DS_Store...)
        if not p.is_file():
            continue
        if pattern is None and p.suffix.lower() not in DEFAULT_SUFFIXES:
            continue
        files.append(p)
    return sorted(files)


def from_path(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    recursive: bool = True,
    encoding: str = "utf-8",
    errors: DecodeErrors = "strict",
    report: LoadReport | None = None,
) -> list[SourceDocument]:
    """Read a file, or every matching file under a folder, into documents.

    Parameters
    ----------
    path : str or PathLike
        A file (read whatever its suffix, see :func:`read_file`) or a folder.
    pattern : str, optional
        Glob for files in a folder (``"*.json"``, ``"notes_*.md"``). ``None`` loads the
        suffixes in :data:`DEFAULT_SUFFIXES` (``.txt``, ``.md``, ``.markdown``, ``.rst``).
        Hidden files and folders (name starting with ``.``) are skipped.
    recursive : bool
        Also look in sub-folders.
    encoding, errors
        See :func:`read_file`; with ``errors="skip"`` an undecodable file is left out with a
        warning (and a summary warning of how many), the others are still read.
    report : LoadReport, optional
        Receives the skipped files.

    Returns
    -------
    list of SourceDocument
        In sorted path order; empty (with a warning) when a folder holds no matching file.
        Empty files are included: :func:`load_documents` drops empties and duplicates.

    Raises
    ------
    DocumentLoadError
        Missing path, or any file that cannot be read (the message names it).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.md").write_text("# A", encoding="utf-8")
    ...     _ = (Path(d) / "skip.csv").write_text("x,y", encoding="utf-8")
    ...     [doc.metadata["file_name"] for doc in from_path(d)]
    ['a.md']
    """
    root = Path(path)
    _check_errors(errors)
    if not root.exists():
        raise DocumentLoadError(f"{root}: no such file or folder")
    local = LoadReport()
    files = [root] if not root.is_dir() else _walk(root, pattern, recursive)
    if root.is_dir() and not files:
        wanted = pattern if pattern is not None else ", ".join(DEFAULT_SUFFIXES)
        logger.warning("%s: no files matching %s", root, wanted)
    docs: list[SourceDocument] = []
    for file in files:
        docs.extend(_read_or_skip(file, encoding, errors, local))
    if local.skipped:
        logger.warning(
            "%s: skipped %d of %d file(s) that are not valid %s (errors='skip')",
            root,
            local.count,
            len(files),
            encoding,
        )
        if report is not None:
            report.skipped.extend(local.skipped)
    return docs


def _iter_inputs(inputs: Any) -> Iterable[Any]:
    single = (
        isinstance(inputs, (str, bytes, bytearray, SourceDocument, Mapping))
        or _is_path(inputs)
        or _is_langchain_document(inputs)
        or _is_llama_index_node(inputs)
    )
    if single:
        return [inputs]
    if isinstance(inputs, Iterable):
        return inputs
    return [inputs]  # to_source_document names the bad type


def _clean(docs: Iterable[SourceDocument]) -> list[SourceDocument]:
    """Drop empty documents and exact duplicates, logging each."""
    seen: set[tuple[str, str]] = set()
    ids: set[str] = set()
    out: list[SourceDocument] = []
    for doc in docs:
        if not doc.text.strip():
            logger.warning(
                "dropping empty document %s (source: %s)", doc.id, doc.metadata.get("source", "-")
            )
            continue
        key = (doc.id, content_id(doc.text))
        if key in seen:
            logger.info("dropping duplicate document %s (same id and text seen before)", doc.id)
            continue
        if doc.id in ids:
            logger.info(
                "documents with id %s differ in text; keeping both as parts of that document",
                doc.id,
            )
        seen.add(key)
        ids.add(doc.id)
        out.append(doc)
    return out


def load_documents(
    inputs: Iterable[Any] | Any = None,
    *,
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    pattern: str | None = None,
    recursive: bool = True,
    encoding: str = "utf-8",
    errors: DecodeErrors = "strict",
    report: LoadReport | None = None,
) -> list[SourceDocument]:
    """Normalise ``inputs`` (and/or files under ``path``) into a list of :class:`SourceDocument`.

    Parameters
    ----------
    inputs : object or iterable of objects, optional
        Any mix of ``str`` (document text; one that :func:`looks_like_path` is refused),
        :class:`SourceDocument`, mappings with a
        ``"text"`` key, LangChain ``Document``, LlamaIndex ``Document``/``TextNode`` and
        :class:`pathlib.Path` (a file or a folder, see :func:`from_path`). A single object
        is accepted as well as an iterable.
    path : str, PathLike or sequence of them, optional
        Files or folders to read; strings here are paths.
    pattern, recursive, encoding, errors
        See :func:`from_path`; they apply to every path. ``errors`` is one of ``"strict"``
        (default: an undecodable file aborts the load), ``"replace"``, ``"ignore"`` or
        ``"skip"`` (leave such files out, log each and a count).
    report : LoadReport, optional
        Receives the files skipped with ``errors="skip"``.

    Returns
    -------
    list of SourceDocument
        In input order (``inputs`` first, then ``path``), without empty documents and exact
        duplicates (same id and text), both dropped with a log line. Documents sharing an id
        but not their text (e.g. LlamaIndex nodes of one source document) are all kept.
        The list may be empty: see :func:`require_nonempty`.

    Raises
    ------
    DocumentLoadError
        Unsupported input type, missing path, unreadable or undecodable file, a ``str`` that
        looks like a path (pass ``Path(...)``).

    Examples
    --------
    >>> docs = load_documents(["Alpha text.", "Beta text.", "Alpha text.", "  "])
    >>> [d.text for d in docs]
    ['Alpha text.', 'Beta text.']
    >>> load_documents("One document").pop().text
    'One document'
    """
    _check_errors(errors)
    docs: list[SourceDocument] = []
    if inputs is not None:
        for obj in _iter_inputs(inputs):
            if _is_path(obj):
                docs.extend(
                    from_path(
                        obj,
                        pattern=pattern,
                        recursive=recursive,
                        encoding=encoding,
                        errors=errors,
                        report=report,
                    )
                )
            else:
                if isinstance(obj, str):
                    _refuse_path_text(obj)
                docs.append(to_source_document(obj))
    if path is not None:
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        for p in paths:
            docs.extend(
                from_path(
                    p,
                    pattern=pattern,
                    recursive=recursive,
                    encoding=encoding,
                    errors=errors,
                    report=report,
                )
            )
    return _clean(docs)


def require_nonempty(docs: Sequence[SourceDocument]) -> Sequence[SourceDocument]:
    """Return ``docs`` unchanged, or raise :class:`EmptyCorpusError` if it is empty.

    Examples
    --------
    >>> len(require_nonempty(load_documents(["text"])))
    1
    >>> require_nonempty(load_documents(["   "]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.EmptyCorpusError: no documents to index ...
    """
    if len(docs) == 0:
        raise EmptyCorpusError("no documents to index (all inputs were empty or none were given)")
    return docs
