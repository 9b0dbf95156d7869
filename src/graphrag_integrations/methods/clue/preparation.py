"""The per-passage half of a Clue-Index build: parse, extract units, embed (no store access).

:class:`CluePreparer` holds the build settings and models (embedder, spaCy pipeline, LLM for
``alpha > 0``) and turns a batch of passages into :class:`PreparedChunks`: the knowledge units
with their entities, the entity labels, and the vectors of units, entities and chunks. It never
reads the index, so it can run anywhere (a Ray worker receives a pickled copy, whose models
load on its first batch); :meth:`ClueIndex.merge` adds prepared batches to the store, in input
order. ``ClueIndex.add_passages`` is that merge of this preparation of its passages.

Each chunk is parsed ONCE by spaCy, in slices of :data:`PARSE_SLICE` passages in a background
thread while the main thread embeds the units and entities of the slices already parsed (both
release the GIL for most of their work; docs/lab/clue.md, "Indexing"). With ``alpha > 0`` the
hybrid extraction of the paper runs on the batch first (chunk selection under ``alpha`` times
the batch's tokens, :class:`~.extraction.KnowledgeUnitExtractor`, one spaCy parse per LLM
unit), so in a batched build the selection is made per batch.

A unit is embedded from its text, or its sentence alone (``embed_title=False``); an entity
from its name, or (``entity_vectors="mentions"``) from its mentions' token vectors taken in
the units' own encoding pass (:class:`UnitText` holds the embedded text and the mention
spans), so the names cost no encoder pass (docs/lab/clue.md, "Issue 31: build options").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, normalize_rows
from graphrag_integrations.core.progress import progress
from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.core.text.nlp import ParsedText, Sentence, SpacyNLP, normalize_entity
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.extraction import ExtractionStats
from graphrag_integrations.methods.clue.params import ClueIndexParams
from graphrag_integrations.methods.clue.store import KnowledgeUnit

__all__ = ["PARSE_SLICE", "TITLE_LABEL", "CluePreparer", "PreparedChunks", "UnitText"]

TITLE_LABEL = "TITLE"
#: Passages per spaCy slice of a build: the units of one slice are embedded while the next
#: is parsed.
PARSE_SLICE = 256


def _as_unit(parsed: ParsedText) -> Sentence:
    """One knowledge unit (an LLM-extracted statement) as a single sentence with its entities."""
    return Sentence(parsed.text.strip(), 0, len(parsed.text), parsed.entities)


@dataclass
class PreparedChunks:
    """What a batch of passages adds to a Clue-Index (picklable).

    Parameters
    ----------
    passages : list of Passage
        The chunks, in input order.
    units : list of KnowledgeUnit
        Their knowledge units, in order.
    labels : dict of str to str
        Entity name -> label, first mention first.
    chunk_vectors : dict of str to ndarray
        Passage id -> chunk vector.
    unit_vectors : dict of str to ndarray
        Unit text -> vector.
    entity_vectors : dict of str to ndarray
        Entity name -> vector (the entities not known to the preparer's caller).
    timings : dict of str to float
        Seconds of ``nlp``, ``llm``, ``embedding`` and ``total`` (the preparation).
    selection : dict of str to int
        Chunk selection counts at ``alpha > 0`` (``chunks``, ``llm_chunks``, ``tokens``,
        ``llm_tokens``).
    extraction : ExtractionStats
        LLM extraction counts at ``alpha > 0``.
    """

    passages: list[Passage]
    units: list[KnowledgeUnit]
    labels: dict[str, str]
    chunk_vectors: dict[str, FloatMatrix]
    unit_vectors: dict[str, FloatMatrix]
    entity_vectors: dict[str, FloatMatrix]
    timings: dict[str, float] = field(default_factory=dict)
    selection: dict[str, int] = field(default_factory=dict)
    extraction: ExtractionStats = field(default_factory=ExtractionStats)


@dataclass
class CluePreparer:
    """Prepare batches of passages for a Clue-Index (see the module notes).

    Parameters
    ----------
    embedder : Embedder
        The index's embedder (a pickled copy loads its model again where it is unpickled).
    parser : SpacyNLP
        The spaCy pipeline (by name).
    params : ClueIndexParams
        The index's build options.
    llm : LLM, LLMClient or framework model, optional
        The knowledge-unit extractor at ``alpha > 0``.
    show_progress : bool
        Progress bars of the slices and the embeddings.
    llm_progress : bool
        Progress of the LLM extraction.
    """

    embedder: Embedder
    parser: SpacyNLP
    params: ClueIndexParams
    llm: Any = None
    show_progress: bool = False
    llm_progress: bool = False
    extractor: Any = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the extractor (its LLM client is made again where it runs)."""
        return {**self.__dict__, "extractor": None}

    def __call__(
        self, passages: Sequence[Passage], known_entity: Callable[[str], bool] | None = None
    ) -> PreparedChunks:
        """Parse, extract and embed ``passages`` (distinct ids, none indexed yet).

        ``known_entity(name)`` tells which entities the index already holds: they are not
        embedded (a worker knows none and embeds every entity of its batch; the merge keeps
        the vectors of the new ones).
        """
        known = known_entity or (lambda name: False)
        new = list(passages)
        t0 = time.perf_counter()
        titled = [split_title(p) for p in new]
        bodies = [body for _, body in titled]
        # alpha > 0: LLM extraction first (it needs no chunk parse and shares the spaCy pipeline
        # with the background thread below).
        llm_units, selection, stats = self._llm_units(bodies)
        t_llm = time.perf_counter() - t0
        slices = [range(i, min(i + PARSE_SLICE, len(new))) for i in range(0, len(new), PARSE_SLICE)]
        units: list[KnowledgeUnit] = []
        labels: dict[str, str] = {}
        unit_vecs: dict[str, FloatMatrix] = {}
        entity_vecs: dict[str, FloatMatrix] = {}
        t_nlp = t_wait = 0.0
        how = self.params.entity_vectors
        mentions = None if how == "encode" else _Mentions(once_only=how == "single_mentions")
        with ThreadPoolExecutor(1, thread_name_prefix="clue-parse") as pool:
            parses = [pool.submit(self._timed_parse, bodies[r.start : r.stop]) for r in slices]
            encoded = (
                self._embed_unique([p.text for p in new])
                if self.params.chunk_vectors == "encode"
                else {}
            )
            steps = progress(
                zip(slices, parses, strict=True),
                f"Indexing (slices of {PARSE_SLICE} passages)",
                total=len(slices),
                enabled=self.show_progress and len(slices) > 1,
            )
            for r, parsing in steps:
                waited = time.perf_counter()
                parsed, took = parsing.result()
                t_wait += time.perf_counter() - waited
                t_nlp += took
                part_llm = {i - r.start: llm_units[i] for i in r if i in llm_units}
                part, part_labels, texts = self._units(
                    new[r.start : r.stop], titled[r.start : r.stop], parsed, part_llm
                )
                units += part
                for name, label in part_labels.items():
                    labels.setdefault(name, label)
                todo = {u.text: t for u, t in zip(part, texts, strict=True)}
                todo = {k: t for k, t in todo.items() if k not in unit_vecs}
                if mentions is None:
                    unit_vecs.update(self._embed_units(todo))
                    entity_vecs.update(
                        self._embed_unique(
                            [
                                n
                                for n in _mentioned(part, part_labels)
                                if n not in entity_vecs and not known(n)
                            ]
                        )
                    )
                else:
                    unit_vecs.update(self._embed_units(todo, mentions))
        if mentions is not None:
            names = [n for n in _mentioned(units, labels) if not known(n)]
            entity_vecs = mentions.vectors(names, self._embed_unique)
        chunk_vecs = self._chunk_vectors(new, units, unit_vecs, encoded)
        t_end = time.perf_counter()
        return PreparedChunks(
            passages=new,
            units=units,
            labels=labels,
            chunk_vectors=chunk_vecs,
            unit_vectors=unit_vecs,
            entity_vectors=entity_vecs,
            timings={
                "nlp": t_nlp,
                "llm": t_llm,
                "embedding": t_end - t0 - t_llm - t_wait,
                "total": t_end - t0,
            },
            selection=selection,
            extraction=stats,
        )

    def _timed_parse(self, bodies: Sequence[str]) -> tuple[list[ParsedText], float]:
        start = time.perf_counter()
        parsed = self.parser.parse_many(bodies)
        return parsed, time.perf_counter() - start

    def _units(
        self,
        passages: Sequence[Passage],
        titled: Sequence[tuple[str, str]],
        parsed: Sequence[ParsedText],
        llm_units: dict[int, tuple[str, list[ParsedText]]] | None = None,
    ) -> tuple[list[KnowledgeUnit], dict[str, str], list[UnitText]]:
        """The units of parsed chunks, their entity labels and, per unit, the text its vector
        is embedded from with the character spans of its entity mentions."""
        params = self.params
        excluded = frozenset(params.excluded_labels)
        units: list[KnowledgeUnit] = []
        labels: dict[str, str] = {}
        texts: list[UnitText] = []
        llm_units = llm_units or {}
        for i, (p, (title, _), doc) in enumerate(zip(passages, titled, parsed, strict=True)):
            title_key = normalize_entity(title) if (title and params.link_title) else ""
            if title_key:
                labels.setdefault(title_key, TITLE_LABEL)
            source, unit_docs = llm_units.get(i, ("sentence", [doc]))
            sentences = (
                [s for d in unit_docs for s in d.sentences]
                if i not in llm_units
                else [_as_unit(d) for d in unit_docs]
            )
            prefix = f"{title}: " if (title and params.title_prefix) else ""
            shift = len(prefix) if params.embed_title else 0
            for pos, sent in enumerate(sentences):
                names = [title_key] if title_key else []
                spans: list[tuple[str, int, int]] = []
                if title_key and shift:
                    spans.append((title_key, 0, len(title)))
                for ent in sent.entities:
                    if ent.label not in excluded:
                        names.append(ent.norm)
                        labels.setdefault(ent.norm, ent.label)
                        start = max(ent.start_char - sent.start_char, 0) + shift
                        end = min(ent.end_char - sent.start_char, len(sent.text)) + shift
                        spans.append((ent.norm, start, end))
                text = prefix + sent.text
                texts.append(UnitText(text if shift else sent.text, tuple(spans)))
                units.append(
                    KnowledgeUnit(
                        id=content_id(p.id, str(pos)),
                        text=text,
                        passage_id=p.id,
                        doc_id=p.doc_id,
                        entities=tuple(dict.fromkeys(names)),
                        source=source,
                    )
                )
        return units, labels, texts

    def _llm_units(
        self, bodies: Sequence[str]
    ) -> tuple[dict[int, tuple[str, list[ParsedText]]], dict[str, int], ExtractionStats]:
        """Hybrid extraction (alpha > 0): chunk position -> (source, one parse per unit), the
        selection counts and the extraction counts."""
        alpha = self.params.alpha
        if alpha <= 0:
            return {}, {}, ExtractionStats()
        from graphrag_integrations.core.llm import LLMClient, estimate_tokens
        from graphrag_integrations.methods.clue.extraction import KnowledgeUnitExtractor
        from graphrag_integrations.methods.clue.selection import select_chunks

        if self.extractor is None:
            has_batch = callable(getattr(self.llm, "complete_many", None))
            client = self.llm if has_batch else LLMClient(self.llm)
            self.extractor = KnowledgeUnitExtractor(
                client,
                lambda text: [s.text for s in self.parser.parse(text).sentences],
                show_progress=self.llm_progress,
            )
        value = self.params.selection_value
        chosen = select_chunks(
            bodies,
            [estimate_tokens(b) for b in bodies],
            alpha,
            value=value,  # type: ignore[arg-type]
            embeddings=self.embedder if value == "cosine" else None,
        )
        selection = {
            "chunks": len(bodies),
            "llm_chunks": len(chosen.selected),
            "tokens": chosen.total_tokens,
            "llm_tokens": chosen.selected_tokens,
        }
        self.extractor.show_progress = self.llm_progress  # LLM work: always shown
        outcomes = self.extractor.extract([bodies[i] for i in chosen.selected])
        flat = [u for o in outcomes for u in o.units]
        parses = iter(self.parser.parse_many(flat))
        out: dict[int, tuple[str, list[ParsedText]]] = {}
        for i, outcome in zip(chosen.selected, outcomes, strict=True):
            source = "llm" if outcome.source == "llm" else "sentence"
            out[i] = (source, [next(parses) for _ in outcome.units])
        return out, selection, self.extractor.last_stats

    def _chunk_vectors(
        self,
        passages: Sequence[Passage],
        units: Sequence[KnowledgeUnit],
        unit_vecs: dict[str, FloatMatrix],
        encoded: dict[str, FloatMatrix],
    ) -> dict[str, FloatMatrix]:
        """Chunk id -> vector, ``encoded`` or summed from its units (see ``chunk_vectors``)."""
        summed: dict[str, FloatMatrix] = {}
        if self.params.chunk_vectors == "units":
            for unit in units:
                vec = unit_vecs[unit.text]
                prev = summed.get(unit.passage_id)
                summed[unit.passage_id] = vec.copy() if prev is None else prev + vec
            summed = {pid: normalize_rows(v)[0] for pid, v in summed.items()}
        todo = [p for p in passages if p.id not in summed and p.text not in encoded]
        encoded = {**encoded, **self._embed_unique([p.text for p in todo])}
        return {p.id: summed[p.id] if p.id in summed else encoded[p.text] for p in passages}

    def _embed_units(
        self, todo: dict[str, UnitText], mentions: _Mentions | None = None
    ) -> dict[str, FloatMatrix]:
        """Unit text -> vector of its :class:`UnitText` (a unit text once); with
        ``mentions``, the entity spans are embedded in the same pass and added to it."""
        if mentions is None:
            encoded = self._embed_unique([t.text for t in todo.values()])
            return {key: encoded[t.text] for key, t in todo.items()}
        embed_with_spans = getattr(self.embedder, "embed_with_spans", None)
        if not callable(embed_with_spans):
            raise ValueError(
                f"entity_vectors={self.params.entity_vectors!r} needs an embedder with "
                "embed_with_spans; "
                f"{type(self.embedder).__name__} has none"
            )
        items = list(todo.values())
        vecs, span_vecs = embed_with_spans(
            [t.text for t in items],
            [[(start, end) for _, start, end in t.spans] for t in items],
            show_progress=self.show_progress,
        )
        for item, rows in zip(items, span_vecs, strict=True):
            mentions.add([name for name, _, _ in item.spans], rows)
        return {key: vecs[i] for i, key in enumerate(todo)}

    def _embed_unique(self, texts: Sequence[str]) -> dict[str, FloatMatrix]:
        unique = list(dict.fromkeys(texts))
        vecs = self.embedder.embed(unique, show_progress=self.show_progress)
        return {t: vecs[i] for i, t in enumerate(unique)}


@dataclass(frozen=True)
class UnitText:
    """What a knowledge unit's vector is embedded from.

    Parameters
    ----------
    text : str
        The embedded text (the unit's text, or its sentence alone: ``embed_title``).
    spans : tuple of (str, int, int)
        ``(entity name, start, end)`` of each entity mention in ``text``.
    """

    text: str
    spans: tuple[tuple[str, int, int], ...] = ()


@dataclass
class _Mentions:
    """Sums of the span vectors of each entity's mentions (``entity_vectors`` "mentions";
    with ``once_only`` only names mentioned once take them: "single_mentions")."""

    once_only: bool = False
    sums: dict[str, FloatMatrix] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, names: Sequence[str], rows: FloatMatrix) -> None:
        for name, row in zip(names, rows, strict=True):
            self.counts[name] = self.counts.get(name, 0) + 1
            if not row.any():  # beyond the truncation
                continue
            prev = self.sums.get(name)
            self.sums[name] = row.copy() if prev is None else prev + row

    def vectors(
        self, names: Sequence[str], encode: Callable[[Sequence[str]], dict[str, FloatMatrix]]
    ) -> dict[str, FloatMatrix]:
        """Name -> normalised mean of its mentions; names with no mention are ``encode``d."""
        out = {
            n: normalize_rows(self.sums[n])[0]
            for n in names
            if n in self.sums and not (self.once_only and self.counts[n] > 1)
        }
        out.update(encode([n for n in names if n not in out]))
        return {n: out[n] for n in names}


