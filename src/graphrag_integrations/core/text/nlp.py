"""Sentences and named entities from one shared, lazily loaded spaCy pipeline.

:class:`SpacyNLP` loads a pipeline (by default the offline ``en_core_web_sm`` copy) on first
use, once per process and configuration: every :class:`SpacyNLP` with the same model and
disabled components shares it, so many indexes cost one load. Results are plain frozen data
classes (:class:`ParsedText`, :class:`Sentence`, :class:`Entity`) with character offsets into
the parsed text, so nothing downstream holds spaCy objects.

:func:`normalize_entity` is the single normalisation used for entity names, both when an
index is built and when a query is parsed, so the two always agree.
"""

from __future__ import annotations

import logging
import os
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.encoders.models import resolve_spacy_model
from graphrag_integrations.core.progress import progress
from graphrag_integrations.core.text.chunking import find_break
from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

#: Components not needed for sentences, dependencies and entities. The parser of
#: ``en_core_web_sm`` listens to the shared ``tok2vec`` but not to the tagger, so the tagger,
#: the attribute ruler (tag -> POS) and the lemmatizer can all be skipped.
DEFAULT_DISABLE: tuple[str, ...] = ("tagger", "attribute_ruler", "lemmatizer")

#: Texts longer than this are parsed in pieces cut at paragraph, line or sentence
#: boundaries. spaCy's parser and NER hold state for a whole batch, so peak memory grows with
#: ``batch_size * max_piece_chars`` (measured: about 1.4 GB for 8 pieces of 100,000 chars);
#: 5,000 characters keeps a batch of 64 pieces in the hundreds of MB, and typical passages
#: (256 tokens, about 1,200 characters) are never cut.
MAX_PIECE_CHARS = 5_000

#: spaCy labels of numeric entities ("two", "first", "5 km"): the graph indexes give them no
#: entity node by default, as they join unrelated passages.
NUMERIC_ENTITY_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "TIME"})

#: Dependency labels that make an entity the subject of its clause.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})

_STRIP_CHARS = " \t\n\r\f\v.,;:!?¡¿…'\"`´‘’‚‛“”„‟«»‹›()[]{}<>-‐‑‒–—―/\\|*_~"
_POSSESSIVES = ("'s", "’s")


def normalize_entity(name: str) -> str:
    """Canonical form of an entity name, used at index and at query time.

    Steps, repeated until nothing changes: Unicode NFKC, case folding, whitespace collapsed
    to single spaces, surrounding punctuation and quotes stripped, a possessive ``'s`` at the
    end removed, a leading ``"the "`` dropped. The result is idempotent.

    Parameters
    ----------
    name : str
        Entity text as found in a document or a query.

    Returns
    -------
    str
        The normalised name; ``""`` when nothing but punctuation/whitespace was given.

    Examples
    --------
    >>> normalize_entity("  The   Beatles ")
    'beatles'
    >>> normalize_entity("“Obama’s”")
    'obama'
    >>> normalize_entity("Ｆｒａｎｃｅ")
    'france'
    >>> normalize_entity("STRASSE") == normalize_entity("Straße")
    True
    >>> normalize_entity("U.S.")
    'u.s'
    >>> normalize_entity("Theodore Roosevelt")
    'theodore roosevelt'
    >>> normalize_entity("...")
    ''
    """
    text = unicodedata.normalize("NFKC", name).casefold()
    while True:
        before = text
        text = " ".join(text.split()).strip(_STRIP_CHARS)
        for suffix in _POSSESSIVES:
            if text.endswith(suffix) and len(text) > len(suffix):
                text = text[: -len(suffix)]
        if text.startswith("the ") and len(text) > 4:
            text = text[4:]
        text = text.strip(_STRIP_CHARS)
        if text == before:
            return text


@dataclass(frozen=True)
class Entity:
    """A named entity mention.

    Parameters
    ----------
    text : str
        The mention as written.
    label : str
        spaCy entity label (``PERSON``, ``GPE``, ``ORG``...).
    start_char, end_char : int
        Span in the parsed text (``ParsedText.text[start_char:end_char] == text``).
    is_subject : bool
        Some token of the mention is a clause subject (``nsubj``/``nsubjpass``).
    norm : str
        :func:`normalize_entity` of ``text`` (never empty).

    Examples
    --------
    >>> Entity("Paris", "GPE", 0, 5, True, normalize_entity("Paris")).norm
    'paris'
    """

    text: str
    label: str
    start_char: int
    end_char: int
    is_subject: bool
    norm: str


