"""Training the triple scorer (paper 4.1, eq. 29, appendix F): labels, examples, the loop.

* **Labels** (:func:`build_supervision`): ``"weak"`` (every q->a shortest path of the
  candidate pool) or ``"refined"`` (the LLM's selection from the pool, :mod:`.refinement`);
  :class:`Supervision` keeps them in :class:`SupervisionLabels`, a dict that remembers how to
  label more questions the same way, so validation questions the labels do not cover are
  labelled with the same mode (:func:`validation_labels`) instead of silently giving no
  validation signal. Oracle labels (the MetaQA question type's relation chain,
  :func:`oracle_rows`) are the benchmark's upper bound.
* **Examples** (:func:`question_examples`): each question's bounded subgraph, its features
  and the positions of its labelled triples in it.
* **Loop** (:func:`train_scorer`): BCE over every triple of each question's subgraph (one
  question per step, Adam), the checkpoint chosen by validation triple recall@k.
* **Files** (:func:`train_and_save`): what ``graphrag-integrations train --method reg``
  trains and writes (``<supervision>-<hops>hop.pt.gz`` + provenance, :mod:`.assets`); the
  MetaQA data loading is ``evaluation.metaqa.train_reg``.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.progress import ProgressSetting, progress
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.methods.reg.candidates import CandidatePool, PoolStats, relation_chain
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.params import RefinementParams, RegTrainParams
from graphrag_integrations.methods.reg.refinement import Refiner, RefineStats
from graphrag_integrations.methods.reg.scorer import Features, TripleScorer, feature_tensors
from graphrag_integrations.methods.reg.store import KGView

__all__ = [
    "QTYPE_RELATIONS",
    "Example",
    "Supervision",
    "SupervisionLabels",
    "TrainReport",
    "TrainingQuestion",
    "build_supervision",
    "label_questions",
    "oracle_rows",
    "qtype_relation_chain",
    "question_examples",
    "refinement_params",
    "train_and_save",
    "train_questions",
    "train_scorer",
    "triple_recall",
    "validation_labels",
]

logger = logging.getLogger(__name__)

_BRACKET = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class TrainingQuestion:
    """A question with its topic entities and gold answers (KG entity names)."""

    id: str
    text: str
    topic_entities: tuple[str, ...]
    answers: tuple[str, ...]


Labeller = Callable[[Sequence[TrainingQuestion]], Mapping[str, list[Triple]]]


class SupervisionLabels(dict[str, list[Triple]]):
    """Labels per question id, plus the ``mode`` that made them and a ``labeller`` that
    labels further questions the same way (``None``: the mode cannot label more)."""

    def __init__(
        self,
        labels: Mapping[str, list[Triple]] | None = None,
        *,
        mode: str = "",
        labeller: Labeller | None = None,
    ) -> None:
        super().__init__(labels or {})
        self.mode = mode
        self.labeller = labeller


@dataclass
class Supervision:
    """Training labels and what producing them cost."""

    labels: SupervisionLabels
    pool_stats: dict[str, PoolStats] = field(default_factory=dict)
    refine_stats: RefineStats | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def pool_summary(self) -> dict[str, float]:
        """Mean and max pool size before / after merging (Table 1)."""
        if not self.pool_stats:
            return {}
        raw = [s.raw for s in self.pool_stats.values()]
        merged = [s.merged for s in self.pool_stats.values()]
        return {
            "raw_mean": float(np.mean(raw)),
            "raw_max": float(max(raw)),
            "merged_mean": float(np.mean(merged)),
            "merged_max": float(max(merged)),
        }


def build_supervision(
    view: KGView,
    questions: Sequence[TrainingQuestion],
    pools: Mapping[str, CandidatePool],
    refiner: Refiner | None,
    *,
    labeller: Labeller | None = None,
    show_progress: bool | None = False,
    llm_progress: bool = False,
) -> Supervision:
    """Weak labels (``refiner`` ``None``) or the refiner's selections, per question.

    ``show_progress``: a bar over the questions of weak labelling; ``llm_progress``: the
    refiner's LLM progress (from the first call, with an ETA and tokens)."""
    mode = "weak" if refiner is None else "refined"
    out = Supervision(
        SupervisionLabels(mode=mode, labeller=labeller),
        refine_stats=refiner.stats if refiner else None,
    )
    if refiner is not None and refiner.params.choice_scoring == "batch":
        # Batch Calibration: the position prior of the questions labelled together
        refiner.fit_batch(view, [(q.id, q.text, pools[q.id]) for q in questions])
    steps = (
        progress(questions, "ReG weak supervision", enabled=bool(show_progress))
        if refiner is None
        else refiner.track(questions, enabled=llm_progress)  # from the first LLM call
    )
    for q in steps:
        pool = pools[q.id]
        out.pool_stats[q.id] = pool.stats
        if refiner is None:
            rows, source = pool.weak_triples(), "weak"
        else:
            labels = refiner.refine(q.id, q.text, view, pool)
            rows, source = labels.rows, labels.source
        out.labels[q.id] = [view.triple(r) for r in rows]
        out.sources[q.id] = source
    return out


