"""LiHuaWorld evaluation as QCG-RAG ran it: chunked chats, evidence recall per type, judged QA.

* **Chunking**: the paper's (after MiniRAG) 1,200 tokens with 100 overlap, or 512 / 64, through
  :class:`~graphrag_integrations.core.text.chunking.TokenChunker` (default tokenizer: the
  all-MiniLM-L6-v2 word pieces, the embedder's). Chunk ids follow the paper:
  ``"<timestamp>-<chunk index>"`` (``"20261219_19:00-0"``), ``doc_id`` = the chat timestamp.
* **Evidence**: a question's evidence is chat timestamps joined by ``<and>``; it maps to every
  chunk of those chats. :func:`parse_evidence` repairs the unambiguous dirt of the public file
  (``"Time: 20260930_16:00"``, ``"20260619_0815"``, spaces) and skips what is not a chat of
  the corpus (a stray word such as ``"What"``, an unknown timestamp), logging and counting it;
  one bad record never aborts a run.
* **Evidence Recall@K**: for each question with evidence, the share of its evidence chats
  having at least one chunk among the top-K retrieved chunks; averaged per question type
  (``Single``, ``Multi``) and overall; ``Null`` questions (no evidence) are excluded.
* **QA accuracy** (optional): an answer LLM writes a reply from the top-K chunks (response
  prompt C.2 of the QCG paper, plus the context and question), a *named* judge LLM scores it
  against the gold answer (evaluation prompt C.3, ``{"score": 0|1}``); replies the judge
  leaves unparseable are counted, not guessed. The benchmark's own word-overlap "accuracy"
  is not used (see ``NOTES.md``).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.core.types import Passage, Retriever
from graphrag_integrations.errors import DocumentLoadError

logger = logging.getLogger(__name__)

#: The paper's chunking settings: (chunk_size, chunk_overlap) in tokens.
CHUNKINGS: dict[str, tuple[int, int]] = {"1200": (1200, 100), "512": (512, 64)}
#: Question types scored for evidence recall (``Null`` has no evidence).
RECALL_TYPES = ("Single", "Multi")

_STAMP = re.compile(r"(\d{8})_(\d{2}):?(\d{2})")
_NO_EVIDENCE = {"", "n/a", "na", "none", "null"}

RESPONSE_PROMPT = """\
---Role---
You are a helpful assistant responding to questions about data in the tables provided.

---Goal---
Generate a response of the target length and format that responds to the user's question, \
summarizing all information in the input data tables appropriate for the response length and \
format, and incorporating any relevant general knowledge.
If you don't know the answer, just say so. Do not make anything up.
Do not include information where the supporting evidence for it is not provided.

---Target response length and format---
Multiple Paragraphs

Add sections and commentary to the response as appropriate for the length and format. Style \
the response in markdown.

---Data tables---
{context}

---Question---
{question}
"""

JUDGE_PROMPT = """\
---Role---
You are a helpful evaluation assistant.
You will be given a question, a gold-standard answer, and a candidate answer generated via \
retrieval-augmented generation (RAG).

---Goal---
Evaluate the candidate answer against the gold-standard answer based on factual accuracy and \
completeness in answering the question.

Scoring Criteria:
- score=1 (Correct): The candidate answer is factually accurate and fully or reasonably \
paraphrases the gold-standard answer.
- score=0 (Incorrect): The candidate answer is factually incorrect, irrelevant, incomplete, \
or does not answer the question.

---Output Format---
Provide your evaluation in the following JSON format:
{
"score": X
}
where X is either 1 or 0.

---Question---
{question}

---Gold-standard answer---
{gold}

