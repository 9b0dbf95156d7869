"""LLM-guided candidate refinement (paper 4.1) with the appendix G prompt.

For each training question the candidate pool (:mod:`.candidates`) is rendered as numbered
paths, and the LLM selects the relevant ones; their triples are the refined supervision
``G+`` (:func:`.candidates.ground`). Two ways to ask (``RefinementParams.mode``):

* ``"generate"`` (the paper): a free-text reply, parsed for ``ans: Path i`` lines
  (:func:`parse_selection`). A reply without a valid line falls back to the weak
  (shortest-path) labels of that question - logged and counted in :attr:`Refiner.stats`;
* ``"choice"`` (default): every option ``"ans: Path i\\n"`` is scored by the model's summed
  log-probability after the prompt (:func:`score_continuations`); options whose probability
  (softmax over options) is at least ``choice_ratio`` times the best one's are kept. Chosen as
  the default because the offline 135M model rarely writes a parseable free-text reply.
  ``RefinementParams.choice_scoring`` picks what is scored (the default ``"label"`` is the
  above):

  - ``"calibrated"``: contextual calibration (Zhao et al. 2021, "Calibrate before use"):
    each label's log-probability minus its log-probability after the *content-free* prompt
    (:func:`content_free_prompt`: the same prompt with paths, question and answer replaced by
    a placeholder), so a preference for a label or position that does not depend on the
    paths cancels. One extra scoring per option count (cached with the selections);
  - ``"content"``: the continuation ``"ans: <rendered path>\\n"`` (:func:`content_option`)
    scored by its mean per-token log-probability: which path the model would copy;
  - ``"permuted"``: permutation de-biasing (Zheng et al. 2024, "Large Language Models Are
    Not Robust Multiple Choice Selectors"): the label scores are computed a second time with
    the paths listed in reverse order (``Path j`` of that prompt names path ``n - 1 - j``),
    mapped back to the paths and averaged with the given-order scores
    (:func:`permuted_scores`), so a preference for a position or label cancels to first
    order. One extra scoring per question, cached in the label record as
    ``reversed_scores`` (the reversed prompt's scores by label, as scored);
  - ``"batch"``: Batch Calibration (Zhou et al. 2024) in log space, no extra LLM call: each
    option's label score minus the mean centred label score of its position over the
    questions labelled together (:func:`position_bias`, :func:`batch_calibrate`; positions
    counted from the end of the list by default, ``batch_position``). The batch is fitted by
    :meth:`Refiner.fit_batch` (``RegIndex.supervision`` does it for its questions).

With ``require_answer_path`` a selection without any q->a path gets the best-ranked ``P_sp``
candidate added, or with ``answer_path_fallback="all"`` every q->a shortest path (the
question's weak labels); logged, counted. Results are appended to a JSONL cache keyed by the
question id and a hash of prompt, mode and what was scored, so a refinement run resumes where
it stopped; label, calibrated, permuted and batch scoring share their records (the label
scores; a record's ``scores`` are indexed by the path's number in the prompt, ``order`` lists
the path numbers best-scored first). In choice mode the selection is made from the cached
scores on every read (``choice_ratio``, and two options off by default: ``choice_max`` keeps
at most that many options, ``choice_options="answer_paths"`` only q->a paths), so changing
them needs no new LLM call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.core.llm.protocol import estimate_tokens
from graphrag_integrations.core.progress import llm_progress
from graphrag_integrations.methods.reg.candidates import CandidatePool, ground
from graphrag_integrations.methods.reg.params import RefinementParams
from graphrag_integrations.methods.reg.store import KGView

logger = logging.getLogger(__name__)
T = TypeVar("T")

INSTRUCTIONS = (
    "Given a question, an answer, and reasoning paths, select relevant paths for answering "
    "the question based on these criteria:\n"
    "1. Relations in the selected path semantically align with certain question keywords;\n"
    "2. Reject paths that contain only irrelevant details or demonstrate logical "
    "inconsistencies with question requirements.\n"
    "Return all selected paths prefixed with 'ans:', one per line."
)
ICL_PATHS = (
    "boeing company -> [spaceflight.rocket_manufacturer.rockets_manufactured] -> saturn v rocket"
    " -> [spaceflight.rocket_manufacturer] -> North American Aviation",
    "boeing company -> [business.business_operation.industry] -> Aerospace -> "
    "[business.industry.companies] -> North American Aviation",
    "Little Joe -> [spaceflight.rocket.manufacturer] -> North American Aviation",
    "North American Aviation -> [aviation.aircraft_manufacturer.aircraft_models_made] -> "
    "North American XB-70A",
    "saturn v rocket -> [spaceflight.rocket.height_meters] -> 110.6",
    "saturn v rocket -> [spaceflight.rocket.country_of_origin] -> United States of America",
    "saturn v rocket -> [spaceflight.rocket.mass] -> 3038500.0",
    "Aerospace -> [business.industry.companies] -> North American Aviation",
)
ICL_QUESTION = (
    "What rocket manufacturer produced Little Joe and also collaborated with Boeing on making a "
    "rocket with mass over 2.916e+06?"
)
ICL_ANSWERS = ("North American Aviation",)
ICL_REPLY = (
    "To identify the relevant reasoning paths, we need to focus on relationships that:\n"
    "1) Confirm the manufacturer produced Little Joe, 2) Show collaboration with Boeing on a "
    "rocket, and 3) Provide information about the rocket mass\n"
    "Path 0 is valid because it establishes collaboration with Boeing (via Saturn V) and "
    "confirms North American Aviation as the manufacturer.\n"
    "Path 2 is valid because it directly proves North American Aviation produced Little Joe.\n"
    "Path 6 is valid because it provides information about the rocket mass "
    "(3,038,500 > 2.916e+06).\n"
    "For irrelevant paths, Path 1/7 link Boeing and North American Aviation via Aerospace, "
    "which is indirect (no collaboration on making a rocket).\n"
    "Path 3 discusses aircraft models, which is irrelevant to rockets.\n"
    "Path 4/5 Describe background info of Saturn V (irrelevant to its mass).\n"
    "Therefore, the relevant paths are:\nans: Path 0\nans: Path 2\nans: Path 6"
)
_ANS = re.compile(r"ans:\s*path\s*(\d+)", re.IGNORECASE)


def _sample(paths: Sequence[str], question: str, answers: Sequence[str]) -> str:
    listed = "\n".join(f"Path {i}.\n{p}" for i, p in enumerate(paths))
    return f"Paths:\n{listed}\nQuestion:\n{question}\nAnswer(s):\n" + "\n".join(answers)


def refinement_prompt(question: str, answers: Sequence[str], paths: Sequence[str]) -> str:
    """The appendix G refinement prompt (instructions, the in-context example, the sample).

    Examples
    --------
    >>> p = refinement_prompt("who directed X", ["D"], ["X -> [directed_by] -> D"])
    >>> p.endswith("Path 0.\\nX -> [directed_by] -> D\\nQuestion:\\nwho directed X\\n"
    ...            "Answer(s):\\nD")
    True
    """
    return (
        f"{INSTRUCTIONS}\nUser:\n{_sample(ICL_PATHS, ICL_QUESTION, ICL_ANSWERS)}\n"
        f"Assistant:\n{ICL_REPLY}\nUser:\n{_sample(paths, question, answers)}"
    )


def parse_selection(reply: str, n_paths: int) -> list[int] | None:
    """Path numbers in ``ans: Path i`` lines (valid ones, first-seen order); ``None`` if none.

    Examples
    --------
    >>> parse_selection("Path 1 is valid.\\nans: Path 1\\nans: path 7\\nans: Path 1", 3)
    [1]
    >>> parse_selection("I think path 2", 3) is None
    True
    """
    picked = [int(m) for m in _ANS.findall(reply) if int(m) < n_paths]
    return list(dict.fromkeys(picked)) or None


def option_text(i: int) -> str:
    """The continuation scored for path ``i`` in choice mode (newline-terminated, so ``Path 1``
    is not a prefix of ``Path 10``)."""
    return f"ans: Path {i}\n"


def content_option(path: str) -> str:
    """The continuation scored for a rendered path with ``choice_scoring="content"``.

    Examples
    --------
    >>> content_option("X -> [directed_by] -> D")
    'ans: X -> [directed_by] -> D\\n'
    """
    return f"ans: {path}\n"


def content_free_prompt(n_paths: int, placeholder: str = "N/A") -> str:
    """The refinement prompt with ``n_paths`` paths, the question and the answer all replaced
    by ``placeholder`` (the content-free input of contextual calibration); it depends only on
    the option count.

    Examples
    --------
    >>> content_free_prompt(2).endswith("Path 0.\\nN/A\\nPath 1.\\nN/A\\nQuestion:\\nN/A\\n"
    ...                                 "Answer(s):\\nN/A")
    True
    """
    return refinement_prompt(placeholder, [placeholder], [placeholder] * n_paths)


def calibrate(scores: Sequence[float], baseline: Sequence[float]) -> list[float]:
    """Contextually calibrated option scores: ``log p(label | prompt) - log p(label |
    content-free prompt)`` per option.

    Examples
    --------
    >>> calibrate([-1.0, -2.0], [-3.0, -1.0])
    [2.0, -1.0]
    """
    if len(scores) != len(baseline):
        raise ValueError(f"{len(scores)} scores but {len(baseline)} baseline scores")
    return [s - b for s, b in zip(scores, baseline, strict=True)]


def permuted_scores(scores: Sequence[float], reversed_label_scores: Sequence[float]) -> list[float]:
    """Each path's mean label log-probability over the given and the reversed listing.

    ``scores[i]`` is path ``i``'s label score with the paths listed as given;
    ``reversed_label_scores[j]`` is the score of label ``Path j`` with the paths listed in
    reverse, where ``Path j`` names path ``n - 1 - j``.

    Examples
    --------
    >>> permuted_scores([-1.0, -2.0, -3.0], [-6.0, -4.0, -2.0])
    [-1.5, -3.0, -4.5]
    """
    if len(scores) != len(reversed_label_scores):
        raise ValueError(
            f"{len(scores)} scores but {len(reversed_label_scores)} reversed-order scores"
        )
    back = list(reversed(reversed_label_scores))
    return [(a + b) / 2 for a, b in zip(scores, back, strict=True)]


def option_position(i: int, n: int, anchor: str = "end") -> int:
    """Position of option ``i`` of ``n``: from the end (the last option is 0) or the start.

    Examples
    --------
    >>> option_position(4, 5), option_position(4, 5, "start")
    (0, 4)
    """
    if anchor not in ("end", "start"):
        raise ValueError(f"anchor must be 'end' or 'start', got {anchor!r}")
    return n - 1 - i if anchor == "end" else i


def position_bias(score_lists: Sequence[Sequence[float]], anchor: str = "end") -> dict[int, float]:
    """Mean centred score per option position over a batch of questions (Batch Calibration's
    contextual prior, in log space).

    Each question's scores are centred (minus their mean, so questions with different option
    counts and score levels are comparable); the result maps a position
    (:func:`option_position`) to the mean centred score over the questions that have it.

    Examples
    --------
    >>> position_bias([[-3.0, -1.0], [-4.0, -2.0, -3.0]])
    {0: 0.5, 1: 0.0, 2: -1.0}
    """
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for scores in score_lists:
        n = len(scores)
        if n == 0:
            continue
        centre = sum(scores) / n
        for i, s in enumerate(scores):
            pos = option_position(i, n, anchor)
            sums[pos] = sums.get(pos, 0.0) + s - centre
            counts[pos] = counts.get(pos, 0) + 1
    return {pos: sums[pos] / counts[pos] for pos in sorted(sums)}


def batch_calibrate(
    scores: Sequence[float], bias: dict[int, float], anchor: str = "end"
) -> list[float]:
    """``scores`` minus the batch's mean centred score of each option's position (0 for a
    position the batch did not have).

    Examples
    --------
    >>> batch_calibrate([-3.0, -1.0], {0: 0.5, 1: -0.5})
    [-2.5, -1.5]
    """
    n = len(scores)
    return [s - bias.get(option_position(i, n, anchor), 0.0) for i, s in enumerate(scores)]


def continuation_lengths(llm: LLMClient, continuations: Sequence[str]) -> list[int]:
    """Tokens of each continuation: the model's tokenizer (``encode_continuation``) when it
    has one, else the chars / 4 estimate."""
    encode = getattr(llm.llm, "encode_continuation", None)
    if callable(encode):
        return [len(encode(c)) for c in continuations]
    return [estimate_tokens(c) for c in continuations]


def score_continuations(llm: Any, prompt: str, continuations: Sequence[str]) -> list[float]:
    """Summed log-probability of each continuation after ``prompt``, through
    ``LLMClient.score_continuations`` (response cache and token accounting); ``llm`` is an
    ``LLMClient`` or what it wraps.

    Raises
    ------
    ModelUnavailableError
        A model that cannot score continuations (use ``mode="generate"``).
    """
    return as_client(llm).score_continuations(prompt, list(continuations))


def as_client(llm: Any) -> LLMClient:
    """``llm`` itself if it is an ``LLMClient``, else an ``LLMClient`` wrapping it."""
    return llm if isinstance(llm, LLMClient) else LLMClient(llm)


def choose(
    scores: Sequence[float],
    ratio: float,
    *,
    allowed: Sequence[int] | None = None,
    limit: int = 0,
) -> list[int]:
    """Options whose softmax probability is >= ``ratio`` times the best one's, best first.

    Parameters
    ----------
    scores : sequence of float
        Log-probability (or any log-space score) of each option.
    ratio : float
        Keep an option when ``score - best >= log(ratio)``.
    allowed : sequence of int, optional
        The options that may be kept (default: every option); ``best`` is the best of them,
        and none is kept when it is empty.
    limit : int
        Keep at most this many, best first (0: no cap).

    Examples
    --------
    >>> choose([-1.0, -1.2, -9.0], 0.5)
    [0, 1]
    >>> choose([-1.0, -1.2, -9.0], 0.5, limit=1)
    [0]
    >>> choose([-1.0, -1.2, -9.0], 0.5, allowed=[1, 2])
    [1]
    """
    pool = range(len(scores)) if allowed is None else allowed
    if not pool:
        return []
    best = max(scores[i] for i in pool)
    keep = [i for i in pool if scores[i] - best >= math.log(ratio)]
    keep.sort(key=lambda i: -scores[i])
    return keep[:limit] if limit else keep


@dataclass
class RefineStats:
    """What a refinement run did."""

    questions: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    unparsed: int = 0  # generate-mode replies without a valid line -> weak labels
    answer_path_added: int = 0
    no_candidates: int = 0
    calibration_calls: int = 0  # content-free prompts scored (one per option count)
    permutation_calls: int = 0  # reversed-order prompts scored (choice_scoring="permuted")


@dataclass(frozen=True)
class RefinedLabels:
    """Supervision of one question: triple rows and how they were obtained."""

    rows: list[int]
    selected: list[int]  # the LLM's selection, then what ``require_answer_path`` added
    source: str  # "llm", "weak" (fallback) or "empty"
    prompt: str = ""
    raw: str = ""
    added: list[int] = field(default_factory=list)  # added by ``require_answer_path``
    order: list[int] = field(default_factory=list)  # choice mode: options, best-scored first


@dataclass
class Refiner:
    """Turns candidate pools into refined supervision (see the module docstring).

    Parameters
    ----------
    llm : LLMClient or what it wraps
        Choice mode needs a model with ``score_continuations`` (a local ``TransformersLLM``);
        generate mode any LLM. Calls go through ``LLMClient`` (its cache and usage).
    params : RefinementParams
    cache_path : Path, optional
        JSONL file of selections, appended as questions are refined (resumable).
    """

    llm: Any
    params: RefinementParams = field(default_factory=RefinementParams)
    cache_path: Path | None = None
    stats: RefineStats = field(default_factory=RefineStats)
    position_bias: dict[int, float] | None = None  # choice_scoring="batch": :meth:`fit_batch`
    _cache: dict[str, dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.llm = as_client(self.llm)

    def _load_cache(self) -> dict[str, dict[str, Any]]:
        if self._cache is None:
            self._cache = {}
            if self.cache_path is not None and self.cache_path.is_file():
                for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        rec = json.loads(line)
                        self._cache[rec["key"]] = rec
        return self._cache

    def _remember(self, rec: dict[str, Any]) -> None:
        self._load_cache()[rec["key"]] = rec
        if self.cache_path is not None:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            with self.cache_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def _scoring(self) -> str:
        return self.params.choice_scoring if self.params.mode == "choice" else "generate"

    def _record(
        self, qid: str, question: str, view: KGView, pool: CandidatePool
    ) -> tuple[dict[str, Any], list[str], list[str], str]:
        """The cached (or new) record of one question, its answer line, rendered paths and
        prompt."""
        answer = [view.entities[pool.representative]] if pool.representative is not None else []
        paths = [c.render(view) for c in pool.candidates]
        prompt = refinement_prompt(question, answer, paths)
        keys = self._keys(qid, prompt)
        cache = self._load_cache()
        rec = next((cache[k] for k in keys if k in cache), None)
        if rec is None:
            rec = {"key": keys[0], "qid": qid, **self._ask(prompt, paths)}
            self._remember(rec)
        else:
            self.stats.cache_hits += 1
        return rec, answer, paths, prompt

    def _keys(self, qid: str, prompt: str) -> list[str]:
        """Cache keys of a question's record, the one new records get first.

        Label, calibrated, permuted and batch scoring share one record (the label scores).
        Choice-mode scores do not depend on ``choice_ratio`` (:meth:`refine` chooses from
        them), so choice records are keyed with :data:`RECORD_RATIO`, the ratio of every
        record written while the ratio was part of the key; a record keyed with this run's
        ratio (an older one written with another ratio) is read too.
        """
        p = self.params
        ratios = [RECORD_RATIO, p.choice_ratio] if p.mode == "choice" else [p.choice_ratio]
        extra = ["content"] if self._scoring() == "content" else []
        return list(dict.fromkeys(_key([qid, prompt, p.mode, r, *extra]) for r in ratios))

    def _choice(self, scores: Sequence[float], pool: CandidatePool) -> list[int]:
        """Choice mode: the options kept by ``choice_ratio``, ``choice_options`` and
        ``choice_max`` (:func:`choose`)."""
        p = self.params
        allowed = None
        if p.choice_options == "answer_paths":
            allowed = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
        return choose(scores, p.choice_ratio, allowed=allowed, limit=p.choice_max)

    def fit_batch(self, view: KGView, items: Sequence[tuple[str, str, CandidatePool]]) -> None:
        """Fit :attr:`position_bias` (``choice_scoring="batch"``) on the label scores of the
        ``(qid, question, pool)`` items labelled together (scored now if not cached)."""
        lists = [
            self._record(qid, question, view, pool)[0]["scores"]
            for qid, question, pool in items
            if pool.candidates
        ]
        self.position_bias = position_bias(lists, self.params.batch_position)

    def track(self, questions: Sequence[T], *, enabled: bool = True) -> Iterator[T]:
        """Iterate over ``questions`` showing the refinement's progress from the first one
        (:func:`~graphrag_integrations.core.progress.llm_progress`: questions done, ETA,
        this refiner's tokens)."""
        usage = self.llm.usage
        return llm_progress(
            questions,
            "ReG refinement",
            enabled=enabled,
            unit="question",
            tokens=lambda: usage.total_tokens,
        )

    def refine(self, qid: str, question: str, view: KGView, pool: CandidatePool) -> RefinedLabels:
        """Refined labels of one question.

        Raises
        ------
        ValueError
            ``choice_scoring="batch"`` before :meth:`fit_batch`.
        """
        scoring = self._scoring()
        if scoring == "batch" and self.position_bias is None:
            raise ValueError("choice_scoring='batch' needs Refiner.fit_batch first")
        self.stats.questions += 1
        if not pool.candidates:
            self.stats.no_candidates += 1
            return RefinedLabels([], [], "empty")
        rec, answer, paths, prompt = self._record(qid, question, view, pool)
        selected: list[int] | None = rec["selected"]
        order: list[int] | None = rec.get("order")
        if scoring != "generate":  # choice mode: chosen from the (cached) scores
            scores = [float(s) for s in rec["scores"]]  # label / content: as scored
            if scoring == "calibrated":
                scores = calibrate(rec["scores"], self._baseline(len(paths)))
            elif scoring == "permuted":
                rev = self._reversed_scores(rec, question, answer, paths)
                scores = permuted_scores(rec["scores"], rev)
            elif scoring == "batch":
                bias = self.position_bias or {}
                scores = batch_calibrate(rec["scores"], bias, self.params.batch_position)
            selected = self._choice(scores, pool)
            order = sorted(range(len(scores)), key=lambda i: -scores[i])
        if selected is None:
            self.stats.unparsed += 1
            logger.info("%s: no 'ans: Path i' in the reply; weak labels used", qid)
            return RefinedLabels(pool.weak_triples(), [], "weak", prompt, rec.get("raw", ""))
        added: list[int] = []
        extra: list[int] = []
        sp = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
        if self.params.require_answer_path and sp and not set(selected) & set(sp):
            self.stats.answer_path_added += 1
            if self.params.answer_path_fallback == "all":
                added, extra = sp, pool.weak_triples()
                logger.info("%s: the LLM kept no q->a path; added all %d", qid, len(sp))
            else:
                added = [next(i for i in (order or sp) if i in sp)]
                logger.info("%s: the LLM kept no q->a path; added candidate %d", qid, added[0])
        selected = [*selected, *added]
        rows = ground(view, pool, selected, all_answers=self.params.ground_to_all_answers)
        rows = list(dict.fromkeys([*rows, *extra]))
        return RefinedLabels(
            rows, selected, "llm", prompt, rec.get("raw", ""), added, list(order or [])
        )

    def _reversed_scores(
        self, rec: dict[str, Any], question: str, answer: list[str], paths: list[str]
    ) -> list[float]:
        """Label scores with the paths listed in reverse (``Path j`` = path ``n - 1 - j``), as
        scored (by label); cached in the question's label record."""
        if "reversed_scores" not in rec:
            self.stats.permutation_calls += 1
            prompt = refinement_prompt(question, answer, paths[::-1])
            scores = score_continuations(
                self.llm, prompt, [option_text(i) for i in range(len(paths))]
            )
            rec = {**rec, "reversed_scores": scores}
            self._remember(rec)  # appended again: the later line wins when the cache is read
        return [float(s) for s in rec["reversed_scores"]]

    def _baseline(self, n: int) -> list[float]:
        """Label scores of ``n`` options after the content-free prompt (cached)."""
        prompt = content_free_prompt(n, self.params.calibration_placeholder)
        key = _key(["content-free", prompt, self.params.mode])
        rec = self._load_cache().get(key)
        if rec is None:
            self.stats.calibration_calls += 1
            scores = score_continuations(self.llm, prompt, [option_text(i) for i in range(n)])
            rec = {"key": key, "qid": None, "content_free": n, "scores": scores}
            self._remember(rec)
        return [float(s) for s in rec["scores"]]

    def _ask(self, prompt: str, paths: Sequence[str]) -> dict[str, Any]:
        self.stats.llm_calls += 1
        n = len(paths)
        if self.params.mode == "choice":
            if self.params.choice_scoring == "content":
                options = [content_option(p) for p in paths]
                sums = score_continuations(self.llm, prompt, options)
                lengths = continuation_lengths(self.llm, options)
                scores = [s / max(k, 1) for s, k in zip(sums, lengths, strict=True)]
            else:
                scores = score_continuations(self.llm, prompt, [option_text(i) for i in range(n)])
            order = sorted(range(n), key=lambda i: -scores[i])
            return {
                "selected": choose(scores, self.params.choice_ratio),
                "scores": scores,
                "order": order,
            }
        text = self.llm.complete(prompt, max_tokens=self.params.max_tokens)
        return {"selected": parse_selection(text, n), "raw": text}


#: ``choice_ratio`` in the cache key of every choice-mode record (see ``Refiner._keys``).
RECORD_RATIO = 0.5


def _key(parts: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()
