"""INTERIM stand-ins for core modules that are being written concurrently.

TODO(clue-qiter): replace with ``core.nlp`` (SpacyNLP / normalize_entity) and
``core.persistence`` (manifest, atomic directory) once those branches are merged into main,
then delete this module. Only the small subset Clue-RAG needs lives here: one spaCy parse per
text giving sentences and their entities from the same ``Doc``, the entity-name normaliser,
and an atomic directory write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag_integrations.core.models import resolve_spacy_model

_ARTICLE = re.compile(r"^(the|a|an)\s+")
_NON_WORD = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")


def normalize_entity(name: str) -> str:
    """Canonical key of an entity name, used identically at index and at query time.

    NFKC, case-folded, possessive ``'s`` and punctuation removed, leading article dropped,
    whitespace collapsed.

    Examples
    --------
    >>> normalize_entity("The  Beatles'")
    'beatles'
    >>> normalize_entity("Nottingham Forest's")
    'nottingham forest'
    """
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    text = re.sub(r"['’]s\b", "", text)
    text = _NON_WORD.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    return _ARTICLE.sub("", text)


@dataclass(frozen=True)
class Entity:
    """A named entity found by spaCy (``norm`` is :func:`normalize_entity` of ``text``)."""

    text: str
    label: str
    norm: str


@dataclass(frozen=True)
class Sentence:
    """One sentence with the entities spaCy found inside it."""

    text: str
    start_char: int
    end_char: int
    entities: tuple[Entity, ...]


_PIPELINES: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()


class SpacyParser:
    """Lazily loaded spaCy pipeline giving sentences and entities from ONE parse.

    Parameters
    ----------
    model : str, optional
        spaCy pipeline name or path; ``None`` is the offline ``en_core_web_sm`` package.
    batch_size : int
        ``nlp.pipe`` batch size.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 64) -> None:
        self.model_name = resolve_spacy_model(model)
        self.batch_size = batch_size
        self._nlp: Any = None

    @property
    def nlp(self) -> Any:
        """The pipeline, loaded once per process and model name (shared by instances)."""
        if self._nlp is None:
            with _LOAD_LOCK:
                if self.model_name not in _PIPELINES:
                    import spacy

                    _PIPELINES[self.model_name] = spacy.load(
                        self.model_name, disable=["lemmatizer", "attribute_ruler"]
                    )
                self._nlp = _PIPELINES[self.model_name]
        return self._nlp

    def parse_many(self, texts: Sequence[str]) -> list[list[Sentence]]:
        """Split every text into sentences carrying their entities (one parse per text)."""
        return [_sentences(doc) for doc in self.nlp.pipe(list(texts), batch_size=self.batch_size)]

    def entities(self, text: str) -> list[Entity]:
        """Entities of one (query) text."""
        return [e for s in self.parse_many([text])[0] for e in s.entities]


def _sentences(doc: Any) -> list[Sentence]:
    out = []
    for sent in doc.sents:
        text = sent.text.strip()
        if not text:
            continue
        ents = tuple(
            Entity(e.text, e.label_, normalize_entity(e.text))
            for e in sent.ents
            if normalize_entity(e.text)
        )
        out.append(Sentence(text, sent.start_char, sent.end_char, ents))
    return out


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as UTF-8 JSON."""
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temporary sibling directory that replaces ``target`` only on success."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield tmp
        backup = None
        if target.exists():
            backup = target.with_name(f".{target.name}.old")
            if backup.exists():
                shutil.rmtree(backup)
            os.replace(target, backup)
        os.replace(tmp, target)
        if backup is not None:
            shutil.rmtree(backup)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