---Candidate answer---
{candidate}
"""


# -- evidence -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Evidence:
    """A question's evidence after cleaning.

    Parameters
    ----------
    gold : list of str
        Chat timestamps ``YYYYMMDD_HH:MM`` of the corpus (deduplicated, in order).
    repaired : list of str
        Raw items that needed a repair to become a timestamp (``"Time: ..."``, no colon).
    skipped : list of str
        Raw items dropped: not a timestamp, or not a chat of the corpus.
    """

    gold: list[str]
    repaired: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def parse_evidence(raw: Any, known_ids: Sequence[str] | set[str], *, qid: str = "?") -> Evidence:
    """Clean one evidence field (``<and>``-joined timestamps; ``N/A`` for none).

    An item is repaired when exactly one ``YYYYMMDD_HH[:]MM`` timestamp can be read from it
    and it names a chat of the corpus; everything else is skipped with a warning.

    Examples
    --------
    >>> ids = {"20260930_16:00", "20260619_08:15"}
    >>> e = parse_evidence("Time: 20260930_16:00<and>20260619_0815<and>What", ids)
    >>> e.gold, e.repaired, e.skipped
    (['20260930_16:00', '20260619_08:15'], ['Time: 20260930_16:00', '20260619_0815'], ['What'])
    >>> parse_evidence("N/A", ids).gold
    []
    """
    text = "" if raw is None else str(raw).strip()
    if text.lower() in _NO_EVIDENCE:
        return Evidence([])
    known = set(known_ids)
    gold: list[str] = []
    repaired: list[str] = []
    skipped: list[str] = []
    for item in (part.strip() for part in text.split("<and>")):
        if not item:
            continue
        matches = _STAMP.findall(item)
        stamp = "{}_{}:{}".format(*matches[0]) if len(matches) == 1 else None
        if stamp is None or stamp not in known:
            skipped.append(item)
            logger.warning(
                "LiHuaWorld query %s: evidence item %r is not a chat of the corpus; skipped",
                qid,
                item,
            )
            continue
        if item != stamp:
            repaired.append(item)
        if stamp not in gold:
            gold.append(stamp)
    return Evidence(gold, repaired, skipped)


@dataclass(frozen=True)
class LiHuaQuestion:
    """One LiHuaWorld question with cleaned evidence."""

    id: str
    text: str
    answer: str
    type: str
    evidence: Evidence


@dataclass(frozen=True)
class QuestionSet:
    """Questions of a query file and what cleaning their evidence did."""

    questions: list[LiHuaQuestion]
    repaired_items: int
    skipped_items: int
    questions_without_evidence: int  # non-Null questions left with no usable evidence
    skipped_records: int  # records that are not a question at all

    def counts(self) -> dict[str, int]:
        """JSON-ready cleaning counts."""
        return {
            "questions": len(self.questions),
            "repaired_evidence_items": self.repaired_items,
            "skipped_evidence_items": self.skipped_items,
            "questions_left_without_evidence": self.questions_without_evidence,
            "skipped_records": self.skipped_records,
        }


def load_questions(file: str | Path, known_ids: Sequence[str] | set[str]) -> QuestionSet:
    """Read a LiHuaWorld query file (``id -> {question, answer, evidence, type}``).

    Records without a question text are skipped (counted); dirty evidence is cleaned by
    :func:`parse_evidence`.

    Raises
    ------
    DocumentLoadError
        If the file is missing or not a JSON object.
    """
    import json

    path = Path(file)
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DocumentLoadError(f"{path}: cannot read the LiHuaWorld queries: {exc}") from exc
    if not isinstance(items, Mapping):
        raise DocumentLoadError(f"{path}: expected a JSON object id -> query")
    known = set(known_ids)
    out: list[LiHuaQuestion] = []
    repaired = skipped = empty = bad = 0
    for qid, item in items.items():
        if not isinstance(item, Mapping) or not str(item.get("question", "")).strip():
            bad += 1
            logger.warning("LiHuaWorld record %s has no question; skipped", qid)
            continue
        evidence = parse_evidence(item.get("evidence"), known, qid=str(qid))
        qtype = str(item.get("type", "")).strip()
        repaired += len(evidence.repaired)
        skipped += len(evidence.skipped)
        if not evidence.gold and qtype != "Null":
            empty += 1
        out.append(
            LiHuaQuestion(
                str(qid), str(item["question"]), str(item.get("answer", "")), qtype, evidence
            )
        )
    result = QuestionSet(out, repaired, skipped, empty, bad)
    logger.info("LiHuaWorld queries %s: %s", path, result.counts())
    return result


# -- corpus -------------------------------------------------------------------------------
_LIHUA_TIME = re.compile(r"(\d{8})_(\d{2}):?(\d{2})")


def lihua_timestamp(name: str) -> str:
    """Normalise ``YYYYMMDD_HHMM`` or ``YYYYMMDD_HH:MM`` to the evidence form ``YYYYMMDD_HH:MM``.

    Examples
    --------
    >>> lihua_timestamp("week1/20260108_1900.txt")
    '20260108_19:00'
    """
    match = _LIHUA_TIME.search(name)
    if match is None:
        raise DocumentLoadError(f"no YYYYMMDD_HHMM timestamp in {name!r}")
    day, hour, minute = match.groups()
    return f"{day}_{hour}:{minute}"


def load_lihua_chats(archive: str | Path) -> list[Passage]:
    """The LiHuaWorld chat files of ``LiHuaWorld.zip``: one passage each, id = timestamp.

    The first line ``Time: YYYYMMDD_HH:MM`` is authoritative (some files are named by day);
    passages are sorted by timestamp.

    Raises
    ------
    DocumentLoadError
        A missing archive or two files with one timestamp.
    """
    archive = Path(archive)
    if not archive.is_file():
        raise DocumentLoadError(f"{archive} does not exist")
    passages: list[Passage] = []
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            if info.is_dir() or not info.filename.endswith(".txt"):
                continue
            text = io.TextIOWrapper(zf.open(info), encoding="utf-8").read().strip()
            first = text.split("\n", 1)[0]
            stamp = lihua_timestamp(first if first.startswith("Time:") else info.filename)
            week = Path(info.filename).parent.name
            passages.append(
                Passage(
                    id=stamp,
                    text=text,
                    doc_id=stamp,
                    metadata={"title": stamp, "week": week, "source": info.filename},
                )
            )
    passages.sort(key=lambda p: p.id)
    if len({p.id for p in passages}) != len(passages):
        raise DocumentLoadError(f"{archive}: two chat files share a timestamp")
    return passages


def load_chat_documents(path: str | Path) -> list[Passage]:
    """The 442 chats (one passage each, id = timestamp) from a folder or ``LiHuaWorld.zip``."""
    src = Path(path)
    return load_lihua_chats(src / "LiHuaWorld.zip" if src.is_dir() else src)


def chunk_lihuaworld(
    chats: Sequence[Passage],
    chunk_size: int = 1200,
    chunk_overlap: int = 100,
    tokenizer: Any = None,
) -> list[Passage]:
    """Cut chats into chunks with ids ``"<timestamp>-<index>"`` (the paper's chunk ids).

    Parameters
    ----------
    chats : sequence of Passage
        :func:`load_chat_documents` output.
    chunk_size, chunk_overlap : int
        Tokens; the paper uses 1,200 / 100 and compares 512 / 64.
    tokenizer : optional
        Passed to :class:`~graphrag_integrations.core.text.chunking.TokenChunker`.

    Examples
    --------
    >>> from graphrag_integrations.testing.word_tokenizer import WordTokenizer
    >>> chats = [Passage("20260101_10:00", "a b c d e f", "20260101_10:00")]
    >>> [(p.id, p.text) for p in chunk_lihuaworld(chats, 4, 1, WordTokenizer())]
    [('20260101_10:00-0', 'a b c d'), ('20260101_10:00-1', 'd e f')]
    """
    from graphrag_integrations.core.text.chunking import TokenChunker

    chunker = TokenChunker(chunk_size, chunk_overlap, tokenizer)
    out: list[Passage] = []
    for chat in chats:
        for i, chunk in enumerate(chunker.split(chat.text)):
            meta = {**chat.metadata, "chunk_index": i, "start_char": chunk.start_char}
            out.append(Passage(f"{chat.id}-{i}", chunk.text, chat.id, meta))
    return out


# -- scoring ------------------------------------------------------------------------------
def evidence_recall(retrieved: Sequence[Passage], gold: Sequence[str], k: int) -> float:
    """Share of the ``gold`` chats with a chunk among the first ``k`` retrieved.

    Examples
    --------
    >>> hits = [Passage("a-0", "", "a"), Passage("c-1", "", "c")]
    >>> evidence_recall(hits, ["a", "b"], 2), evidence_recall(hits, ["c"], 1)
    (0.5, 0.0)
    """
    if not gold:
        raise ValueError("evidence recall is undefined without evidence")
    found = {p.doc_id for p in retrieved[:k]}
    return sum(1 for g in gold if g in found) / len(gold)


@dataclass
class LiHuaReport:
    """Scores of one retriever on LiHuaWorld."""

    method: str
    recall: dict[str, dict[int, float]]  # type ("all", "Single", "Multi") -> k -> percent
    counted: dict[str, int]  # questions scored per type
    cleaning: dict[str, int]
    accuracy: dict[str, float] = field(default_factory=dict)  # type -> percent
    judge: str | None = None
    judge_failures: int = 0
    latencies_s: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready report (percentages 0-100, rounded)."""
        from graphrag_integrations.evaluation.metrics import latency_percentiles

        return {
            "method": self.method,
            "evidence_recall": {
                t: {f"R@{k}": round(v, 2) for k, v in sorted(by_k.items())}
                for t, by_k in self.recall.items()
            },
            "questions_scored": dict(self.counted),
            "cleaning": dict(self.cleaning),
            "accuracy": {t: round(v, 2) for t, v in self.accuracy.items()},
            "judge": self.judge,
            "judge_failures": self.judge_failures,
            **latency_percentiles(self.latencies_s),
        }


def _complete(llm: Any, prompt: str) -> str:
    """One LLM call (an ``LLMClient``, or anything ``as_llm`` wraps)."""
    if callable(getattr(llm, "complete", None)):
        reply = llm.complete(prompt)
        return reply if isinstance(reply, str) else str(getattr(reply, "text", reply))
    if callable(llm):
        return str(llm(prompt))
    raise TypeError(f"expected an LLM client or a callable, got {type(llm).__name__}")


def judge_score(reply: str) -> int | None:
    """The ``score`` (0 or 1) of a judge reply, ``None`` when it holds none.

    Examples
    --------
    >>> judge_score('```json\\n{"score": 1}\\n```'), judge_score("score: maybe")
    (1, None)
    """
    from graphrag_integrations.core.llm import extract_json
    from graphrag_integrations.errors import LLMOutputError

    try:
        value = extract_json(reply)
    except LLMOutputError:
        match = re.search(r'"?score"?\s*[:=]\s*([01])\b', reply)
        return int(match.group(1)) if match else None
    score = value.get("score") if isinstance(value, Mapping) else None
    if score in (0, 1, "0", "1"):
        return int(score)
    return None


def evaluate_lihuaworld(
    name: str,
    retriever: Retriever,
    questions: QuestionSet,
    *,
    ks: Sequence[int] = (5, 10),
    llm: Any = None,
    judge: Any = None,
    judge_name: str | None = None,
    show_progress: bool = False,
    on_question: Callable[[LiHuaQuestion, list[Any]], None] | None = None,
) -> LiHuaReport:
    """Evidence Recall@K per type and, with ``llm`` and ``judge``, judged QA accuracy.

    Parameters
    ----------
    name : str
        Method name for the report.
    retriever : Retriever
        Queried once per question at ``max(ks)``.
    questions : QuestionSet
        From :func:`load_questions`.
    ks : sequence of int
        Recall depths; the answer LLM reads the top ``min(ks)`` chunks (paper: K = 5).
    llm, judge : optional
        Answer and judge LLMs (``LLMClient`` or ``prompt -> text`` callables); accuracy is
        computed only when both are given.
    judge_name : str, optional
        Name recorded for the judge (default: its ``model_name``).

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> chunks = [Passage("20260101_10:00-0", "Li Hua broke a lamp.", "20260101_10:00"),
    ...           Passage("20260102_10:00-0", "Wolfgang likes films.", "20260102_10:00")]
    >>> q = LiHuaQuestion("1", "What did Li Hua break?", "a lamp", "Single",
    ...                   Evidence(["20260101_10:00"]))
    >>> report = evaluate_lihuaworld("bm25", BM25Retriever(chunks), QuestionSet([q], 0, 0, 0, 0),
    ...                              ks=(1,))
    >>> report.to_json()["evidence_recall"]
    {'all': {'R@1': 100.0}, 'Single': {'R@1': 100.0}}
    """
    import time

    from graphrag_integrations.core.progress import progress

    if not ks or min(ks) < 1:
        raise ValueError(f"recall depths must be >= 1, got {list(ks)}")
    depth, read = max(ks), min(ks)
    sums: dict[str, dict[int, float]] = {}
    counted: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    failures = 0
    latencies: list[float] = []
    do_qa = llm is not None and judge is not None
    for q in progress(questions.questions, f"{name}: LiHuaWorld", enabled=show_progress):
        start = time.perf_counter()
        hits = retriever.retrieve(q.text, k=depth)
        latencies.append(time.perf_counter() - start)
        passages = [h.passage for h in hits]
        if on_question is not None:
            on_question(q, hits)
        if q.evidence.gold and q.type != "Null":
            for group in ("all", q.type):
                counted[group] += 1
                bucket = sums.setdefault(group, dict.fromkeys(ks, 0.0))
                for k in ks:
                    bucket[k] += evidence_recall(passages, q.evidence.gold, k)
        if do_qa:
            context = "\n\n".join(f"[{p.id}]\n{p.text}" for p in passages[:read])
            answer = _complete(llm, RESPONSE_PROMPT.format(context=context, question=q.text))
            verdict = judge_score(
                _complete(
                    judge,
                    JUDGE_PROMPT.replace("{question}", q.text)
                    .replace("{gold}", q.answer)
                    .replace("{candidate}", answer),
                )
            )
            if verdict is None:
                failures += 1
                logger.warning("judge gave no score for question %s; not counted", q.id)
                continue
            for group in ("all", q.type):
                judged[group] += 1
                correct[group] += verdict
    recall = {
        group: {k: 100.0 * total[k] / counted[group] for k in ks} for group, total in sums.items()
    }
    accuracy = {g: 100.0 * correct[g] / judged[g] for g in judged}
    label = judge_name or (str(getattr(judge, "model_name", "judge")) if judge else None)
    return LiHuaReport(
        name,
        recall,
        dict(counted),
        questions.counts(),
        accuracy,
        label if do_qa else None,
        failures,
        latencies,
    )


# -- closed sub-corpus (a partial generated query set) ------------------------------------
# The chats a query set covers completely: methods.qcg.resumable.covered_documents.
def question_in_subset(evidence: Evidence, qtype: str, chats: set[str]) -> bool:
    """Whether a question belongs to the sub-corpus ``chats``.

    ``Null`` questions (no evidence by design) always do; another question does when it has
    evidence and every evidence chat is in ``chats``.

    Examples
    --------
    >>> question_in_subset(Evidence(["a", "b"]), "Multi", {"a"})
    False
    >>> question_in_subset(Evidence([]), "Null", set()), question_in_subset(Evidence([]), "", {"a"})
    (True, False)
    """
    if qtype == "Null":
        return True
    return bool(evidence.gold) and set(evidence.gold) <= chats


def closed_question_records(
    items: Mapping[str, Any], known_ids: Sequence[str] | set[str], chats: set[str]
) -> dict[str, Any]:
    """The records of a raw query file (``id -> record``) in the sub-corpus ``chats``.

    Records are kept verbatim (dirty evidence included, so ``eval`` reports the same
    cleaning); the evidence is read with :func:`parse_evidence` against ``known_ids`` (the
    whole corpus) and :func:`question_in_subset` decides. Records without a question are
    dropped.

    Examples
    --------
    >>> raw = {"1": {"question": "Q?", "evidence": "Time: 20260101_10:00", "type": "Single"},
    ...        "2": {"question": "R?", "evidence": "20260101_10:00<and>20260102_10:00",
    ...              "type": "Multi"}}
    >>> ids = {"20260101_10:00", "20260102_10:00"}
    >>> list(closed_question_records(raw, ids, {"20260101_10:00"}))
    ['1']
    """
    out: dict[str, Any] = {}
    for qid, item in items.items():
        if not isinstance(item, Mapping) or not str(item.get("question", "")).strip():
            continue
        evidence = parse_evidence(item.get("evidence"), known_ids, qid=str(qid))
        if question_in_subset(evidence, str(item.get("type", "")).strip(), chats):
            out[str(qid)] = item
    return out
