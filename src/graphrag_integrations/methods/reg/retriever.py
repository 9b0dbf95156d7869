"""The triple retriever (ReG@Triple, eq. 29; appendix F): DDE + MLP over
``[query, head, relation, tail, DDE]``, trained with BCE over every triple of each question's
bounded subgraph, the checkpoint chosen by validation triple recall@k.

The first MLP layer over the concatenation is computed as a sum of per-part projections
(``W [q; h; r; t; d] = Wq q + Wh h + Wr r + Wt t + Wd d``), so each entity and relation of a
subgraph is projected once instead of once per triple; the function is the same.

Untrained, :func:`untrained_scores` ranks triples by ``cos(query, relation) + cos(query,
head) + cos(query, tail)`` plus the triple's DDE mass (closeness to the anchors) - a
zero-shot order, used (with a warning) when an index has no trained scorer.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.progress import progress
from graphrag_integrations.methods.reg.params import RetrieverParams, TrainParams
from graphrag_integrations.methods.reg.store import KGView
from graphrag_integrations.methods.reg.subgraph import Subgraph, triple_dde

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Features:
    """A question's scorer inputs (subgraph-local)."""

    query: FloatMatrix  # (d,)
    entities: FloatMatrix  # (n_nodes, d)
    relations: FloatMatrix  # (n_rel, d) - the whole KG's relation table
    heads: npt.NDArray[np.int64]
    rels: npt.NDArray[np.int64]
    tails: npt.NDArray[np.int64]
    dde: FloatMatrix  # (n_triples, dde_dim)


def features(view: KGView, sub: Subgraph, query: FloatMatrix, params: RetrieverParams) -> Features:
    """Scorer inputs of subgraph ``sub`` for query vector ``query``."""
    return Features(
        query=np.asarray(query, np.float32),
        entities=view.entity_vectors[sub.nodes],
        relations=view.relation_vectors,
        heads=sub.heads,
        rels=view.rels[sub.rows],
        tails=sub.tails,
        dde=triple_dde(sub, params.dde_rounds, params.dde_reverse_rounds),
    )


def untrained_scores(feats: Features) -> FloatMatrix:
    """Zero-shot triple scores (see the module docstring)."""
    q = feats.query
    ent = feats.entities @ q
    rel = feats.relations @ q
    return (rel[feats.rels] + ent[feats.heads] + ent[feats.tails] + feats.dde.sum(axis=1)).astype(
        np.float32
    )


def _build_module(dim: int, dde_dim: int, hidden: int) -> Any:
    import torch
    from torch import nn

    class TripleMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = nn.Linear(dim, hidden)
            self.h = nn.Linear(dim, hidden, bias=False)
            self.r = nn.Linear(dim, hidden, bias=False)
            self.t = nn.Linear(dim, hidden, bias=False)
            self.d = nn.Linear(dde_dim, hidden, bias=False)
            self.out = nn.Sequential(
                nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
            )

        def forward(self, f: dict[str, torch.Tensor]) -> torch.Tensor:
            z = (
                self.q(f["query"])
                + self.h(f["entities"])[f["heads"]]
                + self.r(f["relations"])[f["rels"]]
                + self.t(f["entities"])[f["tails"]]
                + self.d(f["dde"])
            )
            return self.out(z).squeeze(-1)

    return TripleMLP()


def _tensors(feats: Features) -> dict[str, Any]:
    import torch

    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in asdict(feats).items()}


@dataclass
class TripleScorer:
    """The trained MLP with its shape; :meth:`score` gives one logit per subgraph triple."""

    dim: int
    dde_dim: int
    hidden: int
    module: Any = None

    def __post_init__(self) -> None:
        if self.module is None:
            self.module = _build_module(self.dim, self.dde_dim, self.hidden)

    def score(self, feats: Features) -> FloatMatrix:
        import torch

        self.module.eval()
        with torch.inference_mode():
            out = self.module(_tensors(feats))
        return np.asarray(out.numpy(), np.float32)

    def to_bytes(self) -> bytes:
        import torch

        buf = io.BytesIO()
        torch.save(self.module.state_dict(), buf)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, *, dim: int, dde_dim: int, hidden: int) -> TripleScorer:
        import torch

        scorer = cls(dim, dde_dim, hidden)
        state = torch.load(io.BytesIO(data), weights_only=True)
        scorer.module.load_state_dict(state)
        return scorer

    def config(self) -> dict[str, int]:
        return {"dim": self.dim, "dde_dim": self.dde_dim, "hidden": self.hidden}


@dataclass(frozen=True)
class Example:
    """A training question: its features and the positive triples (subgraph-local indexes)."""

    qid: str
    feats: Features
    positives: npt.NDArray[np.int64]


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
    retriever: RetrieverParams,
    params: TrainParams,
    *,
    show_progress: bool = False,
) -> tuple[TripleScorer, TrainReport]:
    """BCE over all triples of each training subgraph (one question per step, Adam); keeps the
    epoch with the best mean validation triple recall@``recall_k``, ties (recall saturates on
    easy sets) broken by the lower validation BCE; without ``val``, the lowest training loss.

    Raises
    ------
    ValueError
        No training example with a positive triple.
    """
    import torch

    train = [e for e in train if e.positives.shape[0]]
    val = [e for e in val if e.positives.shape[0]]
    if not train:
        raise ValueError("no training question has a positive triple in its subgraph")
    torch.manual_seed(params.seed)
    first = train[0].feats
    scorer = TripleScorer(int(first.query.shape[0]), int(first.dde.shape[1]), retriever.hidden)
    opt = torch.optim.Adam(scorer.module.parameters(), lr=params.lr)
    prepared = []
    for e in train:
        labels = torch.zeros(e.feats.heads.shape[0])
        labels[torch.from_numpy(e.positives)] = 1.0
        prepared.append((_tensors(e.feats), labels))
    rng = np.random.default_rng(params.seed)
    best: tuple[tuple[float, float], int, bytes] | None = None
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    for epoch in progress(range(params.epochs), "ReG scorer epochs", enabled=show_progress):
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
