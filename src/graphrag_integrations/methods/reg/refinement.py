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

With ``require_answer_path`` a selection without any q->a path gets the best-ranked ``P_sp``
candidate added (logged, counted). Results are appended to a JSONL cache keyed by the question
id and a hash of prompt and mode, so a refinement run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.methods.reg.candidates import CandidatePool, ground
from graphrag_integrations.methods.reg.params import RefinementParams
from graphrag_integrations.methods.reg.store import KGView

logger = logging.getLogger(__name__)

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


def choose(scores: Sequence[float], ratio: float) -> list[int]:
    """Options whose softmax probability is >= ``ratio`` times the best one's, best first.

    Examples
    --------
    >>> choose([-1.0, -1.2, -9.0], 0.5)
    [0, 1]
    """
    best = max(scores)
    keep = [i for i, s in enumerate(scores) if s - best >= math.log(ratio)]
    return sorted(keep, key=lambda i: -scores[i])


@dataclass
class RefineStats:
    """What a refinement run did."""

    questions: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    unparsed: int = 0  # generate-mode replies without a valid line -> weak labels
    answer_path_added: int = 0
    no_candidates: int = 0


@dataclass(frozen=True)
class RefinedLabels:
    """Supervision of one question: triple rows and how they were obtained."""

    rows: list[int]
    selected: list[int]
    source: str  # "llm", "weak" (fallback) or "empty"
    prompt: str = ""
    raw: str = ""


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

    def refine(self, qid: str, question: str, view: KGView, pool: CandidatePool) -> RefinedLabels:
        """Refined labels of one question."""
        self.stats.questions += 1
        if not pool.candidates:
            self.stats.no_candidates += 1
            return RefinedLabels([], [], "empty")
        answer = [view.entities[pool.representative]] if pool.representative is not None else []
        paths = [c.render(view) for c in pool.candidates]
        prompt = refinement_prompt(question, answer, paths)
        key = hashlib.sha256(
            json.dumps([qid, prompt, self.params.mode, self.params.choice_ratio]).encode()
        ).hexdigest()
        rec = self._load_cache().get(key)
        if rec is None:
            rec = {"key": key, "qid": qid, **self._ask(prompt, len(paths))}
            self._remember(rec)
        else:
            self.stats.cache_hits += 1
        selected: list[int] | None = rec["selected"]
        if selected is None:
            self.stats.unparsed += 1
            logger.info("%s: no 'ans: Path i' in the reply; weak labels used", qid)
            return RefinedLabels(pool.weak_triples(), [], "weak", prompt, rec.get("raw", ""))
        selected = list(selected)
        sp = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
        if self.params.require_answer_path and sp and not set(selected) & set(sp):
            order = rec.get("order") or sp
            best = next(i for i in order if i in sp)
            selected.append(best)
            self.stats.answer_path_added += 1
            logger.info("%s: the LLM kept no q->a path; added candidate %d", qid, best)
        rows = ground(view, pool, selected, all_answers=self.params.ground_to_all_answers)
        return RefinedLabels(rows, selected, "llm", prompt, rec.get("raw", ""))

    def _ask(self, prompt: str, n: int) -> dict[str, Any]:
        self.stats.llm_calls += 1
        if self.params.mode == "choice":
            scores = score_continuations(self.llm, prompt, [option_text(i) for i in range(n)])
            order = sorted(range(n), key=lambda i: -scores[i])
            return {
                "selected": choose(scores, self.params.choice_ratio),
                "scores": scores,
                "order": order,
            }
        text = self.llm.complete(prompt, max_tokens=self.params.max_tokens)
        return {"selected": parse_selection(text, n), "raw": text}