def label_questions(
    index: Any,
    questions: Sequence[TrainingQuestion],
    *,
    mode: str,
    llm: Any,
    refinement: RefinementParams | None,
    cache_path: str | Path | None,
) -> Supervision:
    """``index.supervision(...)`` of a ``RefinedSubgraphRetriever``: the candidate pools,
    then weak labels or the refiner's; the labels' labeller repeats the call for more
    questions.

    Raises
    ------
    InvalidArgumentError
        An unknown ``mode``, or ``"refined"`` without an ``llm``.
    """
    refiner = None
    if mode == "refined":
        if llm is None:
            raise InvalidArgumentError("refined supervision needs an llm")
        refiner = Refiner(
            llm, refinement or RefinementParams(), Path(cache_path) if cache_path else None
        )
    elif mode != "weak":
        raise InvalidArgumentError(f"mode must be 'weak' or 'refined', got {mode!r}")

    def labeller(more: Sequence[TrainingQuestion]) -> dict[str, list[Triple]]:
        again = label_questions(
            index, more, mode=mode, llm=llm, refinement=refinement, cache_path=cache_path
        )
        return dict(again.labels)

    pools = {q.id: index.candidate_pool(q) for q in questions}
    return build_supervision(
        index.view,
        questions,
        pools,
        refiner,
        labeller=labeller,
        show_progress=index.show_progress,
        llm_progress=ProgressSetting.llm(index),
    )


def validation_labels(
    validation: Sequence[TrainingQuestion],
    labels: Mapping[str, Sequence[Triple]],
    given: Mapping[str, Sequence[Triple]] | None,
) -> Mapping[str, Sequence[Triple]]:
    """The labels of the ``validation`` questions: ``given`` (which must cover them), else
    ``labels`` when they cover them, else ``labels.labeller``'s for the missing ones (the
    same supervision mode).

    Raises
    ------
    InvalidArgumentError
        Validation questions without labels that cannot be labelled the same way.
    """
    source = given if given is not None else labels
    missing = [q for q in validation if q.id not in source]
    if not missing:
        return source
    labeller = getattr(labels, "labeller", None) if given is None else None
    if labeller is None:
        ids = ", ".join(q.id for q in missing[:5]) + (", ..." if len(missing) > 5 else "")
        what = "validation_labels" if given is not None else "the training labels"
        raise InvalidArgumentError(
            f"{len(missing)} validation questions have no labels in {what} ({ids}): pass "
            "validation_labels=, or labels from supervision() (which label them the same way)"
        )
    logger.info(
        "labelling %d validation questions with %s supervision",
        len(missing),
        getattr(labels, "mode", "") or "the same",
    )
    return {**source, **labeller(missing)}


@dataclass(frozen=True)
class Example:
    """A training question: its features and the positive triples (subgraph-local indexes)."""

    qid: str
    feats: Features
    positives: npt.NDArray[np.int64]


def question_examples(
    index: Any,
    questions: Sequence[TrainingQuestion],
    labels: Mapping[str, Sequence[Triple]],
) -> list[Example]:
    """One :class:`Example` per question of ``index`` (a ``RefinedSubgraphRetriever``) whose
    topic entities are in the KG: its subgraph's features and its labelled triples in it."""
    from graphrag_integrations.methods.reg.scorer import features

    view = index.view
    vecs = index.embedder.embed([_BRACKET.sub(r"\1", q.text) for q in questions])
    out: list[Example] = []
    outside = 0
    for q, vec in zip(questions, vecs, strict=True):
        anchors = [t for t in q.topic_entities if t in view.entity_row]
        if not anchors:
            continue
        sub = index.subgraph(anchors)
        local = {int(r): i for i, r in enumerate(sub.rows)}
        rows = view.triple_rows(labels.get(q.id, []))
        pos = [local[r] for r in rows if r in local]
        outside += len(rows) - len(pos)
        feats = features(view, sub, vec, index.index_params)
        out.append(Example(q.id, feats, np.array(pos, np.int64)))
    if outside:
        logger.info("%d label triples lie outside their question's subgraph", outside)
    return out