@dataclass(frozen=True)
class Sentence:
    """A sentence with the entities that start in it.

    Offsets (its own and its entities') are into the parsed text, not into the sentence.

    Examples
    --------
    >>> e = Entity("Paris", "GPE", 10, 15, False, "paris")
    >>> Sentence("We visit Paris.", 1, 16, (e,)).masked()
    'We visit ##.'
    """

    text: str
    start_char: int
    end_char: int
    entities: tuple[Entity, ...] = ()

    def masked(self, mask: str = "##") -> str:
        """The sentence with every entity span replaced by ``mask``."""
        parts: list[str] = []
        pos = 0
        for ent in sorted(self.entities, key=lambda e: e.start_char):
            start = max(ent.start_char - self.start_char, pos)
            end = min(ent.end_char - self.start_char, len(self.text))
            if end <= start:
                continue
            parts.append(self.text[pos:start])
            parts.append(mask)
            pos = end
        parts.append(self.text[pos:])
        return "".join(parts)


@dataclass(frozen=True)
class ParsedText:
    """A parsed text: its sentences (whitespace-only ones left out), in order.

    Examples
    --------
    >>> e = Entity("Paris", "GPE", 0, 5, True, "paris")
    >>> parsed = ParsedText("Paris is big.", (Sentence("Paris is big.", 0, 13, (e,)),))
    >>> [x.norm for x in parsed.entities]
    ['paris']
    """

    text: str
    sentences: tuple[Sentence, ...]

    @property
    def entities(self) -> tuple[Entity, ...]:
        """Every entity of every sentence, in text order."""
        return tuple(ent for sent in self.sentences for ent in sent.entities)


_PIPELINES: dict[tuple[str, tuple[str, ...]], Any] = {}
_PIPELINES_LOCK = threading.Lock()


def _load_pipeline(model: str, disable: tuple[str, ...]) -> Any:
    key = (model, disable)
    nlp = _PIPELINES.get(key)
    if nlp is not None:
        return nlp
    with _PIPELINES_LOCK:
        nlp = _PIPELINES.get(key)
        if nlp is None:
            import spacy

            try:
                loaded = spacy.load(model)
            except OSError as exc:
                raise ModelUnavailableError(
                    f"cannot load spaCy pipeline {model!r}: {exc}. Install it (the default "
                    "comes with `pip install 'graphrag-integrations[offline]'`) or pass a path."
                ) from exc
            unknown = [name for name in disable if name not in loaded.pipe_names]
            if unknown:
                logger.debug("spaCy pipeline %s has no %s to disable", model, unknown)
            to_disable = [name for name in disable if name in loaded.pipe_names]
            for name in to_disable:
                loaded.disable_pipe(name)
            missing = [n for n in ("parser", "ner") if n not in loaded.pipe_names]
            if missing:
                raise ModelUnavailableError(
                    f"spaCy pipeline {model!r} lacks {missing} (needed for sentences, "
                    "dependencies and entities)"
                )
            logger.info("loaded spaCy pipeline %s (active: %s)", model, loaded.pipe_names)
            nlp = _PIPELINES[key] = loaded
    return nlp


