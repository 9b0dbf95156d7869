"""Benchmark loaders: HotpotQA, MuSiQue, 2Wiki-style corpora, LiHuaWorld and MetaQA.

Every passage dataset becomes a :class:`Dataset` of
:class:`~graphrag_integrations.core.types.Passage` and :class:`Question`. A passage is
``title + "\\n" + text`` (no chunking), its id is
``content_id(title, text)`` so the same paragraph gets the same id from any file (corpus,
inline context, distractor set), ``doc_id`` is that id and ``metadata`` is ``{"title": ...}``.
HotpotQA sentences are joined with no separator (each sentence after the first already starts
with its space).

Gold passages: HotpotQA = the titles in ``supporting_facts``; MuSiQue = the ``is_supporting``
paragraphs (matched by title and text); LiHuaWorld = the ``evidence`` timestamps (``Null``
questions have none). Questions without gold are kept (answers still count) and excluded from
retrieval recall by :mod:`graphrag_integrations.evaluation.metrics`.

Examples
--------
A MuSiQue-style questions file with inline paragraphs (the corpus is its paragraphs):

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> item = {"id": "q1", "question": "Where is Rome?", "answer": "Italy", "paragraphs": [
...     {"title": "Rome", "paragraph_text": "Rome is in Italy.", "is_supporting": True},
...     {"title": "Paris", "paragraph_text": "Paris is in France.", "is_supporting": False}]}
>>> _ = (Path(tmp.name) / "questions.json").write_text(json.dumps([item]))
>>> ds = load_dataset(tmp.name)
>>> len(ds.questions), len(ds.passages), ds.passages[0].text
(1, 2, 'Rome\\nRome is in Italy.')
>>> ds.questions[0].gold_passage_ids == [make_passage("Rome", "Rome is in Italy.").id]
True
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.core.types import Passage, Triple
from graphrag_integrations.errors import DocumentLoadError
from graphrag_integrations.evaluation.lihuaworld import lihua_timestamp as lihua_timestamp
from graphrag_integrations.evaluation.lihuaworld import load_lihua_chats as load_lihua_chats
from graphrag_integrations.evaluation.lihuaworld import load_questions as load_lihua_questions

logger = logging.getLogger(__name__)

_QUESTIONS_FILE = "questions.json"
_CORPUS_FILE = "corpus.json"
_LIHUA_ZIP = "LiHuaWorld.zip"
_LIHUA_QUERIES = "queries-dev.json"
_METAQA_KB = "kb.txt"


@dataclass(frozen=True)
class Question:
    """One evaluation question.

    Parameters
    ----------
    id : str
        Question id from the source file.
    text : str
        The question.
    answers : list of str
        The answer followed by its aliases (EM/F1 take the best match).
    gold_passage_ids : list of str
        Ids of the passages that support the answer (empty: no retrieval gold).
    metadata : Mapping
        Source-specific extras (``type``, ``hops``, ``topic_entity``...).
    """

    id: str
    text: str
    answers: list[str]
    gold_passage_ids: list[str] = field(default_factory=list)
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Dataset:
    """A corpus and its questions.

    Parameters
    ----------
    name : str
        Folder or file stem the dataset was loaded from.
    passages : list of Passage
        The corpus (unique ids, file order, distractors last).
    questions : list of Question
        The questions.
    triples : list of (head, relation, tail)
        A knowledge graph, for KGQA datasets (MetaQA); empty otherwise.

    Examples
    --------
    >>> Dataset("toy", [], []).name
    'toy'
    """

    name: str
    passages: list[Passage]
    questions: list[Question]
    triples: list[Triple] = field(default_factory=list)

    @property
    def passage_ids(self) -> set[str]:
        """Ids of every passage in the corpus."""
        return {p.id for p in self.passages}


# -- passages ----------------------------------------------------------------------------
def make_passage(title: str, text: str) -> Passage:
    """The passage of a titled paragraph.

    Its text is ``title + "\\n" + text``, its id (and doc_id) ``content_id(title, text)``.

    Examples
    --------
    >>> p = make_passage("Paris", "Paris is in France.")
    >>> p.text
    'Paris\\nParis is in France.'
    >>> p.id == make_passage("Paris", "Paris is in France.").id == p.doc_id
    True
    """
    pid = content_id(title, text)
    return Passage(id=pid, text=f"{title}\n{text}", doc_id=pid, metadata={"title": title})


def _paragraph_text(body: str | Sequence[str]) -> str:
    """HotpotQA sentence lists are joined as they are (sentences carry their own spaces)."""
    return body if isinstance(body, str) else "".join(body)


def _corpus_rows(data: Any, source: Path) -> list[tuple[str, str]]:
    """(title, text) rows of a corpus: dict title -> sentences/text, or list of {title, text}."""
    if isinstance(data, Mapping):
        return [(str(t), _paragraph_text(body)) for t, body in data.items()]
    if isinstance(data, list):
        rows = []
        for i, item in enumerate(data):
            if not isinstance(item, Mapping) or "text" not in item:
                raise DocumentLoadError(f"{source}: corpus entry {i} has no 'text'")
            rows.append((str(item.get("title", "")), _paragraph_text(item["text"])))
        return rows
    raise DocumentLoadError(
        f"{source}: a corpus is a dict title -> text or a list of {{title, text}}"
    )


def dedupe(passages: Iterable[Passage]) -> list[Passage]:
    """Keep the first passage of each id, in order."""
    seen: dict[str, Passage] = {}
    for p in passages:
        seen.setdefault(p.id, p)
    return list(seen.values())


def load_corpus(path: str | Path) -> list[Passage]:
    """Passages of a corpus file (or of ``corpus.json`` in a folder), deduplicated.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "corpus.json"
    ...     _ = file.write_text(json.dumps({"Rome": "Rome is in Italy.", "Oslo": ["Oslo", "."]}))
    ...     [p.text for p in load_corpus(tmp)]
    ['Rome\\nRome is in Italy.', 'Oslo\\nOslo.']
    """
    src = Path(path)
    file = src / _CORPUS_FILE if src.is_dir() else src
    data = _read_json(file)
    return dedupe(make_passage(t, x) for t, x in _corpus_rows(data, file))


def _read_json(file: Path) -> Any:
    if not file.is_file():
        raise DocumentLoadError(f"{file} does not exist")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DocumentLoadError(f"{file} is not valid UTF-8 JSON: {exc}") from exc


# -- HotpotQA / MuSiQue questions ----------------------------------------------------------
def _hotpot_question(item: Mapping[str, Any], title_ids: Mapping[str, str]) -> Question:
    gold_titles = list(dict.fromkeys(str(t) for t, _ in item.get("supporting_facts", [])))
    gold = []
    for title in gold_titles:
        if title in title_ids:
            gold.append(title_ids[title])
        else:
            logger.warning(
                "question %s: supporting title %r is not in the corpus", item["_id"], title
            )
            gold.append(content_id(title, ""))
    meta = {k: item[k] for k in ("type", "level") if k in item}
    return Question(
        id=str(item["_id"]),
        text=str(item["question"]),
        answers=[str(item["answer"])],
        gold_passage_ids=gold,
        metadata=meta,
    )


def _musique_question(item: Mapping[str, Any]) -> Question:
    gold = list(
        dict.fromkeys(
            content_id(str(p["title"]), str(p["paragraph_text"]))
            for p in item.get("paragraphs", [])
            if p.get("is_supporting")
        )
    )
    answers = [str(item["answer"]), *(str(a) for a in item.get("answer_aliases", []))]
    meta: dict[str, Any] = {"hops": len(item.get("question_decomposition", []))}
    if "question_decomposition" in item:
        meta["decomposition"] = [
            {"question": d["question"], "answer": d["answer"]}
            for d in item["question_decomposition"]
        ]
    return Question(
        id=str(item["id"]),
        text=str(item["question"]),
        answers=list(dict.fromkeys(answers)),
        gold_passage_ids=gold,
        metadata=meta,
    )


def _inline_passages(items: Sequence[Mapping[str, Any]]) -> list[Passage]:
    """Passages given inline with the questions (HotpotQA ``context``, MuSiQue ``paragraphs``)."""
    out: list[Passage] = []
    for item in items:
        for title, sentences in item.get("context", []):
            out.append(make_passage(str(title), _paragraph_text(sentences)))
        for p in item.get("paragraphs", []):
            out.append(make_passage(str(p["title"]), str(p["paragraph_text"])))
    return dedupe(out)


def _qa_format(items: Sequence[Any], source: Path) -> str:
    if not items or not isinstance(items[0], Mapping):
        raise DocumentLoadError(f"{source}: expected a non-empty list of question objects")
    first = items[0]
    if "supporting_facts" in first:
        return "hotpotqa"
    if "paragraphs" in first:
        return "musique"
    raise DocumentLoadError(
        f"{source}: unknown question format (need HotpotQA 'supporting_facts' or "
        "MuSiQue 'paragraphs')"
    )


def load_questions(file: str | Path, passages: Sequence[Passage]) -> list[Question]:
    """Questions of a HotpotQA or MuSiQue file, with gold ids resolved against ``passages``."""
    src = Path(file)
    items = _read_json(src)
    if not isinstance(items, list):
        raise DocumentLoadError(f"{src}: expected a JSON list of questions")
    fmt = _qa_format(items, src)
    if fmt == "hotpotqa":
        title_ids: dict[str, str] = {}
        for p in passages:
            title_ids.setdefault(str(p.metadata.get("title", "")), p.id)
        return [_hotpot_question(item, title_ids) for item in items]
    questions = [_musique_question(item) for item in items]
    ids = {p.id for p in passages}
    missing = sum(1 for q in questions for g in q.gold_passage_ids if g not in ids)
    if missing:
        logger.warning("%s: %d gold paragraphs are not in the corpus", src, missing)
    return questions


# -- entry point -------------------------------------------------------------------------
def load_dataset(
    path: str | Path,
    *,
    queries: str | Path | None = None,
    distractors: str | Path | None = None,
    limit: int | None = None,
    hops: int | None = None,
) -> Dataset:
    """Load a passage-retrieval dataset from a folder or a questions file.

    Parameters
    ----------
    path : str or Path
        A folder holding ``questions.json`` (HotpotQA or MuSiQue format) and optionally
        ``corpus.json``; a questions file with inline paragraphs (the corpus is then the unique
        inline paragraphs); or a LiHuaWorld folder (``LiHuaWorld.zip`` + ``queries-dev.json``).
    queries : str or Path, optional
        A questions file (same format) that replaces the dataset's question set.
    distractors : str or Path, optional
        A corpus (file or folder with ``corpus.json``) appended to the passages, deduplicated.
    limit : int, optional
        Keep only the first ``limit`` questions (the corpus is unchanged).
    hops : int, optional
        MetaQA only: the hop count of ``queries`` (default: from its ``N-hop`` folder), or
        without ``queries`` the one hop set to load (default: all three).

    Returns
    -------
    Dataset

    Raises
    ------
    DocumentLoadError
        If the path does not exist or holds no recognised dataset.

    Examples
    --------
    See the module docstring.
    """
    src = Path(path)
    if not src.exists():
        raise DocumentLoadError(f"dataset path {src} does not exist")
    if src.is_dir() and (src / _LIHUA_ZIP).is_file():
        ds = load_lihuaworld(src, queries=queries)
    elif src.is_dir() and (src / _METAQA_KB).is_file():
        ds = _metaqa_dataset(src, queries, hops)
    else:
        qfile = src / _QUESTIONS_FILE if src.is_dir() else src
        if src.is_dir() and (src / _CORPUS_FILE).is_file():
            passages = load_corpus(src / _CORPUS_FILE)
        else:
            items = _read_json(qfile)
            if not isinstance(items, list):
                raise DocumentLoadError(f"{qfile}: expected a JSON list of questions")
            _qa_format(items, qfile)
            passages = _inline_passages(items)
            if not passages:
                raise DocumentLoadError(f"{qfile}: no corpus.json and no inline paragraphs")
        questions = load_questions(queries if queries is not None else qfile, passages)
        ds = Dataset(src.stem if src.is_file() else src.name, passages, questions)
    if hops is not None and not (src.is_dir() and (src / _METAQA_KB).is_file()):
        raise DocumentLoadError(f"{src}: a hop count applies to MetaQA datasets only")
    if distractors is not None:
        extra = load_corpus(distractors)
        before = len(ds.passages)
        ds.passages = dedupe([*ds.passages, *extra])
        logger.info(
            "added %d distractor passages (%d duplicates dropped)",
            len(ds.passages) - before,
            before + len(extra) - len(ds.passages),
        )
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        ds.questions = ds.questions[:limit]
    return ds


def _metaqa_dataset(src: Path, queries: str | Path | None, hops: int | None) -> Dataset:
    """A MetaQA folder as a dataset: all (or ``hops``) answerable dev questions, or the
    questions of ``queries`` (hop count from its ``N-hop`` folder or ``hops``), kept to the
    answerable subset when the file is one the folder's answerable list covers."""
    if queries is None:
        return load_metaqa(src, hops=(hops,) if hops else (1, 2, 3)).to_dataset()
    kg = load_metaqa(src, hops=())
    kg.questions = load_metaqa_questions(queries, hops=hops)
    qpath, listed = Path(queries), src / "answerable_with_reconstructed_kb.json"
    own = qpath.resolve().parent.parent == src.resolve() and listed.is_file()
    key = f"{kg.questions[0].hops}-hop/{qpath.stem}" if kg.questions else ""
    if own and key in _read_json(listed):
        before = len(kg.questions)
        kg.questions = answerable_metaqa(kg.questions, listed)
        logger.info("%s: %d of %d questions answerable", qpath, len(kg.questions), before)
    else:
        logger.warning("%s: not covered by %s; all questions kept", qpath, listed.name)
    return kg.to_dataset()


