"""Dense + lexical score fusion, shared by the ``hybrid`` baseline and the methods.

:class:`ScoreFusion` holds the fusion settings of
:class:`~graphrag_integrations.baselines.hybrid.HybridRetriever` and does the arithmetic on
two score vectors over one corpus (``dense``: cosines, ``sparse``: BM25 scores, same rows):

* :meth:`ScoreFusion.candidates` - the union of each side's top ``k * candidate_factor``;
* :meth:`ScoreFusion.fuse` - the fused score of any rows, with the normalisation fitted on
  the candidates: ``"minmax"`` maps each side linearly so the candidates span ``[0, 1]`` (a
  constant side maps to 0) and fuses ``weight * dense + (1 - weight) * sparse``; ``"rrf"``
  is reciprocal rank fusion on each side's full ranking,
  ``weight / (rrf_k + rank_dense) + (1 - weight) / (rrf_k + rank_sparse)``;
* :meth:`ScoreFusion.on_dense_scale` - the fused order expressed on the dense scale (for a
  method that mixes the fused score with other cosines, e.g. QCG's ``chunk_similarity``).

Rows outside the candidates get the same affine (or rank) formula, so their fused score is
consistent with the candidates' and may fall outside ``[0, 1]``.

Examples
--------
>>> dense = np.array([0.9, 0.1, 0.5], dtype=np.float32)
>>> sparse = np.array([0.0, 3.0, 1.0], dtype=np.float32)
>>> fusion = ScoreFusion()
>>> cands = fusion.candidates(dense, sparse, 1, candidate_factor=1)
>>> cands, fusion.fuse(dense, sparse, cands).tolist()
([0, 1], [0.5, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import masked_top_k
from graphrag_integrations.core.retrieval.ranking import top_k

__all__ = ["FUSIONS", "Fusion", "ScoreFusion", "minmax", "ranks"]

Fusion = Literal["minmax", "rrf"]
FUSIONS: tuple[str, ...] = ("minmax", "rrf")


def minmax(values: FloatMatrix) -> FloatMatrix:
    """Map ``values`` linearly onto ``[0, 1]``; a constant (or empty) array maps to zeros.

    Examples
    --------
    >>> minmax(np.array([2.0, 4.0, 3.0], dtype=np.float32)).tolist()
    [0.0, 1.0, 0.5]
    """
    return _fitted_minmax(values, values)


def _fitted_minmax(fit: FloatMatrix, values: FloatMatrix) -> FloatMatrix:
    """``values`` under the linear map taking ``fit``'s range onto ``[0, 1]`` (zeros if the
    range is empty or a point)."""
    if fit.size == 0 or values.size == 0:
        return np.zeros(values.shape, dtype=np.float32)
    lo, hi = float(fit.min()), float(fit.max())
    if hi - lo <= 0.0:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - lo) / (hi - lo)).astype(np.float32)


def ranks(scores: FloatMatrix) -> FloatMatrix:
    """1-based rank of every entry in descending score order (ties: lower index first).

    Examples
    --------
    >>> ranks(np.array([0.2, 0.9, 0.2], dtype=np.float32)).tolist()
    [2.0, 1.0, 3.0]
    """
    order = sorted(range(scores.shape[0]), key=lambda i: (-float(scores[i]), i))
    out = np.empty(scores.shape[0], dtype=np.float32)
    out[order] = np.arange(1, scores.shape[0] + 1, dtype=np.float32)
    return out


@dataclass(frozen=True)
class ScoreFusion:
    """Settings and arithmetic of dense + lexical fusion (see the module docstring).

    Parameters
    ----------
    weight : float
        Weight of the dense side in ``[0, 1]`` (the lexical side gets ``1 - weight``).
    fusion : {"minmax", "rrf"}
        How the two sides are fused.
    candidate_factor : int
        Each side contributes its top ``k * candidate_factor`` rows to the candidates.
    rrf_k : int
        Rank offset of reciprocal rank fusion.

    Raises
    ------
    ValueError
        On a weight outside ``[0, 1]``, an unknown fusion or a non-positive factor.
    """

    weight: float = 0.5
    fusion: Fusion = "minmax"
    candidate_factor: int = 4
    rrf_k: int = 60

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"weight must be in [0, 1], got {self.weight}")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}, got {self.fusion!r}")
        if self.candidate_factor < 1:
            raise ValueError(f"candidate_factor must be >= 1, got {self.candidate_factor}")

    @staticmethod
    def restrict(
        dense: FloatMatrix, sparse: FloatMatrix, mask: npt.NDArray[np.bool_]
    ) -> tuple[FloatMatrix, FloatMatrix]:
        """Both sides with the rows outside ``mask`` at ``-inf`` (a filtered query: they rank
        below every allowed row, so the RRF ranks are those among the allowed rows).

        Examples
        --------
        >>> d, s = ScoreFusion.restrict(np.array([0.9, 0.1]), np.array([1.0, 2.0]),
        ...                             np.array([False, True]))
        >>> d.tolist(), s.tolist()
        ([-inf, 0.10000000149011612], [-inf, 2.0])
        """
        return (
            np.where(mask, dense, -np.inf).astype(np.float32),
            np.where(mask, sparse, -np.inf).astype(np.float32),
        )

    def candidates(
        self,
        dense: FloatMatrix,
        sparse: FloatMatrix,
        k: int,
        mask: npt.NDArray[np.bool_] | None = None,
        *,
        candidate_factor: int | None = None,
    ) -> list[int]:
        """Rows (ascending) in either side's top ``k * candidate_factor`` (among ``mask``).

        ``candidate_factor`` overrides the instance's for this call.
        """
        n = k * (self.candidate_factor if candidate_factor is None else candidate_factor)
        if mask is None:
            return sorted(set(top_k(dense, n)) | set(top_k(sparse, n)))
        return sorted(set(masked_top_k(dense, mask, n)) | set(masked_top_k(sparse, mask, n)))

    def fuse(
        self,
        dense: FloatMatrix,
        sparse: FloatMatrix,
        candidates: Sequence[int],
        rows: Sequence[int] | None = None,
    ) -> FloatMatrix:
        """Fused scores of ``rows`` (default: the candidates), normalised on the candidates.

        With ``"rrf"`` the ranks are those of each side's full vector (mask a filtered-out
        row with ``-inf`` beforehand so it ranks below every other).
        """
        fit = np.asarray(candidates, dtype=np.int64)
        idx = fit if rows is None else np.asarray(rows, dtype=np.int64)
        if self.fusion == "minmax":
            fused = self.weight * _fitted_minmax(dense[fit], dense[idx]) + (
                1.0 - self.weight
            ) * _fitted_minmax(sparse[fit], sparse[idx])
        else:
            fused = self.weight / (self.rrf_k + ranks(dense)[idx]) + (1.0 - self.weight) / (
                self.rrf_k + ranks(sparse)[idx]
            )
        return np.asarray(fused, dtype=np.float32)

    def on_dense_scale(
        self,
        dense: FloatMatrix,
        sparse: FloatMatrix,
        candidates: Sequence[int],
        rows: Sequence[int],
    ) -> FloatMatrix:
        """Fused scores of ``rows`` mapped linearly onto the candidates' dense range.

        The best fused candidate gets the highest dense score among the candidates, the worst
        one the lowest, and every row keeps its fused order; so the result ranks like the
        fusion and reads like a cosine (what a method mixing it with other cosines needs).
        A constant fused score over the candidates maps every row to their lowest dense score.

        Examples
        --------
        >>> dense = np.array([0.9, 0.1, 0.5], dtype=np.float32)
        >>> sparse = np.array([0.0, 3.0, 1.0], dtype=np.float32)
        >>> ScoreFusion(weight=0.2).on_dense_scale(dense, sparse, [0, 1, 2], [0, 1, 2]).round(3)
        array([0.1  , 0.9  , 0.322], dtype=float32)
        """
        fit = np.asarray(candidates, dtype=np.int64)
        fused_fit = self.fuse(dense, sparse, candidates)
        fused = self.fuse(dense, sparse, candidates, rows)
        if fit.size == 0:
            return np.asarray(dense[np.asarray(rows, dtype=np.int64)], dtype=np.float32)
        lo, hi = float(dense[fit].min()), float(dense[fit].max())
        unit = _fitted_minmax(fused_fit, fused)
        return np.asarray(lo + unit * (hi - lo), dtype=np.float32)
