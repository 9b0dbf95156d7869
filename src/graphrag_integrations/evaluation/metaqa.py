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

import hashlib
import itertools
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
from graphrag_integrations.methods.reg.params import RefinementParams, RegTrainParams

__all__ = [
    "QTYPE_RELATIONS",
    "KGQuestion",
    "answerable",
    "disjoint_samples",
    "kgqa_metrics",
    "load_questions",
    "qtype_relation_chain",
    "train_reg",
]

_HOP_DIR = re.compile(r"^(\d+)-hop$")
#: MetaQA question-type words -> KB relation from the movie (the movie is always the head).
QTYPE_RELATIONS = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "year": "release_year",
    "genre": "has_genre",
    "tags": "has_tags",
    "tag": "has_tags",
    "language": "in_language",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}


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


def qtype_relation_chain(qtype: str) -> list[tuple[str, bool]]:
    """The directed relation chain of a question type, from the topic entity.

    Examples
    --------
    >>> qtype_relation_chain("actor_to_movie_to_director")
    [('starred_actors', False), ('directed_by', True)]
    """
    parts = qtype.split("_to_")
    chain: list[tuple[str, bool]] = []
    for a, b in itertools.pairwise(parts):
        if a == "movie" and b in QTYPE_RELATIONS:
            chain.append((QTYPE_RELATIONS[b], True))
        elif b == "movie" and a in QTYPE_RELATIONS:
            chain.append((QTYPE_RELATIONS[a], False))
        else:
            raise ValueError(f"unknown MetaQA question type step {a!r} -> {b!r} in {qtype!r}")
    return chain


def oracle_rows(pool: Any, view: Any, qtype: str) -> list[int]:
    """Triple rows of the oracle labels of a ReG candidate pool: every q->a shortest path (to
    any answer) whose relation chain is the question type's (:func:`qtype_relation_chain`),
    first-seen order. ``pool`` is a ``CandidatePool``, ``view`` its ``KGView``."""
    from graphrag_integrations.methods.reg.candidates import relation_chain

    chain = tuple(qtype_relation_chain(qtype))
    rows = [
        r
        for paths in pool.sp_paths.values()
        for p in paths
        if relation_chain(view, p) == chain
        for r, _ in p
    ]
    return list(dict.fromkeys(rows))


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
        (question_evidence(index, q.text, topic_entities=[q.topic_entity], top_k=max(ks)), q)
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


def refinement_params(spec: str) -> RefinementParams:
    """``RegTrainParams.refinement`` (``"K=V,K=V"``, ``""`` = defaults) as RefinementParams.

    Examples
    --------
    >>> p = refinement_params("choice_scoring=permuted,choice_options=answer_paths")
    >>> p.choice_scoring, p.choice_options
    ('permuted', 'answer_paths')
    >>> refinement_params("") == RefinementParams()
    True
    """
    from graphrag_integrations.core.params import key_values

    items = [item.strip() for item in spec.split(",") if item.strip()]
    return RefinementParams.from_options(key_values(items))


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
    ``<supervision>-<hops>hop.pt.gz`` + ``.json`` (``methods.reg.artefacts``;
    ``eval --option reg.scorer=OUT`` uses them). Returns the JSON report.
    """
    from graphrag_integrations.core.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.methods.reg.artefacts import save_scorer
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever, TrainingQuestion
    from graphrag_integrations.methods.reg.kg import Triple
    from graphrag_integrations.methods.reg.params import TrainParams
    from graphrag_integrations.methods.reg.refinement import refinement_prompt

    refinement = refinement_params(params.refinement)  # bad options fail before any work
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
            as_t,
            mode="refined",
            llm=llm,
            refinement=refinement,
            cache_path=out / f"refined-{params.hops}hop.jsonl",
        )
        labels = sup.labels
        refine_stats = vars(sup.refine_stats) if sup.refine_stats else None
        tokens = llm.usage.prompt_tokens
    else:
        view = index.view
        oracle: dict[str, list[Triple]] = {}
        for q, t in zip(train_q, as_t, strict=True):
            rows = oracle_rows(index.candidate_pool(t), view, q.qtype)
            oracle[q.id] = [view.triple(r) for r in rows]
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
        "refinement": refinement.to_kwargs() if params.supervision == "refined" else None,
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
