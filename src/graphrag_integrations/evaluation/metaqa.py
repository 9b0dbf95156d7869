"""MetaQA for ReG: question files, samples, oracle relation chains and the KGQA retrieval
metrics of the ReG harness.

Question files hold ``question with [topic]<TAB>ans1|ans2`` lines; the hop count comes from
the folder name (``2-hop/dev.txt``) or the ``hops`` option. Parsing reuses
:func:`~graphrag_integrations.evaluation.datasets.parse_metaqa_line`.

Metrics (:func:`kgqa_metrics`; definitions in ``docs/reference/metrics.md``, shared with the
harness): ``AnsR@K`` = share of the gold answers (SQuAD-normalised) among the entities (heads
and tails) of the top-``K`` retrieved triples; ``Hit@1`` = the best path's end entity of the
top evidence chain is a gold answer; ``chains``, ``tokens`` (estimated, of the formatted
chains) and ``flat_tokens`` (the same top-K triples as a flat list) per question.

Figures are meant for the answerable subset (questions whose answers are all reachable in
the reconstructed KB, ``answerable_with_reconstructed_kb.json``); say so when reporting.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.evaluation.datasets import KGQuestion
from graphrag_integrations.evaluation.datasets import answerable_metaqa as answerable
from graphrag_integrations.evaluation.datasets import load_metaqa_questions as load_questions
from graphrag_integrations.evaluation.metrics import kgqa_evidence_metrics, latency_percentiles
from graphrag_integrations.methods.reg.params import RegTrainParams
from graphrag_integrations.methods.reg.training import (
    QTYPE_RELATIONS,
    oracle_rows,
    qtype_relation_chain,
    refinement_params,
)

__all__ = [
    "QTYPE_RELATIONS",
    "KGQuestion",
    "answerable",
    "disjoint_samples",
    "kgqa_metrics",
    "load_questions",
    "oracle_rows",
    "qtype_relation_chain",
    "refinement_params",
    "train_reg",
]

_HOP_DIR = re.compile(r"^(\d+)-hop$")


def disjoint_samples(
    questions: Sequence[KGQuestion], sizes: Sequence[int], *, seed: int = 0
) -> list[list[KGQuestion]]:
    """Disjoint random samples of the given sizes (fixed by ``seed``).

    Examples
    --------
    >>> from graphrag_integrations.evaluation.datasets import parse_metaqa_line
    >>> qs = [parse_metaqa_line(f"q [e{i}]\\ta", str(i), 1) for i in range(10)]
    >>> a, b = disjoint_samples(qs, [3, 4])
    >>> len(a), len(b), set(q.id for q in a) & set(q.id for q in b)
    (3, 4, set())
    """
    if sum(sizes) > len(questions):
        raise ValueError(f"asked for {sum(sizes)} questions, only {len(questions)} available")
    order = list(questions)
    random.Random(seed).shuffle(order)
    out, start = [], 0
    for n in sizes:
        out.append(order[start : start + n])
        start += n
    return out


def kgqa_metrics(
    index: Any,
    questions: Sequence[KGQuestion],
    *,
    ks: Sequence[int] = (50, 100),
) -> dict[str, float]:
    """KGQA metrics of a :class:`~graphrag_integrations.methods.reg.index.RegIndex` over
    ``questions``, each anchored at its topic entity and retrieved once with the top
    ``max(ks)`` triples: :func:`~graphrag_integrations.evaluation.metrics.kgqa_evidence_metrics`
    (``AnsR@k``, ``Hit@1``, ``chains``, ``tokens``, ``flat_tokens``, the harness's definitions),
    plus ``chain_hops`` and ``chain_triples`` (mean relation-chain length and triples per
    evidence chain), ``questions`` and the latency percentiles of ``evidence_chains``."""
    from graphrag_integrations.methods.reg.kgqa import question_evidence

    runs = [
        (question_evidence(index, q.text, topic_entities=[q.topic_entity], K=max(ks)), q)
        for q in questions
    ]
    out = kgqa_evidence_metrics([(e, q.answers) for e, q in runs], ks)
    hops = [h for e, _ in runs for h in e.chain_hops]
    sizes = [n for e, _ in runs for n in e.chain_triples]
    out["chain_hops"] = float(sum(hops) / max(len(hops), 1))
    out["chain_triples"] = float(sum(sizes) / max(len(sizes), 1))
    out["questions"] = float(len(questions))
    out.update(latency_percentiles([e.seconds for e, _ in runs]))
    return out


def train_reg(
    dataset: Path, out: Path, *, params: RegTrainParams, show_progress: bool = False
) -> Mapping[str, Any]:
    """``graphrag-integrations train --method reg``: train one ReG triple scorer on MetaQA.

    ``dataset`` is a MetaQA folder (``kb.txt``, ``N-hop/dev.txt``, ``N-hop/qa_dev_qtype.txt``,
    ``answerable_with_reconstructed_kb.json``). The answerable dev questions of ``hops`` are
    split with ``disjoint_samples(qs, [train, val, test], sample_seed)`` (the test sample is
    left for the benchmark); the scorer is trained on the training sample with
    ``supervision`` labels (``weak``: all q->a shortest paths; ``refined``: the LLM's
    selection from the candidate pool, cached in ``out/refined-<hops>hop.jsonl`` and
    resumable; ``oracle``: the shortest paths whose relation chain is the question type's)
    and its checkpoint selected on the validation sample's weak labels. ``out`` receives
    ``<supervision>-<hops>hop.pt.gz`` + ``.json`` (``methods.reg.assets``;
    ``eval --option reg.scorer=OUT`` uses them). Returns the JSON report.
    """
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
    from graphrag_integrations.methods.reg.training import TrainingQuestion, train_and_save

    refinement_params(params.refinement)  # bad options fail before any work
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

    def as_training(q: KGQuestion) -> TrainingQuestion:
        return TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers))

    report = train_and_save(
        index,
        [as_training(q) for q in train_q],
        [as_training(q) for q in val_q],
        params=params,
        out=out,
        qtypes={q.id: q.qtype for q in train_q},
        provenance={"dataset": str(dataset)},
    )
    return {**report, "index_s": round(build_s, 1)}