# -- LiHuaWorld --------------------------------------------------------------------------
def load_lihuaworld(path: str | Path, *, queries: str | Path | None = None) -> Dataset:
    """LiHuaWorld chat logs: one passage per chat file, id = its timestamp ``YYYYMMDD_HH:MM``.

    Parameters
    ----------
    path : str or Path
        Folder with ``LiHuaWorld.zip`` (and ``queries-dev.json``), or the zip itself.
    queries : str or Path, optional
        Query file (id -> {question, answer, evidence, type}); default ``queries-dev.json``
        next to the zip. Evidence is timestamps joined by ``<and>``; ``N/A`` means no gold.
    """
    src = Path(path)
    archive = src / _LIHUA_ZIP if src.is_dir() else src
    passages = load_lihua_chats(archive)
    qfile = Path(queries) if queries is not None else archive.parent / _LIHUA_QUERIES
    # dirty records ("Time: ..." or "20260619_0815" evidence, stray words, no question) are
    # repaired or skipped with a logged count, never fatal: see evaluation.lihuaworld
    cleaned = load_lihua_questions(qfile, {p.id for p in passages})
    questions = [
        Question(q.id, q.text, [q.answer], q.evidence.gold, {"type": q.type})
        for q in cleaned.questions
    ]
    return Dataset("lihuaworld", passages, questions)