class SpacyNLP:
    """Sentence splitting, dependency subjects and named entities with spaCy.

    Parameters
    ----------
    model : str or PathLike, optional
        Pipeline name or path; ``None`` is the offline default
        (:func:`~graphrag_integrations.core.encoders.models.resolve_spacy_model`). It needs a
        ``parser`` and an ``ner`` component.
    n_process : int
        Worker processes for :meth:`parse_many` (spaCy ``nlp.pipe``).
    batch_size : int
        Texts per batch in :meth:`parse_many`.
    disable : sequence of str
        Components to switch off (default :data:`DEFAULT_DISABLE`).
    max_piece_chars : int
        Longer texts are parsed in pieces of at most this many characters, cut at
        paragraph, line or sentence boundaries; offsets still refer to the whole text.

    Examples
    --------
    >>> nlp = SpacyNLP()
    >>> [(e.text, e.label, e.is_subject) for e in nlp.entities("Obama visited Paris.")]
    [('Obama', 'PERSON', True), ('Paris', 'GPE', False)]
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        n_process: int = 1,
        batch_size: int = 64,
        disable: Sequence[str] = DEFAULT_DISABLE,
        max_piece_chars: int = MAX_PIECE_CHARS,
    ) -> None:
        if n_process < 1 and n_process != -1:
            raise ValueError(f"n_process must be >= 1 (or -1 for all CPUs), got {n_process}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_piece_chars < 1_000:
            raise ValueError(f"max_piece_chars must be >= 1000, got {max_piece_chars}")
        self.model_name = resolve_spacy_model(None if model is None else str(model))
        self.n_process = n_process
        self.batch_size = batch_size
        self.disable = tuple(disable)
        self.max_piece_chars = max_piece_chars

    @property
    def nlp(self) -> Any:
        """The shared ``spacy.Language`` (loaded on first access, thread-safe)."""
        return _load_pipeline(self.model_name, self.disable)

    def parse(self, text: str) -> ParsedText:
        """Parse one text.

        Examples
        --------
        >>> parsed = SpacyNLP().parse("Obama visited Paris. He liked it.")
        >>> [s.text for s in parsed.sentences]
        ['Obama visited Paris.', 'He liked it.']
        """
        return self.parse_many([text])[0]

    def entities(self, text: str) -> list[Entity]:
        """The named entities of ``text``, in order."""
        return list(self.parse(text).entities)

    def named_entities(self, text: str) -> list[Entity]:
        """The named entities of ``text``, in order, from the entity recogniser alone.

        The same spans and labels as :meth:`entities` (the recogniser does not read the
        parser's output), several times faster on a short text because the parser, and a
        shared ``tok2vec`` the recogniser does not listen to, are skipped; ``is_subject``
        is therefore always ``False``. Texts longer than ``max_piece_chars`` go through
        :meth:`entities`.

        Examples
        --------
        >>> nlp = SpacyNLP()
        >>> [(e.text, e.label) for e in nlp.named_entities("Obama visited Paris.")]
        [('Obama', 'PERSON'), ('Paris', 'GPE')]
        """
        if len(text) > self.max_piece_chars:
            return self.entities(text)
        nlp = self.nlp
        doc = nlp(text, disable=_not_needed_for_ner(nlp))
        found = (_entity(span, 0, dependencies=False) for span in doc.ents)
        return [e for e in found if e is not None]

    def parse_many(self, texts: Iterable[str], show_progress: bool = False) -> list[ParsedText]:
        """Parse many texts in batches with ``nlp.pipe`` (``n_process`` workers).

        Parameters
        ----------
        texts : iterable of str
            Texts to parse.
        show_progress : bool
            Show a progress bar (one step per text piece).

        Returns
        -------
        list of ParsedText
            One per text, in order.
        """
        text_list = list(texts)
        for i, t in enumerate(text_list):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(t).__name__}")
        pieces = [
            (index, offset, piece)
            for index, text in enumerate(text_list)
            for offset, piece in self._pieces(text)
        ]
        sentences: list[list[Sentence]] = [[] for _ in text_list]
        if pieces:
            nlp = self.nlp
            if nlp.max_length < self.max_piece_chars:
                nlp.max_length = self.max_piece_chars
            docs = nlp.pipe(
                (piece for _, _, piece in pieces),
                batch_size=self.batch_size,
                n_process=self.n_process,
            )
            steps = progress(
                zip(pieces, docs, strict=True), "Parsing", total=len(pieces), enabled=show_progress
            )
            for (index, offset, _), doc in steps:
                sentences[index].extend(_sentences(doc, offset))
        return [
            ParsedText(text=text, sentences=tuple(sents))
            for text, sents in zip(text_list, sentences, strict=True)
        ]

    def _pieces(self, text: str) -> Iterator[tuple[int, str]]:
        """``(offset, piece)`` cuts of ``text`` of at most ``max_piece_chars`` characters."""
        limit = self.max_piece_chars
        pos = 0
        n = len(text)
        while n - pos > limit:
            cut = find_break(text, pos + limit // 2, pos + limit)
            if cut is None or cut <= pos:
                logger.warning(
                    "no whitespace in %d characters at offset %d; cutting the text there",
                    limit // 2,
                    pos + limit // 2,
                )
                end = pos + limit
            else:
                end = cut
            yield pos, text[pos:end]
            pos = end
        if pos < n or n == 0:
            yield pos, text[pos:]


def _sentences(doc: Any, offset: int) -> Iterator[Sentence]:
    ents = list(doc.ents)
    e = 0
    for sent in doc.sents:
        # skip entities that start before this sentence (crossing a boundary: already used)
        while e < len(ents) and ents[e].start_char < sent.start_char:
            e += 1
        found: list[Entity] = []
        while e < len(ents) and ents[e].start_char < sent.end_char:
            entity = _entity(ents[e], offset)
            if entity is not None:
                found.append(entity)
            e += 1
        text = sent.text
        stripped = text.strip()
        if not stripped:
            continue
        lead = len(text) - len(text.lstrip())
        start = sent.start_char + lead + offset
        yield Sentence(
            text=stripped,
            start_char=start,
            end_char=start + len(stripped),
            entities=tuple(found),
        )


def _not_needed_for_ner(nlp: Any) -> list[str]:
    """Active components the ``ner`` component does not depend on: the parser and the
    tagger-like components, and a shared ``tok2vec`` / ``transformer`` only when ``ner``
    does not listen to it (``en_core_web_sm``'s recogniser has its own)."""
    skip = []
    for name, component in nlp.pipeline:
        if name == "ner":
            continue
        listeners = getattr(component, "listening_components", None)
        if listeners is not None and "ner" in listeners:
            continue
        skip.append(name)
    return skip


def _entity(span: Any, offset: int, *, dependencies: bool = True) -> Entity | None:
    norm = normalize_entity(span.text)
    if not norm:
        logger.debug("skipping entity %r: nothing left after normalisation", span.text)
        return None
    return Entity(
        text=span.text,
        label=span.label_,
        start_char=span.start_char + offset,
        end_char=span.end_char + offset,
        is_subject=dependencies and any(tok.dep_ in SUBJECT_DEPS for tok in span),
        norm=norm,
    )
