from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import LLMClient, LLMResult
from graphrag_integrations.errors import ModelUnavailableError
from graphrag_integrations.methods.reg.candidates import build_pool
from graphrag_integrations.methods.reg.params import RefinementParams
from graphrag_integrations.methods.reg.refinement import (
    ICL_PATHS,
    Refiner,
    choose,
    option_text,
    parse_selection,
    refinement_prompt,
    score_continuations,
)
from tests.unit.reg_fixtures import movie_index


class FakeScorer:
    """An LLM scoring 'ans: Path i' options from a fixed table; records the prompts."""

    model_name = "fake-scorer"

    def __init__(self, table: dict[int, float]) -> None:
        self.table = table
        self.prompts: list[str] = []

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        raise AssertionError("choice mode must not generate")

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        raise AssertionError("choice mode must not generate")

    def score_continuations(self, prompt: str, continuations: list[str]) -> list[float]:
        self.prompts.append(prompt)
        return [self.table.get(int(c.split()[-1]), -20.0) for c in continuations]


def _pool() -> tuple:
    index = movie_index()
    view = index.view
    return view, build_pool(view, ["Ronald Colman"], ["1944", "1942"])


def test_prompt_holds_the_icl_example_and_numbered_paths() -> None:
    prompt = refinement_prompt("q?", ["A"], ["x -> [r] -> A", "y -> [s] -> A"])
    assert prompt.count("Path 0.") == 2 and "Path 7.\n" + ICL_PATHS[7] in prompt
    assert "ans: Path 0\nans: Path 2\nans: Path 6" in prompt
    assert prompt.endswith("Path 1.\ny -> [s] -> A\nQuestion:\nq?\nAnswer(s):\nA")


def test_parse_selection() -> None:
    assert parse_selection("ans: Path 2\nANS: path 0\nans: Path 9", 3) == [2, 0]
    assert parse_selection("Path 0 and Path 1", 3) is None
    assert parse_selection("", 3) is None


def test_choose_by_probability_ratio() -> None:
    assert choose([math.log(0.6), math.log(0.31), math.log(0.09)], 0.5) == [0, 1]
    assert choose([math.log(0.6), math.log(0.29), math.log(0.11)], 0.5) == [0]
    assert option_text(1) != option_text(10)[: len(option_text(1))]


def test_choice_mode_selects_and_grounds(tmp_path: Path) -> None:
    view, pool = _pool()
    order = [c.kind for c in pool.candidates]
    q_idx = order.index("query")
    fake = FakeScorer({q_idx: -0.1})  # the LLM prefers only the neighbourhood candidate
    refiner = Refiner(fake, RefinementParams(), tmp_path / "sel.jsonl")
    labels = refiner.refine("q1", "years of Colman films", view, pool)
    # no q->a path kept: the best-ranked sp candidate is added (counted)
    assert refiner.stats.answer_path_added == 1
    assert set(labels.selected) == {q_idx, order.index("sp")}
    assert ("Kismet", "release_year", "1944") in {view.triple(r) for r in labels.rows}
    # resumable: a new refiner reads the cache and asks nothing
    again = Refiner(FakeScorer({}), RefinementParams(), tmp_path / "sel.jsonl")
    assert again.refine("q1", "years of Colman films", view, pool).rows == labels.rows
    assert again.stats.cache_hits == 1 and again.stats.llm_calls == 0
    rec = json.loads((tmp_path / "sel.jsonl").read_text().splitlines()[0])
    assert rec["qid"] == "q1" and len(rec["scores"]) == len(pool.candidates)


def test_generate_mode_parses_and_falls_back_to_weak() -> None:
    view, pool = _pool()
    sp = next(i for i, c in enumerate(pool.candidates) if c.kind == "sp")
    good = Refiner(
        LLMClient(lambda p: f"Reasoning...\nans: Path {sp}"), RefinementParams(mode="generate")
    )
    labels = good.refine("q", "years?", view, pool)
    assert labels.source == "llm" and labels.selected == [sp]
    bad = Refiner(LLMClient(lambda p: "I cannot tell."), RefinementParams(mode="generate"))
    weak = bad.refine("q", "years?", view, pool)
    assert weak.source == "weak" and bad.stats.unparsed == 1
    assert set(weak.rows) == set(pool.weak_triples())


def test_score_continuations_refuses_models_that_cannot_score() -> None:
    with pytest.raises(ModelUnavailableError, match="score_continuations"):
        score_continuations(LLMClient(lambda p: "x"), "prompt", ["a"])
    client = LLMClient(FakeScorer({0: -1.0}))
    assert score_continuations(client, "p", ["ans: Path 0\n"]) == [-1.0]
    assert client.usage.calls == 1 and client.usage.prompt_tokens > 0


def test_supervision_modes_through_the_index(tmp_path: Path) -> None:
    from graphrag_integrations.methods.reg.index import TrainingQuestion

    index = movie_index()
    q = TrainingQuestion("q1", "years of Colman films", ("Ronald Colman",), ("1944", "1942"))
    weak = index.supervision([q], mode="weak")
    assert weak.sources == {"q1": "weak"}
    assert ("Kismet", "starred_actors", "Ronald Colman") in weak.labels["q1"]
    assert weak.pool_summary()["raw_mean"] == 4.0
    with pytest.raises(ValueError, match="llm"):
        index.supervision([q], mode="refined")
    refined = index.supervision([q], mode="refined", llm=FakeScorer({0: -0.1}))
    assert refined.refine_stats is not None and refined.refine_stats.llm_calls == 1


@pytest.mark.slow
def test_local_model_scores_continuations() -> None:
    """The offline SmolLM2 scores options; a continuation copying the prompt's answer wins."""
    from graphrag_integrations.core.llm import TransformersLLM

    lm = TransformersLLM()
    prompt = "Reply with the line 'ans: Path 1' and nothing else."
    scores = score_continuations(LLMClient(lm), prompt, [option_text(i) for i in range(3)])
    assert len(scores) == 3 and all(s < 0 for s in scores)
    assert max(range(3), key=lambda i: scores[i]) == 1