def train_questions(
    index: Any,
    questions: Sequence[TrainingQuestion],
    labels: Mapping[str, Sequence[Triple]],
    validation: Sequence[TrainingQuestion],
    given: Mapping[str, Sequence[Triple]] | None,
    params: RegTrainParams,
) -> tuple[TripleScorer, TrainReport]:
    """``index.train(...)`` of a ``RefinedSubgraphRetriever``: examples of the training and
    validation questions (validation labels by :func:`validation_labels`; a warning when
    validation questions are training questions), then :func:`train_scorer`."""
    train = question_examples(index, questions, labels)
    trained = {q.id for q in questions}
    fitted = [q.id for q in validation if q.id in trained]
    if fitted:
        logger.warning(
            "%d of %d validation questions are training questions: the checkpoint is chosen "
            "on fitted data (the most fitted epoch); hold some questions out",
            len(fitted),
            len(validation),
        )
    val: list[Example] = []
    if validation:
        val = question_examples(index, validation, validation_labels(validation, labels, given))
    return train_scorer(train, val, params, show_progress=index.show_progress)


def _bce(logits: FloatMatrix, positives: npt.NDArray[np.int64]) -> float:
    """Mean binary cross-entropy of ``logits`` against the positive indexes."""
    labels = np.zeros(logits.shape[0], dtype=np.float64)
    labels[positives] = 1.0
    x = logits.astype(np.float64)
    return float(np.mean(np.maximum(x, 0) - x * labels + np.log1p(np.exp(-np.abs(x)))))


def triple_recall(scores: FloatMatrix, positives: npt.NDArray[np.int64], k: int) -> float:
    """Share of positive triples among the ``k`` best-scored.

    Examples
    --------
    >>> import numpy as np
    >>> triple_recall(np.array([0.9, 0.1, 0.5]), np.array([1, 2]), 2)
    0.5
    """
    if positives.shape[0] == 0:
        raise ValueError("triple recall is undefined without positives")
    top = np.argsort(-scores, kind="stable")[:k]
    return float(np.isin(positives, top).mean())


@dataclass
class TrainReport:
    """What :func:`train_scorer` did."""

    epochs: int
    best_epoch: int
    best_recall: float
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    train_questions: int = 0
    val_questions: int = 0


def train_scorer(
    train: Sequence[Example],
    val: Sequence[Example],
    params: RegTrainParams,
    *,
    show_progress: bool | None = False,
) -> tuple[TripleScorer, TrainReport]:
    """BCE over all triples of each training subgraph (one question per step, Adam); keeps the
    epoch with the best mean validation triple recall@``recall_k``, ties (recall saturates on
    easy sets) broken by the lower validation BCE; without ``val``, the lowest training loss.

    Raises
    ------
    ValueError
        No training example with a positive triple, or validation examples none of which
        has a positive triple (the validation recall would be undefined).
    """
    import torch

    train = [e for e in train if e.positives.shape[0]]
    had_val = bool(val)
    val = [e for e in val if e.positives.shape[0]]
    if not train:
        raise ValueError("no training question has a positive triple in its subgraph")
    if had_val and not val:
        raise ValueError("no validation question has a labelled triple in its subgraph")
    torch.manual_seed(params.seed)
    first = train[0].feats
    scorer = TripleScorer(int(first.query.shape[0]), int(first.dde.shape[1]), params.hidden)
    opt = torch.optim.Adam(scorer.module.parameters(), lr=params.lr)
    prepared = []
    for e in train:
        labels = torch.zeros(e.feats.heads.shape[0])
        labels[torch.from_numpy(e.positives)] = 1.0
        prepared.append((feature_tensors(e.feats), labels))
    rng = np.random.default_rng(params.seed)
    best: tuple[tuple[float, float], int, bytes] | None = None
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    for epoch in progress(range(params.epochs), "ReG scorer epochs", enabled=bool(show_progress)):
        scorer.module.train()
        total = 0.0
        for i in rng.permutation(len(prepared)):
            tensors, labels = prepared[int(i)]
            logits = scorer.module(tensors)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            opt.step()
            total += float(loss.detach())
        mean_loss = total / len(prepared)
        if val:
            scored = [(scorer.score(e.feats), e) for e in val]
            recall = float(
                np.mean([triple_recall(sc, e.positives, params.recall_k) for sc, e in scored])
            )
            val_loss = float(np.mean([_bce(sc, e.positives) for sc, e in scored]))
        else:
            recall, val_loss = float("nan"), mean_loss
        history.append(
            {"epoch": epoch, "loss": mean_loss, "val_recall": recall, "val_loss": val_loss}
        )
        logger.info(
            "epoch %d: loss %.4f, validation recall@%d %.4f, loss %.4f",
            epoch,
            mean_loss,
            params.recall_k,
            recall,
            val_loss,
        )
        key = (0.0 if np.isnan(recall) else recall, -val_loss)
        if best is None or key > best[0]:
            best = (key, epoch, scorer.to_bytes())
    assert best is not None
    chosen = TripleScorer.from_bytes(best[2], **scorer.config())
    report = TrainReport(
        epochs=params.epochs,
        best_epoch=best[1],
        best_recall=best[0][0],
        history=history,
        seconds=time.perf_counter() - start,
        train_questions=len(train),
        val_questions=len(val),
    )
    return chosen, report


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


