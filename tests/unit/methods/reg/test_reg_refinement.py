from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import LLMClient, LLMResult
from graphrag_integrations.errors import ModelUnavailableError
from graphrag_integrations.methods.reg.candidates import build_pool, ground
from graphrag_integrations.methods.reg.params import RefinementParams
from graphrag_integrations.methods.reg.refinement import (
    ICL_PATHS,
    RECORD_RATIO,
    Refiner,
    _key,
    batch_calibrate,
    calibrate,
    choose,
    content_free_prompt,
    content_option,
    continuation_lengths,
    option_position,
    option_text,
    parse_selection,
    permuted_scores,
    position_bias,
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


class ContentFreeScorer(FakeScorer):
    """Label scores from ``table`` after a real prompt and from ``bias`` after the
    content-free one (placeholder question); counts both kinds of call."""

    def __init__(self, table: dict[int, float], bias: dict[int, float]) -> None:
        super().__init__(table)
        self.bias = bias
        self.content_free_calls = 0

    def score_continuations(self, prompt: str, continuations: list[str]) -> list[float]:
        if prompt.endswith("Question:\nN/A\nAnswer(s):\nN/A"):
            self.content_free_calls += 1
            return [self.bias.get(int(c.split()[-1]), -20.0) for c in continuations]
        return super().score_continuations(prompt, continuations)


def _two_chain_pool() -> tuple:
    """``Kismet`` -> ``Random Harvest``: two q->a chains (shared actor, shared genre)."""
    view = movie_index().view
    return view, build_pool(view, ["Kismet"], ["Random Harvest"])


def test_content_free_prompt_and_calibrate() -> None:
    prompt = content_free_prompt(3, "N/A")
    assert prompt.count("Path 2.\nN/A") == 1 and "Path 3.\nN/A" not in prompt
    assert prompt.startswith(refinement_prompt("N/A", ["N/A"], ["N/A"] * 3)[:50])
    assert calibrate([-1.0, -5.0], [-4.0, -5.0]) == [3.0, 0.0]
    with pytest.raises(ValueError, match="baseline"):
        calibrate([-1.0], [-1.0, -2.0])


def test_calibrated_scoring_cancels_a_label_bias(tmp_path: Path) -> None:
    view, pool = _pool()
    n = len(pool.candidates)
    last = n - 1
    sp = next(i for i, c in enumerate(pool.candidates) if c.kind == "sp")
    # raw label scores prefer the last option by 2 nats; the content-free prompt shows the
    # model prefers it by 3 regardless of the paths: calibrated, the sp option wins
    table = {i: -10.0 for i in range(n)} | {last: -8.0, sp: -9.0}
    bias = {i: -12.0 for i in range(n)} | {last: -9.0}
    cache = tmp_path / "sel.jsonl"
    label = Refiner(ContentFreeScorer(table, bias), RefinementParams(), cache)
    assert label.refine("q1", "years?", view, pool).selected[0] == last
    fake = ContentFreeScorer(table, bias)
    calibrated = Refiner(fake, RefinementParams(choice_scoring="calibrated"), cache)
    labels = calibrated.refine("q1", "years?", view, pool)
    assert labels.selected == [sp] and labels.order[0] == sp and labels.added == []
    # the label scores are shared with label scoring (no new question call); one baseline
    assert calibrated.stats.llm_calls == 0 and calibrated.stats.cache_hits == 1
    assert fake.content_free_calls == 1 and calibrated.stats.calibration_calls == 1
    calibrated.refine("q2", "other years?", view, pool)  # same option count: baseline reused
    assert fake.content_free_calls == 1 and calibrated.stats.llm_calls == 1
    again = Refiner(FakeScorer({}), RefinementParams(choice_scoring="calibrated"), cache)
    assert again.refine("q1", "years?", view, pool).selected == [sp]
    assert again.stats.calibration_calls == 0 and again.stats.llm_calls == 0


class ContentScorer(FakeScorer):
    """Summed log-prob of a path continuation: ``per_token`` (by a keyword) x its chars / 4."""

    def __init__(self, per_token: dict[str, float], default: float) -> None:
        super().__init__({})
        self.per_token = per_token
        self.default = default
        self.continuations: list[str] = []

    def score_continuations(self, prompt: str, continuations: list[str]) -> list[float]:
        self.continuations += continuations
        out = []
        for c in continuations:
            rate = next((v for k, v in self.per_token.items() if k in c), self.default)
            out.append(rate * math.ceil(len(c) / 4))
        return out


def test_content_scoring_uses_the_mean_token_log_prob(tmp_path: Path) -> None:
    view, pool = _pool()
    paths = [c.render(view) for c in pool.candidates]
    sp = next(i for i, c in enumerate(pool.candidates) if c.kind == "sp")
    assert len(paths[sp]) > min(len(p) for p in paths)  # the sp path is not the shortest
    # per token the sp path is likelier; summed, a shorter path would win
    fake = ContentScorer({"release_year": -1.0}, default=-3.0)
    refiner = Refiner(fake, RefinementParams(choice_scoring="content"), tmp_path / "c.jsonl")
    labels = refiner.refine("q1", "years of Colman films", view, pool)
    assert fake.continuations == [content_option(p) for p in paths]
    assert labels.selected[0] == sp and labels.added == []
    rec = json.loads((tmp_path / "c.jsonl").read_text().splitlines()[0])
    assert rec["scores"][sp] == pytest.approx(-1.0)
    # a label-scoring refiner on the same cache does not reuse the content record
    label = Refiner(FakeScorer({0: -1.0}), RefinementParams(), tmp_path / "c.jsonl")
    label.refine("q1", "years of Colman films", view, pool)
    assert label.stats.llm_calls == 1 and label.stats.cache_hits == 0


def test_content_lengths_come_from_the_tokenizer_when_there_is_one() -> None:
    class Tokenizing(FakeScorer):
        def encode_continuation(self, text: str) -> list[int]:
            return [0] * len(text.split())

    assert continuation_lengths(LLMClient(Tokenizing({})), ["a b c", "d"]) == [3, 1]
    assert continuation_lengths(LLMClient(FakeScorer({})), ["abcdefgh"]) == [2]


def test_answer_path_fallback_all_adds_every_q_to_a_path() -> None:
    view, pool = _two_chain_pool()
    sp = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
    other = next(i for i, c in enumerate(pool.candidates) if c.kind != "sp")
    assert len(sp) == 2
    table = {other: -0.1, sp[1]: -5.0, sp[0]: -6.0}  # only a neighbourhood option is kept
    best = Refiner(FakeScorer(table), RefinementParams()).refine("q", "?", view, pool)
    assert best.added == [sp[1]] and best.selected == [other, sp[1]]
    every = Refiner(FakeScorer(table), RefinementParams(answer_path_fallback="all"))
    labels = every.refine("q", "?", view, pool)
    assert labels.added == sp and every.stats.answer_path_added == 1
    assert set(pool.weak_triples()) <= set(labels.rows)
    assert set(pool.candidates[other].triples(view)) <= set(labels.rows)
    assert not set(pool.weak_triples()) <= set(best.rows)
    # a selection holding a q->a path is left alone
    kept = Refiner(FakeScorer({sp[0]: -0.1}), RefinementParams(answer_path_fallback="all"))
    assert kept.refine("q", "?", view, pool).added == []


class ListingScorer(FakeScorer):
    """Label scores that follow the *listed* path: ``content[path]`` (by a keyword, else
    ``default``) plus ``slope`` x the label's position; records every prompt."""

    def __init__(self, content: dict[str, float], default: float, slope: float) -> None:
        super().__init__({})
        self.content = content
        self.default = default
        self.slope = slope

    def score_continuations(self, prompt: str, continuations: list[str]) -> list[float]:
        self.prompts.append(prompt)
        sample = prompt.rsplit("User:\nPaths:\n", 1)[1].split("\nQuestion:\n")[0]
        listed = sample.split("\n")[1::2]  # "Path j." lines alternate with the paths
        out = []
        for c in continuations:
            j = int(c.split()[-1])
            rate = next((v for k, v in self.content.items() if k in listed[j]), self.default)
            out.append(rate + self.slope * j)
        return out


def test_permuted_scores_map_the_reversed_listing_back() -> None:
    # path 0 listed last in the reversed prompt: its label there is Path 2
    assert permuted_scores([-1.0, -5.0, -3.0], [-7.0, -9.0, -2.0]) == [-1.5, -7.0, -5.0]
    # a pure position effect (linear in the position) cancels exactly
    bias = [0.0, 1.0, 2.0, 3.0]
    content = [-4.0, -1.0, -3.0, -2.0]
    given = [c + b for c, b in zip(content, bias, strict=True)]
    reversed_labels = [content[3 - j] + bias[j] for j in range(4)]
    averaged = permuted_scores(given, reversed_labels)
    assert [a - 1.5 for a in averaged] == content
    with pytest.raises(ValueError, match="reversed"):
        permuted_scores([-1.0], [-1.0, -2.0])


def test_permuted_scoring_cancels_a_position_preference(tmp_path: Path) -> None:
    view, pool = _two_chain_pool()
    paths = [c.render(view) for c in pool.candidates]
    n = len(paths)
    sp = 1  # Kismet -> [starred_actors] -> Ronald Colman <- [starred_actors] <- Random Harvest
    assert pool.candidates[sp].kind == "sp" and n == 10
    # content: that path is better by 1 nat; the position adds 3 nats from first to last:
    # label scoring keeps the last options, permuted scoring only the sp one
    fake = ListingScorer({"<- [starred_actors] <-": -1.0}, default=-2.0, slope=3.0 / (n - 1))
    cache = tmp_path / "sel.jsonl"
    label = Refiner(fake, RefinementParams(), cache).refine("q1", "years?", view, pool)
    assert label.order[0] == n - 1 and sp not in set(label.selected) - set(label.added)
    permuted = Refiner(fake, RefinementParams(choice_scoring="permuted"), cache)
    labels = permuted.refine("q1", "years?", view, pool)
    assert labels.order[0] == sp and labels.selected == [sp] and labels.added == []
    # the label scores were reused; one new scoring, of the reversed listing
    assert permuted.stats.llm_calls == 0 and permuted.stats.permutation_calls == 1
    assert fake.prompts[-1] == refinement_prompt("years?", ["Random Harvest"], paths[::-1])
    lines = [json.loads(x) for x in cache.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["key"] == lines[1]["key"]
    assert lines[1]["scores"] == lines[0]["scores"] and len(lines[1]["reversed_scores"]) == n
    # resumable: the reversed scores are read from the cache, nothing is scored
    again = Refiner(FakeScorer({}), RefinementParams(choice_scoring="permuted"), cache)
    assert again.refine("q1", "years?", view, pool).selected == [sp]
    assert again.stats.llm_calls == 0 and again.stats.permutation_calls == 0
    # label scoring still reads the same record
    reread = Refiner(FakeScorer({}), RefinementParams(), cache).refine("q1", "years?", view, pool)
    assert reread.selected == label.selected


def test_position_bias_and_batch_calibrate() -> None:
    # from the end: position 0 is each question's last option
    bias = position_bias([[-3.0, -1.0], [-4.0, -2.0, -3.0]], "end")
    assert bias == {0: 0.5, 1: 0.0, 2: -1.0}
    start = position_bias([[-3.0, -1.0], [-4.0, -2.0, -3.0]], "start")
    assert start == {0: -1.0, 1: 1.0, 2: 0.0}
    assert batch_calibrate([-2.0, -1.0, -1.0], bias, "end") == [-1.0, -1.0, -1.5]
    assert batch_calibrate([-2.0, -1.0], {}, "end") == [-2.0, -1.0]
    assert option_position(0, 3, "end") == 2 and option_position(0, 3, "start") == 0
    with pytest.raises(ValueError, match="anchor"):
        option_position(0, 3, "middle")


def test_batch_scoring_through_the_index() -> None:
    from graphrag_integrations.methods.reg.index import TrainingQuestion

    index = movie_index()
    qs = [
        TrainingQuestion("q1", "years of Colman films", ("Ronald Colman",), ("1944", "1942")),
        TrainingQuestion("q2", "films like Kismet", ("Kismet",), ("Random Harvest",)),
    ]
    pools = {q.id: index.candidate_pool(q) for q in qs}
    n = {qid: len(p.candidates) for qid, p in pools.items()}
    fake = FakeScorer({})
    # every question prefers its last option by 5 nats: the batch prior removes it
    fake.score_continuations = lambda prompt, cs: [  # type: ignore[method-assign]
        -2.0 + (5.0 if int(c.split()[-1]) == len(cs) - 1 else 0.0) for c in cs
    ]
    label = Refiner(fake, RefinementParams()).refine("q1", qs[0].text, index.view, pools["q1"])
    assert set(label.selected) - set(label.added) == {n["q1"] - 1}
    batch = index.supervision(
        qs, mode="refined", llm=fake, refinement=RefinementParams(choice_scoring="batch")
    )
    assert batch.refine_stats is not None and batch.refine_stats.llm_calls == 2
    refiner = Refiner(fake, RefinementParams(choice_scoring="batch"))
    with pytest.raises(ValueError, match="fit_batch"):
        refiner.refine("q1", qs[0].text, index.view, pools["q1"])
    refiner.fit_batch(index.view, [(q.id, q.text, pools[q.id]) for q in qs])
    assert refiner.position_bias is not None and refiner.position_bias[0] > 0
    # calibrated, every option of a question scores the same: all are kept
    kept = refiner.refine("q1", qs[0].text, index.view, pools["q1"])
    assert sorted(kept.selected) == list(range(n["q1"]))
    assert refiner.stats.llm_calls == 2 and refiner.stats.cache_hits == 1
    assert refiner.stats.questions == 1


def test_choose_with_a_limit_and_allowed_options() -> None:
    scores = [math.log(0.4), math.log(0.35), math.log(0.15), math.log(0.1)]
    assert choose(scores, 0.5) == [0, 1]
    assert choose(scores, 0.9) == [0]  # stricter ratio: 0.35 < 0.9 * 0.4
    assert choose(scores, 0.2, limit=2) == [0, 1] and choose(scores, 0.2) == [0, 1, 2, 3]
    # relative to the best allowed option, which need not be the best overall
    assert choose(scores, 0.5, allowed=[3, 2]) == [2, 3]
    assert choose(scores, 0.5, allowed=[]) == []


def test_choice_rules_are_applied_to_cached_scores(tmp_path: Path) -> None:
    view, pool = _two_chain_pool()
    sp = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
    hood = [i for i, c in enumerate(pool.candidates) if c.kind != "sp"]
    # two neighbourhood options lead, then both q->a paths, everything within ratio 0.5
    table = {hood[0]: -1.0, hood[1]: -1.1, sp[0]: -1.3, sp[1]: -1.5}
    cache = tmp_path / "sel.jsonl"
    first = Refiner(FakeScorer(table), RefinementParams(), cache)
    default = first.refine("q", "?", view, pool)
    assert default.selected == [hood[0], hood[1], sp[0], sp[1]]

    def reread(**options: object) -> tuple[list[int], list[int], Refiner]:
        """What the LLM's scores kept and what the q->a fallback added, without scoring."""
        params = RefinementParams.from_options({k: str(v) for k, v in options.items()})
        refiner = Refiner(FakeScorer({}), params, cache)
        labels = refiner.refine("q", "?", view, pool)
        assert refiner.stats.llm_calls == 0 and refiner.stats.cache_hits == 1
        kept = labels.selected[: len(labels.selected) - len(labels.added)]
        return kept, labels.added, refiner

    # a stricter ratio and a cap read the same record (the ratio is not part of its key)
    assert reread(choice_ratio=0.8)[:2] == ([hood[0], hood[1]], [sp[0]])
    assert reread(choice_max=3)[:2] == ([hood[0], hood[1], sp[0]], [])
    top1, added, refiner = reread(choice_max=1)
    assert top1 == [hood[0]] and added == [sp[0]]
    assert refiner.stats.answer_path_added == 1
    # only q->a paths may be kept: the ratio is relative to the best of them
    assert reread(choice_options="answer_paths")[:2] == ([sp[0], sp[1]], [])
    assert reread(choice_options="answer_paths", choice_ratio=0.9)[:2] == ([sp[0]], [])
    only_sp = Refiner(FakeScorer(table), RefinementParams(choice_options="answer_paths"))
    rows = only_sp.refine("q", "?", view, pool).rows
    assert set(rows) == set(ground(view, pool, sp, all_answers=True))
    assert len(cache.read_text().splitlines()) == 1  # nothing was scored again


def test_records_keyed_with_another_ratio_stay_readable(tmp_path: Path) -> None:
    view, pool = _two_chain_pool()
    cache = tmp_path / "sel.jsonl"
    labels = Refiner(FakeScorer({0: -1.0, 1: -1.2}), RefinementParams(), cache).refine(
        "q", "?", view, pool
    )
    # the record as a version with the ratio in the key wrote it with ratio 0.3
    rec = json.loads(cache.read_text())
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({**rec, "key": _key(["q", labels.prompt, "choice", 0.3])}) + "\n")
    same = Refiner(FakeScorer({}), RefinementParams(choice_ratio=0.3), old)
    assert same.refine("q", "?", view, pool).selected[:2] == [0, 1]
    assert same.stats.llm_calls == 0
    # new records are keyed with RECORD_RATIO whatever the run's ratio
    fresh = tmp_path / "fresh.jsonl"
    Refiner(FakeScorer({0: -1.0}), RefinementParams(choice_ratio=0.9), fresh).refine(
        "q", "?", view, pool
    )
    key = json.loads(fresh.read_text())["key"]
    assert key == rec["key"] == _key(["q", labels.prompt, "choice", RECORD_RATIO])
