"""``eval`` on LiHuaWorld: every method over the paper's chunks, evidence Recall@K per type.

:func:`run_lihuaworld_eval` is what ``graphrag-integrations eval --dataset
../shared/data/lihuaworld`` runs (the CLI dispatches here for a LiHuaWorld folder or zip):

* the chats are cut with the paper's chunking (1,200 tokens, 100 overlap; ``512/64`` as an
  option, :func:`parse_chunking`) and **every** method (``dense``, ``bm25``, ``qcg``...) is
  built over the same chunks with one shared embedder;
* the questions come from ``queries-dev.json`` or any file in that format (``--queries``);
  dirty evidence is repaired or skipped, records without a question skipped, all counted in
  the report's ``cleaning`` (never an abort);
* scores: :func:`~graphrag_integrations.evaluation.lihuaworld.evaluate_lihuaworld` (evidence
  Recall@K per type, ``Null`` excluded; judged QA accuracy when an answer LLM and a named
  judge are given).

QCG-RAG: unless ``qcg.query_set`` is given, the committed LiHuaWorld query set
(``data/qcg/lihuaworld.jsonl.gz``, package data) is used, and a clear error names the
generation command when it is absent (generating 511 chunks with an LLM is not something an
``eval`` should start silently). The paper's LiHuaWorld values (k = 2, n = 10, γ = 1.5) are
used here (:data:`LIHUAWORLD_PRESETS`): with QCG's defaults (``default`` ->
``lihuaworld-fused-hybrid``) or the paper's retrieval (``paper`` -> ``lihuaworld``). When
the query set is *partial* (its header lists the chats it covers completely,
``chats_done``), the corpus of every method is restricted to those chats and the questions
to those whose evidence lies in them: a closed sub-corpus, reported as such
(``corpus.subset``), so the figure is honest on a smaller corpus.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import GraphRAGError
from graphrag_integrations.evaluation.lihuaworld import (
    CHUNKINGS,
    RECALL_TYPES,
    LiHuaReport,
    chunk_lihuaworld,
    evaluate_lihuaworld,
    load_chat_documents,
    load_questions,
    question_in_subset,
)

logger = logging.getLogger(__name__)

__all__ = [
    "GENERATE_COMMAND",
    "LIHUAWORLD_PRESETS",
    "QUERY_SET_FILE",
    "LiHuaEvalReport",
    "format_lihua_report",
    "is_lihuaworld",
    "parse_chunking",
    "run_lihuaworld_eval",
]

#: File name of the committed LiHuaWorld query set in the QCG data folder.
QUERY_SET_FILE = "lihuaworld.jsonl.gz"
#: QCG's generic presets as their LiHuaWorld versions (the paper's LiHuaWorld k, n, γ).
LIHUAWORLD_PRESETS: dict[str, str] = {
    "default": "lihuaworld-fused-hybrid",
    "fused-hybrid": "lihuaworld-fused-hybrid",
    "fused": "lihuaworld-fused",
    "paper": "lihuaworld",
    "multihop-rag": "lihuaworld",
}
#: How the committed set is made (named in the error when it is missing).
GENERATE_COMMAND = (
    "python -m graphrag_integrations.evaluation.qcg_query_sets generate lihuaworld, then "
    "python -m graphrag_integrations.evaluation.qcg_query_sets snapshot lihuaworld "
    "runs/qcg/lihua.jsonl.gz"
)
_ARCHIVE = "LiHuaWorld.zip"
_QUERIES = "queries-dev.json"


def is_lihuaworld(path: str | Path) -> bool:
    """Whether ``path`` is a LiHuaWorld folder (holding ``LiHuaWorld.zip``) or that zip.

    Examples
    --------
    >>> is_lihuaworld("LiHuaWorld.zip"), is_lihuaworld("/nonexistent/folder")
    (True, False)
    """
    src = Path(path)
    return src.name == _ARCHIVE or (src.is_dir() and (src / _ARCHIVE).is_file())


def parse_chunking(value: str | Sequence[int]) -> tuple[int, int]:
    """``"1200/100"``, ``"512/64"``, ``"1200"`` or ``"512"`` (the paper's pairs) -> sizes.

    Raises
    ------
    ValueError
        Not ``SIZE/OVERLAP`` with ``0 <= OVERLAP < SIZE``, nor a named chunking.

    Examples
    --------
    >>> parse_chunking("512"), parse_chunking("300/30"), parse_chunking([1200, 100])
    ((512, 64), (300, 30), (1200, 100))
    """
    if not isinstance(value, str):
        size, overlap = (int(v) for v in value)
    elif value.strip() in CHUNKINGS:
        size, overlap = CHUNKINGS[value.strip()]
    else:
        head, sep, tail = value.partition("/")
        try:
            size, overlap = int(head), int(tail)
        except ValueError:
            raise ValueError(
                f"chunking {value!r} is not SIZE/OVERLAP (e.g. 1200/100) nor one of "
                f"{sorted(CHUNKINGS)}"
            ) from None
        if not sep:
            raise ValueError(f"chunking {value!r} is not SIZE/OVERLAP")
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"chunking needs 0 <= overlap < size, got {size}/{overlap}")
    return size, overlap


@dataclass
class LiHuaEvalReport:
    """Every method's :class:`~graphrag_integrations.evaluation.lihuaworld.LiHuaReport` on
    one chunked LiHuaWorld corpus.

    Examples
    --------
    >>> LiHuaEvalReport({"chats": 2, "chunks": 3}, (5,)).to_json()["corpus"]
    {'chats': 2, 'chunks': 3}
    """

    corpus: dict[str, Any]
    ks: tuple[int, ...]
    results: dict[str, LiHuaReport] = field(default_factory=dict)
    index_s: dict[str, float] = field(default_factory=dict)
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"dataset", "corpus", "results": {METHOD: {...}}}``."""
        results: dict[str, Any] = {}
        for name, rep in self.results.items():
            row = rep.to_json()
            row["index_s"] = round(self.index_s.get(name, 0.0), 3)
            if name in self.notes:
                row["method_notes"] = self.notes[name]
            results[name] = row
        return {"dataset": "lihuaworld", "corpus": self.corpus, "results": results}


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_lihua_report(report: LiHuaEvalReport) -> str:
    """Recall table per type (``Single`` / ``Multi`` / ``all``), ratios against ``dense``.

    Examples
    --------
    >>> rep = LiHuaReport("dense", {"Single": {5: 50.0}, "all": {5: 50.0}}, {"Single": 2}, {})
    >>> report = LiHuaEvalReport({"chats": 2, "chunks": 3, "questions": 2}, (5,), {"dense": rep})
    >>> print(format_lihua_report(report))  # doctest: +NORMALIZE_WHITESPACE
    lihuaworld: 2 chats, 3 chunks, 2 questions
    method  Single R@5  Multi R@5  all R@5  acc  p50 ms  index s
    ------  ----------  ---------  -------  ---  ------  -------
    dense         50.0          -     50.0    -       -     0.00
    questions scored per type: {'Single': 2} (Null excluded)
    """
    from graphrag_integrations.evaluation.report import _table

    c = report.corpus
    title = f"lihuaworld: {c.get('chats')} chats, {c.get('chunks')} chunks"
    title += f", {c.get('questions')} questions"
    if c.get("chunking"):
        title += f" (chunking {c['chunking'][0]}/{c['chunking'][1]})"
    if c.get("subset"):
        title += f"; CLOSED SUB-CORPUS of a partial query set: {c['subset']}"
    cols = [(t, k) for k in report.ks for t in (*RECALL_TYPES, "all")]
    header = ["method", *(f"{t} R@{k}" for t, k in cols), "acc", "p50 ms", "index s"]
    rows = []
    for name, rep in report.results.items():
        js = rep.to_json()
        rows.append(
            [
                name,
                *(_fmt(rep.recall.get(t, {}).get(k)) for t, k in cols),
                _fmt(rep.accuracy.get("all")),
                _fmt(js.get("latency_p50_ms")),
                _fmt(report.index_s.get(name, 0.0), 2),
            ]
        )
    out = [title, _table(header, rows)]
    counted = {name: rep.counted for name, rep in report.results.items()}
    if counted:
        first = next(iter(counted.values()))
        out.append(f"questions scored per type: {dict(sorted(first.items()))} (Null excluded)")
    base = report.results.get("dense")
    if base is not None and len(report.results) > 1:
        ratio_rows = []
        for name, rep in report.results.items():
            if name == "dense":
                continue
            ratio_rows.append(
                [
                    name,
                    *(
                        _fmt(_ratio(rep.recall.get(t, {}).get(k), base.recall.get(t, {}).get(k)), 2)
                        for t, k in cols
                    ),
                ]
            )
        out += ["", _table(["vs dense", *(f"{t} R@{k}" for t, k in cols)], ratio_rows)]
    judged = [r for r in report.results.values() if r.judge]
    if judged:
        out.append(f"judge: {judged[0].judge} ({sum(r.judge_failures for r in judged)} unscored)")
    return "\n".join(out)


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return value / base


def _qcg_query_set(
    given: Any, directory: Path, chunking: tuple[int, int]
) -> tuple[Any, set[str] | None, dict[str, Any]]:
    """The QCG query set to use on LiHuaWorld, the chats of its closed sub-corpus (``None``:
    the whole corpus) and what to report about it."""
    from graphrag_integrations.methods.qcg.generation import QuerySet

    if isinstance(given, str) and given.lower() == "none":
        return given, None, {"query_set": "none (every chunk generated by the LLM)"}
    if given is None:
        file = directory / QUERY_SET_FILE
        if not file.is_file():
            raise GraphRAGError(
                f"no committed LiHuaWorld query set for qcg ({file.name} in the package data "
                f"folder data/qcg/); generate it with `{GENERATE_COMMAND}`, or pass "
                "--option qcg.query_set=FILE (qcg.query_set=none generates every chunk's "
                "pairs with the LLM during the eval)"
            )
        qs, source = QuerySet.load(file), f"committed {file.name}"
    elif isinstance(given, QuerySet):
        qs, source = given, "given QuerySet"
    else:
        qs, source = QuerySet.load(given), str(given)
    recorded = qs.extra.get("chunking")
    if recorded is not None and tuple(recorded) != chunking:
        raise ValueError(
            f"the qcg query set ({source}) was generated for {recorded[0]}/{recorded[1]} "
            f"chunks, not {chunking[0]}/{chunking[1]}: generate one for this chunking "
            "(lihua-generate --chunking) or drop --chunking"
        )
    subset: set[str] | None = None
    if qs.extra.get("partial") and qs.extra.get("chats_done") is not None:
        subset = {str(c) for c in qs.extra["chats_done"]}
    info = {
        "query_set": source,
        "generator": qs.model,
        "prompt_hash": qs.prompt_hash,
        "M": qs.M,
        "chunks_in_set": len(qs),
        "partial": bool(qs.extra.get("partial", False)),
    }
    return qs, subset, info


def run_lihuaworld_eval(
    path: str | Path,
    methods: Sequence[str],
    *,
    queries: str | Path | None = None,
    chunking: str | Sequence[int] = (1200, 100),
    embedder: Any = None,
    ks: Sequence[int] = (5, 10),
    options: Mapping[str, Mapping[str, Any]] | None = None,
    llm: Any = None,
    judge: Any = None,
    judge_name: str | None = None,
    limit: int | None = None,
    tokenizer: Any = None,
    query_set_dir: str | Path | None = None,
    variants: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
    show_progress: bool = True,
) -> LiHuaEvalReport:
    """Build ``methods`` over the chunked LiHuaWorld chats and score them.

    Parameters
    ----------
    path : str or Path
        LiHuaWorld folder (``LiHuaWorld.zip`` + ``queries-dev.json``) or the zip.
    methods : sequence of str
        Registered passage methods (``dense``, ``bm25``, ``qcg``...).
    queries : str or Path, optional
        Any file in the dev-query format (default: ``queries-dev.json`` next to the zip).
    chunking : str or (int, int)
        ``SIZE/OVERLAP`` in tokens (:func:`parse_chunking`); the paper's 1,200 / 100 default.
    embedder : Embedder, str or None
        Shared by every method (``None``: all-MiniLM-L6-v2).
    ks : sequence of int
        Recall depths; the answer LLM reads the top ``min(ks)`` chunks.
    options : mapping of method name to options, optional
        As for :func:`~graphrag_integrations.evaluation.harness.run_eval`.
    llm, judge : optional
        Answer LLM and judge LLM: both given -> judged QA accuracy.
    judge_name : str, optional
        Name recorded for the judge.
    limit : int, optional
        Keep the first ``limit`` questions (after any sub-corpus restriction).
    tokenizer : optional
        Chunk tokenizer (default: the all-MiniLM-L6-v2 word pieces, the generation's).
    query_set_dir : str or Path, optional
        Where the committed QCG query set lives (default: the package data folder).
    variants : mapping of label to (method, query options), optional
        Extra rows scored on a method's index already built, with other query-time options
        (e.g. ``{"qcg h=0": ("qcg", {"h": 0})}``): ablations in one run, one build. The
        method must expose ``query_params`` (as QCG does).
    show_progress : bool
        Progress bars.

    Raises
    ------
    GraphRAGError
        ``qcg`` without a query set and none committed (the message names the command).
    ValueError
        A method that needs more than passages, an option for a method not run, a query set
        made for another chunking, bad ``ks`` or ``limit``.

    Examples
    --------
    See ``tests/unit/evaluation/test_lihuaworld_eval.py``; the CLI runs it as
    ``graphrag-integrations eval --method dense,bm25,qcg --dataset ../shared/data/lihuaworld``.
    """
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.evaluation.registry import get_registration
    from graphrag_integrations.methods.qcg.registration import QUERY_SET_DIR

    if not methods:
        raise ValueError("no method to evaluate")
    if not ks or min(ks) < 1:
        raise ValueError(f"recall depths must be >= 1, got {list(ks)}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    size_overlap = parse_chunking(chunking)
    regs = {name: get_registration(name) for name in methods}
    given = {name: dict(opts) for name, opts in (options or {}).items()}
    stray = sorted(set(given) - set(regs))
    if stray:
        raise ValueError(f"options given for {', '.join(stray)}, which is not evaluated")
    for label, (base, overrides) in (variants or {}).items():
        if base not in regs or label in regs:
            raise ValueError(f"variant {label!r}: method {base!r} is not evaluated (or clashes)")
        query_only = set(overrides) - set(regs[base].query_params.names())
        if query_only:
            raise ValueError(f"variant {label!r}: {sorted(query_only)} are not query options")
    for name, reg in regs.items():
        if set(reg.inputs) - {"passages"}:
            raise ValueError(
                f"method {name!r} needs {', '.join(sorted(reg.inputs))}; LiHuaWorld has passages"
            )
    notes: dict[str, dict[str, Any]] = {}
    subset: set[str] | None = None
    if "qcg" in regs:
        opts = given.setdefault("qcg", {})
        chosen = opts.get("preset", "default")
        opts["preset"] = LIHUAWORLD_PRESETS.get(chosen, chosen)
        folder = Path(query_set_dir) if query_set_dir is not None else QUERY_SET_DIR
        opts["query_set"], subset, info = _qcg_query_set(
            opts.get("query_set"), folder, size_overlap
        )
        notes["qcg"] = {**info, "preset": opts["preset"]}
    parsed = {name: reg.parse_options(given.get(name, {})) for name, reg in regs.items()}
    for reg in regs.values():
        reg.resolve_builder()

    src = Path(path)
    chats = load_chat_documents(src)
    qfile = (
        Path(queries) if queries is not None else (src if src.is_dir() else src.parent) / _QUERIES
    )
    question_set = load_questions(qfile, {c.id for c in chats})
    corpus: dict[str, Any] = {"chats_total": len(chats), "chunking": list(size_overlap)}
    if subset is not None:
        kept = [q for q in question_set.questions if question_in_subset(q.evidence, q.type, subset)]
        chats = [c for c in chats if c.id in subset]
        corpus["subset"] = (
            f"{len(chats)} of {corpus['chats_total']} chats, "
            f"{len(kept)} of {len(question_set.questions)} questions"
        )
        corpus["questions_outside_subset"] = len(question_set.questions) - len(kept)
        logger.warning(
            "qcg's query set is partial: evaluating every method on its closed sub-corpus (%s)",
            corpus["subset"],
        )
        question_set = replace(question_set, questions=kept)
    if limit is not None:
        question_set = replace(question_set, questions=question_set.questions[:limit])
    chunks = chunk_lihuaworld(chats, *size_overlap, tokenizer=tokenizer)
    corpus.update(
        {
            "chats": len(chats),
            "chunks": len(chunks),
            "questions": len(question_set.questions),
            "cleaning": question_set.counts(),
        }
    )
    report = LiHuaEvalReport(corpus, tuple(ks), notes=notes)
    shared = as_embedder(embedder)
    shared.embed_query("warm-up")  # load the model outside every timed section
    for name, reg in regs.items():
        logger.info("building %s over %d LiHuaWorld chunks", name, len(chunks))
        start = time.perf_counter()
        retriever = reg.build(
            shared, {"passages": chunks}, parsed[name], show_progress=show_progress
        )
        report.index_s[name] = time.perf_counter() - start
        gen_report = getattr(retriever, "generation_report", None)
        if callable(gen_report):
            notes.setdefault(name, {})["generation"] = gen_report()
        runs = [(name, parsed[name].query_params)]
        for label, (base, overrides) in (variants or {}).items():
            if base == name:
                merged = {**given.get(name, {}), **overrides}
                runs.append((label, reg.parse_options(merged).query_params))
        for label, query_params in runs:
            run = retriever
            if label != name:  # same index, other query parameters
                run = retriever.as_retriever(query_params=query_params)
                report.index_s[label] = report.index_s[name]
            report.results[label] = evaluate_lihuaworld(
                label,
                run,
                question_set,
                ks=ks,
                llm=llm,
                judge=judge,
                judge_name=judge_name,
                show_progress=show_progress,
            )
    return report
