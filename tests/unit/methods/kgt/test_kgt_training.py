"""Structure-aware fine-tuning: F.1 training data and a few LoRA steps on a tiny model."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from graphrag_integrations.core.llm import TransformersLLM
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.constraints import contains_span
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from graphrag_integrations.methods.kgt.parsekg import hyperedges
from graphrag_integrations.methods.kgt.training import (
    HELDOUT_FILE,
    TRANSLATOR_CONFIG,
    SingleHop,
    build_training_examples,
    cosine_schedule,
    load_translator,
    musique_single_hops,
    split_fold,
    target_ids,
    train,
    train_translator,
)
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import documents

PASSAGE = "Marie Curie was born in Warsaw in 1867 to a family of teachers. She won a prize."
HOPS = [
    SingleHop("Where was Marie Curie born?", PASSAGE, "Marie Curie", "Warsaw"),
    SingleHop("Who taught Marie Curie?", PASSAGE, "Marie Curie", "her mother"),  # not an entity
]


@pytest.mark.parametrize(("total", "warmup"), [(1, 0), (7, 0), (10, 1), (37, 3), (100, 10), (9, 9)])
def test_cosine_schedule_warms_up_from_the_first_step_then_decays_to_zero(
    total: int, warmup: int
) -> None:
    """The schedule train_translator ran before it was transformers' (its formula)."""
    import warnings

    def expected(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=2e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "scheduler stepped before the optimizer"
        scheduler = cosine_schedule(optimizer, total, warmup)
        rates = []
        for _ in range(total):
            rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
    assert rates == pytest.approx([2e-4 * expected(i) for i in range(total)], rel=1e-12, abs=1e-18)
    assert rates[0] > 0


def test_musique_references_are_resolved_and_steps_kept() -> None:
    item = {
        "paragraphs": [
            {"idx": 0, "title": "A", "paragraph_text": "pa"},
            {"idx": 1, "title": "B", "paragraph_text": "pb"},
        ],
        "question_decomposition": [
            {"question": "Who founded X?", "answer": "Ann", "paragraph_support_idx": 1},
            {"question": "Where was #1 born?", "answer": "Oslo", "paragraph_support_idx": 0},
            {"question": "#3 is unknown", "answer": "?", "paragraph_support_idx": None},
        ],
    }
    hops = musique_single_hops([item])
    assert [(h.question, h.passage, h.answer) for h in hops] == [
        ("Who founded X?", "pb", "Ann"),
        ("Where was Ann born?", "pa", "Oslo"),
    ]


@pytest.mark.parametrize("window", [3, 10])
def test_f1_examples_are_spans_of_the_parsekg_hyperrelation(window: int) -> None:
    examples, skipped = build_training_examples(HOPS, embedder=FakeEmbedder(), window=window)
    assert skipped["answer_not_an_entity"] == 1 and len(examples) == 1
    (ex,) = examples
    assert ex.head == "Marie Curie" and ex.tail == "Warsaw"
    parsed = SpacyNLP().parse(PASSAGE)
    rels = [e.relation for e in hyperedges(Passage("p", PASSAGE, "d"), parsed)]
    assert ex.hyperrelation in rels  # masked exactly like the ParseKG
    assert ex.hyperrelation[ex.start : ex.end] == ex.relation
    assert "Warsaw" not in ex.relation and "##" in ex.relation  # t* removed (masked)
    assert len(ex.relation.split()) <= window


def test_target_ids_are_head_separator_span_eos(lm: Any) -> None:
    (ex,), _ = build_training_examples(HOPS[:1], embedder=FakeEmbedder(), window=4)
    tok = lm.tokenizer
    ids = target_ids(tok, ex)
    head = tok(ex.head, add_special_tokens=False)["input_ids"]
    sep = tok("@@", add_special_tokens=False)["input_ids"]
    assert ids[: len(head)] == head and ids[len(head)] == sep[0] and ids[-1] == tok.eos_token_id
    span = ids[len(head) + 1 : -1]
    full = tok(ex.hyperrelation, add_special_tokens=False)["input_ids"]
    assert span and contains_span(full, span)
    assert tok.decode(span).strip() == ex.relation


def test_lora_training_saves_an_adapter_the_retriever_loads(lm: Any, tmp_path: Path) -> None:
    (ex,), _ = build_training_examples(HOPS[:1], embedder=FakeEmbedder(), window=4)
    out = train_translator(
        [ex] * 4, tmp_path / "adapter", base_model=lm, max_steps=12, batch_size=2,
        learning_rate=5e-2,
    )  # fmt: skip
    assert out["steps"] == 12 and out["losses"][-1] < out["losses"][0]
    assert (tmp_path / "adapter" / "adapter_config.json").is_file()
    loaded = load_translator(tmp_path / "adapter")
    assert isinstance(loaded, TransformersLLM) and loaded.model_name == str(tmp_path / "adapter")
    prompt = lm.encode_prompt("Where was Marie Curie born?")
    with torch.inference_mode():
        tuned = loaded.model(**prompt).logits[0, -1]
        base = lm.model(**prompt).logits[0, -1]
    assert not torch.allclose(tuned, base)  # the adapter is merged in
    index = ParseKGTranslatorRetriever.from_documents(
        documents(),
        embedding=FakeEmbedder(),
        translator=str(tmp_path / "adapter"),
        query_params=KGTQueryParams(alpha=1),
    )
    result = index.translate("Where was Marie Curie born?")
    assert result.clues
    for clue in result.clues:
        rels = index.view.rels_of(clue.entity, clue.direction)
        assert any(contains_span(index.constraint_indexes.rel_tokens[r], clue.relation_ids)
                   for r in rels)  # fmt: skip


def test_adapter_loads_and_translates_in_bfloat16(lm: Any, tmp_path: Path) -> None:
    (ex,), _ = build_training_examples(HOPS[:1], embedder=FakeEmbedder(), window=4)
    folder = tmp_path / "adapter"
    train_translator([ex] * 4, folder, base_model=lm, max_steps=12, batch_size=2,
                     learning_rate=5e-2)  # fmt: skip
    full, half = load_translator(folder), load_translator(folder, dtype="bfloat16")
    assert half.model.dtype == torch.bfloat16 and full.model.dtype == torch.float32
    # the precision is part of the name (response caches never mix precisions)
    assert (full.model_name, half.model_name) == (str(folder), f"{folder}[bfloat16]")
    # merged in float32, then cast: every weight is the float32 merged weight, rounded
    tuned, rounded = full.model.state_dict(), half.model.state_dict()
    base = TransformersLLM(lm.model_name, use_chat_template=False).model.state_dict()
    assert tuned.keys() == rounded.keys() == base.keys()
    assert all(torch.equal(rounded[n], tuned[n].to(torch.bfloat16)) for n in tuned)
    assert any(not torch.equal(rounded[n], base[n].to(torch.bfloat16)) for n in base)
    # the retriever option loads it so, and bfloat16 clues still exist in the ParseKG
    index = ParseKGTranslatorRetriever.from_documents(
        documents(), embedding=FakeEmbedder(), translator=str(folder),
        query_params=KGTQueryParams(alpha=2, translator_dtype="bfloat16"),
    )  # fmt: skip
    assert index.lm.model.dtype == torch.bfloat16 and index.lm.model_name == half.model_name
    for question in ("Where was Marie Curie born?", "Who managed Nottingham Forest?"):
        result = index.translate(question)
        assert result.clues
        for clue in result.clues:
            rels = index.view.rels_of(clue.entity, clue.direction)
            assert any(contains_span(index.constraint_indexes.rel_tokens[r], clue.relation_ids)
                       for r in rels)  # fmt: skip


def test_trainer_cross_fitting_writes_adapter_heldout_and_provenance(
    lm: Any, tmp_path: Path
) -> None:
    from graphrag_integrations.methods.kgt.params import KGTTrainParams

    def item(i: int) -> dict[str, Any]:
        return {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "paragraphs": [{"idx": 0, "title": "Marie Curie", "paragraph_text": PASSAGE}],
            "question_decomposition": [
                {"question": "Where was Marie Curie born?", "answer": "Warsaw",
                 "paragraph_support_idx": 0},
            ],
        }  # fmt: skip

    data = tmp_path / "data"
    data.mkdir()
    (data / "questions.json").write_text(json.dumps([item(0), item(1), item(2)]))
    params = KGTTrainParams(fold="b", max_steps=2, batch_size=1, base_model=lm.model_name)
    report = train(data, tmp_path / "out", params=params, embedder=FakeEmbedder())
    assert report["steps"] == 2 and report["examples"] == 1  # deduplicated hops
    assert report["questions_trained"] == 2 and report["questions_held_out"] == 1
    heldout = json.loads((tmp_path / "out" / HELDOUT_FILE).read_text())
    assert [q["id"] for q in heldout] == ["q0"]  # fold b trains on the second half
    info = json.loads((tmp_path / "out" / TRANSLATOR_CONFIG).read_text())
    assert info["provenance"]["fold"] == "b" and info["base_model"] == lm.model_name
    assert len(info["provenance"]["data_sha256"]) == 64
    from safetensors.torch import load_file

    weights = load_file(str(tmp_path / "out" / "adapter_model.safetensors"))
    assert {str(w.dtype) for w in weights.values()} == {"torch.float16"}
    assert split_fold([1, 2, 3], "a") == ([1], [2, 3])
