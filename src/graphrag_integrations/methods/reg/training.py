"""``graphrag-integrations train --method reg``: train a ReG triple scorer on MetaQA.

Trainer contract (:mod:`graphrag_integrations.core.registry`)::

    train(dataset, out, *, params: RegTrainParams, show_progress) -> report

``dataset`` is a MetaQA folder (``kb.txt``, ``N-hop/dev.txt``, ``N-hop/qa_dev_qtype.txt``,
``answerable_with_reconstructed_kb.json``). The answerable dev questions of ``hops`` are split
with ``disjoint_samples(qs, [train, val, test], seed)`` (the test sample is left untouched for
the benchmark); the scorer is trained on the training sample with ``supervision`` labels
(``weak``: all q->a shortest paths; ``refined``: the LLM's selection from the candidate pool,
cached in ``out/refined-<hops>hop.jsonl`` and resumable; ``oracle``: the shortest paths whose
relation chain is the question type's) and its checkpoint selected on the validation sample's
weak labels. ``out`` receives ``<supervision>-<hops>hop.pt.gz`` + ``.json``
(:mod:`.artefacts`; ``eval --option reg.scorer=OUT`` uses them).

Examples
--------
>>> RegTrainParams.from_options({"supervision": "oracle", "hops": "3"}).hops
3
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graphrag_integrations.core.params import param
from graphrag_integrations.methods.reg.params import TrainParams

__all__ = ["RegTrainParams", "train"]


@dataclass(frozen=True)
class RegTrainParams(TrainParams):
    """Options of ``train --method reg`` (the :class:`TrainParams` plus data and labels)."""

    supervision: Literal["weak", "refined", "oracle"] = param(
        "refined",
        doc="training labels: weak shortest paths, LLM-refined, or oracle (qtype)",
        kwarg=False,
    )
    hops: int = param(2, doc="MetaQA hop set (1, 2 or 3)", ge=1, le=3, kwarg=False)
    train: int = param(300, doc="training questions (sample 1)", ge=1, kwarg=False)
    val: int = param(50, doc="validation questions (sample 2)", ge=1, kwarg=False)
    test: int = param(200, doc="held-out test questions (sample 3, not used)", ge=0, kwarg=False)
    sample_seed: int = param(0, doc="seed of the disjoint samples", kwarg=False)
    llm: str = param("", doc="refined: LLM name or path ('' = offline SmolLM2)", kwarg=False)
    index_cache: str = param(
        "", doc="persisted ReG index of kb.txt (loaded if present, else written)", kwarg=False
    )


def train(
    dataset: Path, out: Path, *, params: RegTrainParams, show_progress: bool = False
) -> Mapping[str, Any]:
    """Train and write one scorer (see the module docstring); returns the JSON report."""
    from graphrag_integrations.core.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.evaluation.metaqa import (
        answerable,
        disjoint_samples,
        load_questions,
        qtype_relation_chain,
    )
    from graphrag_integrations.methods.reg.artefacts import save_scorer
    from graphrag_integrations.methods.reg.candidates import relation_chain
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever, TrainingQuestion
    from graphrag_integrations.methods.reg.kg import Triple
    from graphrag_integrations.methods.reg.refinement import refinement_prompt

    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    embedder = SentenceTransformerEmbedder()
    cache = Path(params.index_cache) if params.index_cache else None
    if cache is not None and (cache / "manifest.json").is_file():
        index = RefinedSubgraphRetriever.load(cache, embedding=embedder)
    else:
        index = RefinedSubgraphRetriever.from_file(
            dataset / "kb.txt", embedding=embedder, show_progress=show_progress
        )
        if cache is not None:
            index.persist(cache)
    build_s = time.perf_counter() - start
    index.show_progress = show_progress
    qs = answerable(
        load_questions(dataset / f"{params.hops}-hop" / "dev.txt"),
        dataset / "answerable_with_reconstructed_kb.json",
    )
    train_q, val_q, _ = disjoint_samples(
        qs, [params.train, params.val, params.test], seed=params.sample_seed
    )
    as_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in train_q]
    val_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in val_q]
    weak = index.supervision(as_t + val_t, mode="weak")
    label_start = time.perf_counter()
    refine_stats: dict[str, Any] | None = None
    tokens = 0
    if params.supervision == "weak":
        labels: Mapping[str, list[Triple]] = weak.labels
    elif params.supervision == "refined":
        from graphrag_integrations.core.llm import LLMClient

        llm = LLMClient(params.llm or None)
        sup = index.supervision(
            as_t, mode="refined", llm=llm, cache_path=out / f"refined-{params.hops}hop.jsonl"
        )
        labels = sup.labels
        refine_stats = vars(sup.refine_stats) if sup.refine_stats else None
        tokens = llm.usage.prompt_tokens
    else:
        view = index.view
        oracle: dict[str, list[Triple]] = {}
        for q, t in zip(train_q, as_t, strict=True):
            chain = tuple(qtype_relation_chain(q.qtype))
            rows = [
                r
                for paths in index.candidate_pool(t).sp_paths.values()
                for p in paths
                if relation_chain(view, p) == chain
                for r, _ in p
            ]
            oracle[q.id] = [view.triple(r) for r in dict.fromkeys(rows)]
        labels = oracle
    label_s = time.perf_counter() - label_start
    report = index.train(
        as_t,
        labels,
        validation=val_t,
        validation_labels={q.id: weak.labels[q.id] for q in val_t},
        params=TrainParams(**params.to_kwargs()),
    )
    assert index.scorer is not None
    prompt_hash = hashlib.sha256(refinement_prompt("", [], []).encode()).hexdigest()[:16]
    meta = {
        "supervision": params.supervision,
        "hops": params.hops,
        "dataset": str(dataset),
        "kg_triples": index.view.n_triples,
        "train_ids": [q.id for q in as_t],
        "validation_ids": [q.id for q in val_t],
        "params": {**params.to_kwargs(), "supervision": params.supervision},
        "embedding": embedder.model_name,
        "llm": (params.llm or "SmolLM2-135M-Instruct (offline)")
        if params.supervision == "refined"
        else None,
        "prompt_hash": prompt_hash if params.supervision == "refined" else None,
        "best_epoch": report.best_epoch,
        "val_recall": report.best_recall,
        "train_s": round(report.seconds, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    save_scorer(index.scorer, out / f"{params.supervision}-{params.hops}hop", meta)
    return {
        **{k: v for k, v in meta.items() if not k.endswith("_ids")},
        "train_questions": len(as_t),
        "validation_questions": len(val_t),
        "index_s": round(build_s, 1),
        "labels_s": round(label_s, 1),
        "llm_prompt_tokens": tokens,
        "refine_stats": refine_stats,
        "out": str(out),
    }
