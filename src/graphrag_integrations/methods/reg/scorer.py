"""The triple scorer (ReG@Triple, eq. 29; appendix F): DDE + MLP over
``[query, head, relation, tail, DDE]`` (trained by :mod:`.training`).

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
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.methods.reg.params import RegIndexParams
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


def features(view: KGView, sub: Subgraph, query: FloatMatrix, params: RegIndexParams) -> Features:
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


def feature_tensors(feats: Features) -> dict[str, Any]:
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
            out = self.module(feature_tensors(feats))
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
