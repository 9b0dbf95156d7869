"""Extended Doc2Query: the paper's prompt, the tolerant parser, the retry and its counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import LLMClient, LLMResult
from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator
from graphrag_integrations.methods.qcg.prompts import (
    REPAIR_SUFFIX,
    SMALL_MODEL_PROMPT,
    SMALL_MODEL_REPAIR_SUFFIX,
    QAPair,
    doc2query_prompt,
    parse_qa_pairs,
    prompt_hash,
)

PAIRS = [{"index": i, "query": f"Question {i}?", "answer": f"Answer {i}"} for i in range(4)]


def test_prompt_is_the_papers_with_m_and_the_chunk() -> None:
    p = doc2query_prompt("LiHua: see you at 7!", M=12)
    assert "generate 12 distinct user queries" in p
    assert '{ "index": 11, "query": "", "answer": "" }' in p
    assert p.rstrip().endswith("---Input chunk---\nLiHua: see you at 7!")
    assert "{chunk}" not in p and "Chunk-grounded specificity" in p
    assert prompt_hash() != prompt_hash("other {chunk}")


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(PAIRS),
        "Sure! Here you are:\n```json\n" + json.dumps(PAIRS, indent=2) + "\n```\nDone.",
        json.dumps({"queries": PAIRS}),
        json.dumps(PAIRS).replace('"answer"', '"Answer"').replace('"query"', '"question"'),
    ],
)
def test_clean_json_replies(reply: str) -> None:
    parsed = parse_qa_pairs(reply)
    assert parsed.how == "json"
    assert parsed.pairs == [QAPair(f"Question {i}?", f"Answer {i}") for i in range(4)]


def test_a_cut_off_reply_keeps_every_complete_pair() -> None:
    reply = json.dumps(PAIRS)[:-40]  # the last object is cut
    parsed = parse_qa_pairs(reply)
    assert parsed.how == "objects"
    assert [p.query for p in parsed.pairs] == ["Question 0?", "Question 1?", "Question 2?"]


def test_key_values_and_plain_lines() -> None:
    kv = parse_qa_pairs('query: "Who came?", answer: "Bob"\n"query": "Where?" "answer": \'Rome\'')
    assert kv.how == "key-values" and kv.pairs == [
        QAPair("Who came?", "Bob"),
        QAPair("Where?", "Rome"),
    ]
    lines = parse_qa_pairs("1. Question: Who came?\n   Answer: Bob\n2. Q: Where?\nA: Rome")
    assert lines.how == "lines" and len(lines.pairs) == 2


def test_drops_empty_duplicate_echoed_and_extra_pairs() -> None:
    items = [
        {"query": "Where did Alice and Bob meet?", "answer": "Central Cafe"},  # the example
        {"query": "", "answer": "x"},
        {"query": "Who?", "answer": ""},
        {"query": "Who came?", "answer": "Bob"},
        {"query": "who came?", "answer": "bob"},
        {"query": "When?", "answer": "7 pm"},
        {"query": "[1]", "answer": "[2]"},
        {"query": "your_json_array", "answer": "your_json_array"},
        {"query": "Why?", "answer": "fun"},
    ]
    parsed = parse_qa_pairs(json.dumps(items), M=2)
    assert parsed.pairs == [QAPair("Who came?", "Bob"), QAPair("When?", "7 pm")]
    assert parsed.dropped == 7
    assert parse_qa_pairs('[{"index": 0, "query": "", "answer": "..."}]').how == "none"


def test_retry_once_with_the_repair_instruction_and_count() -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps(PAIRS[:2]) if prompt.endswith(REPAIR_SUFFIX) else "I am a helpful bot."

    gen = Doc2QueryGenerator(LLMClient(llm), M=20)
    assert len(gen.generate(["Some chunk."])[0]) == 2
    assert len(prompts) == 2 and gen.stats.retried == 1 and gen.stats.failed == 0

    gen = Doc2QueryGenerator(LLMClient(lambda p: "never JSON"), M=20)
    assert gen.generate(["A chunk.", "  "]) == [[], []]  # blank chunks are not sent
    assert (gen.stats.chunks, gen.stats.retried, gen.stats.failed) == (1, 1, 1)


def test_small_model_template_retries_in_its_own_format() -> None:
    from graphrag_integrations.methods.qcg.prompts import (
        SMALL_MODEL_PROMPT,
        SMALL_MODEL_REPAIR_SUFFIX,
    )

    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "Question: Who came?\nAnswer: Bob" if len(prompts) == 2 else "1. Who came?"

    gen = Doc2QueryGenerator(LLMClient(llm), M=3, template=SMALL_MODEL_PROMPT)
    assert gen.generate(["Bob came."]) == [[QAPair("Who came?", "Bob")]]
    assert prompts[1].endswith(SMALL_MODEL_REPAIR_SUFFIX) and "Bob came." in prompts[0]


def test_usage_and_progress_figures(capsys: pytest.CaptureFixture[str]) -> None:
    client = LLMClient(lambda p: json.dumps(PAIRS))
    gen = Doc2QueryGenerator(client, M=4, show_progress=True)
    gen.generate(["one chunk", "another chunk"])
    assert client.usage.calls == 2 and client.usage.completion_tokens > 0
    assert gen.stats.as_dict()["pairs"] == 8
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("QCG: generating queries for 2 chunks with <lambda>: ~2 LLM calls")
    assert lines[1].startswith("Doc2Query: 0/2 chunks (0%)")  # shown before the first reply
    assert lines[-1].startswith("Doc2Query: 2/2 chunks (100%)") and "tokens" in lines[-1]


def test_bad_template_and_m() -> None:
    with pytest.raises(ValueError):
        Doc2QueryGenerator(LLMClient(lambda p: ""), template="no placeholder")
    with pytest.raises(ValueError):
        Doc2QueryGenerator(LLMClient(lambda p: ""), M=0)


class BatchModel:
    """A local-model stand-in with ``complete_batch``: records each batch; a chunk containing
    "hard" gets a reply without pairs the first time (the retry prompt has the suffix)."""

    model_name = "fake-batch"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def _reply(self, prompt: str) -> str:
        chunk = prompt.split("Text:\n", 1)[1].split("\n", 1)[0]
        if "hard" in chunk and SMALL_MODEL_REPAIR_SUFFIX not in prompt:
            return "I cannot."
        return f"Question: What does {chunk} say?\nAnswer: {chunk}"

    def complete_batch(
        self, prompts: list[str], *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> list[LLMResult]:
        self.batches.append(list(prompts))
        return [LLMResult(self._reply(p), 10, 5) for p in prompts]

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        raise AssertionError("a batching model is never called one prompt at a time")

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        raise AssertionError("not used")


def test_batched_generation_sends_first_replies_then_retries_in_batches(tmp_path: Path) -> None:
    chunks = ["alpha text", "hard beta", "gamma text", "hard delta", "epsilon text"]
    model = BatchModel()
    client = LLMClient(model, cache_dir=tmp_path, batch_size=2)
    gen = Doc2QueryGenerator(client, M=3, template=SMALL_MODEL_PROMPT)
    assert gen.batched
    out = gen.generate(chunks)
    assert [p[0].answer for p in out] == chunks
    # 5 first prompts in batches of <= 2, then the 2 retries in one batch
    assert [len(b) for b in model.batches] == [2, 2, 1, 2]
    assert all(SMALL_MODEL_REPAIR_SUFFIX in p for p in model.batches[-1])
    assert gen.stats.as_dict()["retried"] == 2 and gen.stats.failed == 0
    assert client.usage.calls == 7
    # a second build (new client, same cache) never calls the model again
    again = BatchModel()
    gen2 = Doc2QueryGenerator(
        LLMClient(again, cache_dir=tmp_path), M=3, template=SMALL_MODEL_PROMPT
    )
    assert gen2.generate(chunks) == out and again.batches == []


def test_line_format_answers_on_the_next_line_and_lead_ins_are_skipped() -> None:
    reply = (
        "Question: What is the demon algorithm?\n\nAnswer:\n\nThe answer is:\n\n"
        "A Monte Carlo method.\n\nQuestion:\nWho wrote it?\nAnswer: Michael Creutz"
    )
    parsed = parse_qa_pairs(reply)
    assert parsed.how == "lines"
    assert parsed.pairs == [
        QAPair("What is the demon algorithm?", "A Monte Carlo method."),
        QAPair("Who wrote it?", "Michael Creutz"),
    ]
    assert parsed.questions == []


@pytest.mark.parametrize(
    ("reply", "questions"),
    [
        ("Question: What is Jalachhayam?\nAnswer:", ["What is Jalachhayam?"]),
        ("Question: Who came?\nQuestion: Why?\nAnswer: fun", ["Who came?"]),
        ("1. Who came?\n2. Why?\n3. Who came?\nthe end", ["Who came?", "Why?"]),
        ('[{"query": "Who?", "answer": ""}, {"query": "Who?", "answer": ""}]', ["Who?"]),
        ("Question:\n1. What is the time?\nAnswer:\n2. What is the time?\nAnswer:", []),
    ],
)
def test_answerless_questions_are_kept_apart_from_the_pairs(
    reply: str, questions: list[str]
) -> None:
    parsed = parse_qa_pairs(reply, M=5)
    assert parsed.questions == questions or (
        # the degenerate numbered reply keeps its one distinct question
        not questions and parsed.questions == ["What is the time?"]
    )
    assert all(q not in {p.query for p in parsed.pairs} for q in parsed.questions)


def test_answerless_questions_stop_at_m_and_never_repeat_a_pair() -> None:
    reply = "Question: Who came?\nAnswer: Bob\n" + "".join(
        f"Question: Q{i}?\nAnswer:\n" for i in range(6)
    )
    parsed = parse_qa_pairs(reply + "Question: Who came?\nAnswer:\n", M=3)
    assert parsed.pairs == [QAPair("Who came?", "Bob")]
    assert parsed.questions == ["Q0?", "Q1?", "Q2?"]


def test_generator_stores_answerless_questions_after_the_pairs_and_merges_the_retry() -> None:
    replies = iter(["1. Who came?\n2. When?", "Question: Who came?\nAnswer: Bob\nQuestion: Why?"])
    gen = Doc2QueryGenerator(LLMClient(lambda p: next(replies)), M=5, template=SMALL_MODEL_PROMPT)
    out = gen.generate(["Bob came at seven, for fun."])[0]
    # the retry's pair first; answerless questions of both replies after it, without repeats
    assert out == [QAPair("Who came?", "Bob"), QAPair("When?", ""), QAPair("Why?", "")]
    stats = gen.stats.as_dict()
    assert (stats["pairs"], stats["questions"], stats["retried"], stats["failed"]) == (1, 2, 1, 0)

    only_questions = Doc2QueryGenerator(LLMClient(lambda p: "1. Who came?"), M=5)
    assert only_questions.generate(["Bob came."])[0] == [QAPair("Who came?", "")]
    assert only_questions.stats.failed == 1  # no answered pair: still a failed chunk