def qtype_relation_chain(qtype: str) -> list[tuple[str, bool]]:
    """The directed relation chain of a MetaQA question type, from the topic entity.

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


def oracle_rows(pool: CandidatePool, view: KGView, qtype: str) -> list[int]:
    """Triple rows of the oracle labels of a candidate pool: every q->a shortest path (to any
    answer) whose relation chain is the question type's (:func:`qtype_relation_chain`),
    first-seen order."""
    chain = tuple(qtype_relation_chain(qtype))
    rows = [
        r
        for paths in pool.sp_paths.values()
        for p in paths
        if relation_chain(view, p) == chain
        for r, _ in p
    ]
    return list(dict.fromkeys(rows))


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


def train_and_save(
    index: Any,
    train_questions: Sequence[TrainingQuestion],
    validation: Sequence[TrainingQuestion],
    *,
    params: RegTrainParams,
    out: Path,
    qtypes: Mapping[str, str] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Label ``train_questions`` with ``params.supervision`` (``oracle`` needs ``qtypes``, the
    MetaQA question type per id), train ``index``'s scorer with the checkpoint selected on
    the weak labels of ``validation``, and write ``out/<supervision>-<hops>hop.pt.gz`` +
    ``.json`` (provenance: ``provenance`` plus labels, ids, epochs, prompt hash). Returns the
    report of ``graphrag-integrations train --method reg`` (without the id lists)."""
    from graphrag_integrations.methods.reg.assets import save_scorer
    from graphrag_integrations.methods.reg.refinement import refinement_prompt

    refinement = refinement_params(params.refinement)
    weak = index.supervision([*train_questions, *validation], mode="weak")
    label_start = time.perf_counter()
    refine_stats: dict[str, Any] | None = None
    tokens = 0
    labels: Mapping[str, list[Triple]]
    if params.supervision == "weak":
        labels = weak.labels
    elif params.supervision == "refined":
        from graphrag_integrations.core.llm import LLMClient

        llm = LLMClient(params.llm or None)
        sup = index.supervision(
            train_questions,
            mode="refined",
            llm=llm,
            refinement=refinement,
            cache_path=out / f"refined-{params.hops}hop.jsonl",
        )
        labels = sup.labels
        refine_stats = vars(sup.refine_stats) if sup.refine_stats else None
        tokens = llm.usage.prompt_tokens
    else:
        if qtypes is None:
            raise InvalidArgumentError("oracle supervision needs the question types (qtypes=)")
        view = index.view
        labels = {
            q.id: [view.triple(r) for r in oracle_rows(index.candidate_pool(q), view, qtypes[q.id])]
            for q in train_questions
        }
    label_s = time.perf_counter() - label_start
    report = index.train(
        train_questions,
        labels,
        validation=validation,
        validation_labels={q.id: weak.labels[q.id] for q in validation},
        params=params,
    )
    refined = params.supervision == "refined"
    prompt_hash = hashlib.sha256(refinement_prompt("", [], []).encode()).hexdigest()[:16]
    meta = {
        "supervision": params.supervision,
        "hops": params.hops,
        **(provenance or {}),
        "kg_triples": index.view.n_triples,
        "train_ids": [q.id for q in train_questions],
        "validation_ids": [q.id for q in validation],
        "params": {**params.to_kwargs(), "supervision": params.supervision},
        "embedding": index.embedder.model_name,
        "llm": (params.llm or "SmolLM2-135M-Instruct (offline)") if refined else None,
        "prompt_hash": prompt_hash if refined else None,
        "refinement": refinement.to_kwargs() if refined else None,
        "best_epoch": report.best_epoch,
        "val_recall": report.best_recall,
        "train_s": round(report.seconds, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    save_scorer(index.scorer, out / f"{params.supervision}-{params.hops}hop", meta)
    return {
        **{k: v for k, v in meta.items() if not k.endswith("_ids")},
        "train_questions": len(train_questions),
        "validation_questions": len(validation),
        "labels_s": round(label_s, 1),
        "llm_prompt_tokens": tokens,
        "refine_stats": refine_stats,
        "out": str(out),
    }