# -- MetaQA ------------------------------------------------------------------------------
@dataclass(frozen=True)
class KGQuestion:
    """A KGQA question: text with the topic entity unbracketed, plus gold answer entities.

    Examples
    --------
    >>> parse_metaqa_line("what movies did [Ann Smith] act in\\tA|B", "1-hop/dev/0", 1).topic_entity
    'Ann Smith'
    """

    id: str
    text: str
    topic_entity: str
    answers: list[str]
    hops: int
    qtype: str = ""


@dataclass
class KGDataset:
    """MetaQA: the KB triples and the questions per hop."""

    name: str
    triples: list[Triple]
    questions: list[KGQuestion]

    def to_dataset(self) -> Dataset:
        """As a :class:`Dataset` (no passages; topic entity and hops in question metadata)."""
        qs = [
            Question(
                q.id,
                q.text,
                q.answers,
                [],
                {"topic_entity": q.topic_entity, "hops": q.hops, "qtype": q.qtype},
            )
            for q in self.questions
        ]
        return Dataset(self.name, [], qs, self.triples)


_HOP_DIR = re.compile(r"^(\d+)-hop$")


def load_metaqa_questions(
    path: str | Path, *, hops: int | None = None, qtypes: str | Path | None = None
) -> list[KGQuestion]:
    """Questions of a MetaQA question file; ids ``<hops>-hop/<file stem>/<line index>``.

    ``qtypes`` (default: ``qa_<stem>_qtype.txt`` next to the file, when present) gives each
    question its type.

    Raises
    ------
    DocumentLoadError
        Unknown hop count (no ``N-hop`` folder and no ``hops``) or a bad line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "2-hop"; d.mkdir()
    >>> _ = (d / "dev.txt").write_text("who directed films starring [X]\\tA|B\\n")
    >>> q = load_metaqa_questions(d / "dev.txt")[0]
    >>> q.id, q.hops, q.topic_entity, q.answers
    ('2-hop/dev/0', 2, 'X', ['A', 'B'])
    """
    src = Path(path)
    if not src.is_file():
        raise DocumentLoadError(f"{src} is not a file")
    if hops is None:
        match = _HOP_DIR.match(src.parent.name)
        if match is None:
            raise DocumentLoadError(f"{src}: hop count not in the folder name; pass hops=")
        hops = int(match.group(1))
    tfile = Path(qtypes) if qtypes else src.parent / f"qa_{src.stem}_qtype.txt"
    types = tfile.read_text(encoding="utf-8").splitlines() if tfile.is_file() else []
    lines = src.read_text(encoding="utf-8").splitlines()
    return [
        parse_metaqa_line(
            line, f"{hops}-hop/{src.stem}/{i}", hops, types[i] if i < len(types) else ""
        )
        for i, line in enumerate(lines)
        if line.strip()
    ]