def _mentioned(units: Sequence[KnowledgeUnit], labels: dict[str, str]) -> list[str]:
    """Names of ``labels`` that ``units`` mention, in ``labels`` order."""
    mentioned = {n for u in units for n in u.entities}
    return [n for n in labels if n in mentioned]


def combine(batches: Sequence[PreparedChunks]) -> PreparedChunks:
    """Prepared batches as one, in order (first label and vector of a name or text win).

    Examples
    --------
    >>> import numpy as np
    >>> a = PreparedChunks([], [], {"x": "GPE"}, {}, {}, {"x": np.ones(2)})
    >>> b = PreparedChunks([], [], {"x": "ORG", "y": "ORG"}, {}, {}, {"x": np.zeros(2)})
    >>> both = combine([a, b])
    >>> both.labels, both.entity_vectors["x"].tolist()
    ({'x': 'GPE', 'y': 'ORG'}, [1.0, 1.0])
    """
    if len(batches) == 1:
        return batches[0]
    out = PreparedChunks([], [], {}, {}, {}, {})
    for part in batches:
        out.passages += part.passages
        out.units += part.units
        for name, label in part.labels.items():
            out.labels.setdefault(name, label)
        for target, source in (
            (out.chunk_vectors, part.chunk_vectors),
            (out.unit_vectors, part.unit_vectors),
            (out.entity_vectors, part.entity_vectors),
        ):
            for key, vec in source.items():
                target.setdefault(key, vec)
        for key, seconds in part.timings.items():
            out.timings[key] = out.timings.get(key, 0.0) + seconds
        for key, count in part.selection.items():
            out.selection[key] = out.selection.get(key, 0) + count
        out.extraction = out.extraction + part.extraction
    return out
