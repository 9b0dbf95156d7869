"""The committed MetaQA scorers: provenance, equal training questions across supervisions, and
refined supervision that matches today's prompt."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.methods.reg.assets import ASSETS, load_scorer
from graphrag_integrations.methods.reg.refinement import refinement_prompt
from graphrag_integrations.methods.reg.registration import SUPERVISIONS

METAS = sorted(ASSETS.glob("*hop.json"))


def _meta(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_every_supervision_and_hop_is_committed() -> None:
    names = {p.name for p in METAS}
    assert {f"{s}-{h}hop.json" for s in SUPERVISIONS for h in (1, 2, 3)} <= names


@pytest.mark.parametrize("path", METAS, ids=lambda p: p.stem)
def test_provenance(path: Path) -> None:
    meta = _meta(path)
    match = re.fullmatch(r"(\w+)-(\d)hop", path.stem)
    assert match is not None and (meta["supervision"], meta["hops"]) == (
        match.group(1),
        int(match.group(2)),
    )
    train, val = meta["train_ids"], meta["validation_ids"]
    assert train and val and not set(train) & set(val)
    assert all(q.startswith(f"{meta['hops']}-hop/dev/") for q in train + val)
    assert meta["train_s"] > 0 and meta["embedding"] and meta["samples"]
    assert Path(f"{ASSETS / path.stem}.pt.gz").is_file()
    if meta["supervision"] == "refined":
        prompt_hash = hashlib.sha256(refinement_prompt("", [], []).encode()).hexdigest()[:16]
        assert meta["prompt_hash"] == prompt_hash and "SmolLM2" in meta["llm"]
        cache = ASSETS / f"refined-{meta['hops']}hop-supervision.jsonl.gz"
        records = [json.loads(line) for line in gzip.decompress(cache.read_bytes()).splitlines()]
        assert set(train) <= {r["qid"] for r in records}


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_supervisions_share_training_questions(hops: int) -> None:
    ids = {s: _meta(ASSETS / f"{s}-{hops}hop.json")["train_ids"] for s in SUPERVISIONS}
    assert ids["weak"] == ids["refined"] == ids["oracle"]


@pytest.mark.parametrize("hops", [2, 3])
def test_refined_scorers_train_on_100_refined_questions(hops: int) -> None:
    meta = _meta(ASSETS / f"refined-{hops}hop.json")
    cache = ASSETS / f"refined-{hops}hop-supervision.jsonl.gz"
    records = [json.loads(line) for line in gzip.decompress(cache.read_bytes()).splitlines()]
    assert len(meta["train_ids"]) >= 100 and len(set(meta["train_ids"])) == len(meta["train_ids"])
    assert set(meta["train_ids"]) <= {r["qid"] for r in records}
    assert all(r["selected"] and len(r["scores"]) == len(r["order"]) for r in records)
    assert meta["train_cpu_s"] > 0 and "--save-scorers" in meta["command"]


def test_committed_scorers_load() -> None:
    scorer, meta = load_scorer(ASSETS / "refined-2hop")
    assert scorer.config() == meta["config"] and meta["config"]["dim"] == 384