def answerable_metaqa(questions: Sequence[KGQuestion], path: str | Path) -> list[KGQuestion]:
    """The questions listed in ``answerable_with_reconstructed_kb.json`` (by id)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    keep = {f"{key}/{i}" for key, rows in data.items() for i in rows}
    return [q for q in questions if q.id in keep]


def parse_metaqa_line(line: str, qid: str, hops: int, qtype: str = "") -> KGQuestion:
    """Parse ``question with [topic]<TAB>ans1|ans2``."""
    try:
        raw, answers = line.rstrip("\n").split("\t")
    except ValueError as exc:
        raise DocumentLoadError(f"{qid}: expected 'question<TAB>answers', got {line!r}") from exc
    match = re.search(r"\[([^\]]+)\]", raw)
    if match is None:
        raise DocumentLoadError(f"{qid}: no [topic entity] in {raw!r}")
    text = raw.replace("[", "").replace("]", "")
    return KGQuestion(qid, text, match.group(1), answers.split("|"), hops, qtype)


def load_metaqa_kb(path: str | Path) -> list[Triple]:
    """Triples of a MetaQA ``kb.txt`` (``head|relation|tail`` per line)."""
    triples: list[Triple] = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("|")
            if len(parts) != 3:
                raise DocumentLoadError(f"{path}:{n}: expected head|relation|tail, got {line!r}")
            triples.append((parts[0], parts[1], parts[2]))
    return triples


def load_metaqa(
    path: str | Path,
    *,
    hops: Sequence[int] = (1, 2, 3),
    split: str = "dev",
    answerable_only: bool = True,
    limit_per_hop: int | None = None,
) -> KGDataset:
    """MetaQA KB and questions.

    Parameters
    ----------
    path : str or Path
        Folder with ``kb.txt``, ``N-hop/<split>.txt`` (+ ``qa_<split>_qtype.txt``) and
        ``answerable_with_reconstructed_kb.json``.
    hops : sequence of int
        Which hop sets to load.
    answerable_only : bool
        Keep only the questions listed as answerable with the reconstructed KB.
    limit_per_hop : int, optional
        First ``n`` (kept) questions of each hop set.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     _ = (root / "kb.txt").write_text("Kismet|directed_by|William Dieterle\\n")
    ...     (root / "1-hop").mkdir()
    ...     _ = (root / "1-hop" / "dev.txt").write_text(
    ...         "who directed [Kismet]\\tWilliam Dieterle\\n")
    ...     kg = load_metaqa(root, hops=(1,), answerable_only=False)
    >>> kg.triples, kg.questions[0].topic_entity, kg.questions[0].answers
    ([('Kismet', 'directed_by', 'William Dieterle')], 'Kismet', ['William Dieterle'])
    """
    src = Path(path)
    if not (src / _METAQA_KB).is_file():
        raise DocumentLoadError(f"{src} holds no {_METAQA_KB}")
    triples = load_metaqa_kb(src / _METAQA_KB)
    answerable: Mapping[str, list[int]] | None = None
    if answerable_only:
        answerable = _read_json(src / "answerable_with_reconstructed_kb.json")
    questions: list[KGQuestion] = []
    for hop in hops:
        qfile = src / f"{hop}-hop" / f"{split}.txt"
        lines = qfile.read_text(encoding="utf-8").splitlines() if qfile.is_file() else None
        if lines is None:
            raise DocumentLoadError(f"{qfile} does not exist")
        tfile = src / f"{hop}-hop" / f"qa_{split}_qtype.txt"
        qtypes = tfile.read_text(encoding="utf-8").splitlines() if tfile.is_file() else []
        keep = list(range(len(lines)))
        if answerable is not None:
            keep = sorted(set(answerable.get(f"{hop}-hop/{split}", [])))
        if limit_per_hop is not None:
            keep = keep[:limit_per_hop]
        for i in keep:
            qtype = qtypes[i] if i < len(qtypes) else ""
            questions.append(parse_metaqa_line(lines[i], f"{hop}-hop/{split}/{i}", hop, qtype))
    return KGDataset(src.name, triples, questions)
