"""Clue-RAG chunk selection (Algorithm 2): which chunks go to the LLM under a token budget.

Each chunk gets a relevance value, how similar it is to the rest of the corpus (similar chunks
are the ones whose sentences are ambiguous out of context, so they profit most from LLM
extraction), and a weight, its token count. The chunks sent to the LLM maximise the total
value under the budget ``ceil(alpha * total tokens)``: a 0-1 knapsack, solved by
:func:`~graphrag_integrations.methods.clue.knapsack.solve_knapsack`.

Values:

- ``"bleu"`` (the paper's default): sentence BLEU of the chunk against all other chunks,
  :func:`~graphrag_integrations.methods.clue.bleu.bleu_against_rest`;
- ``"cosine"`` (the paper's COS variant): mean cosine similarity of the chunk's embedding to
  every other chunk's, ``(e_i . (S - e_i)) / (N - 1)`` with ``S`` the sum of all embeddings,
  ``O(N d)``.

Decisions: a negative mean cosine is given knapsack value 0 (such a chunk is never in an
optimal selection, so the optimum is unchanged, and the solver needs non-negative values);
``alpha = 0`` selects nothing and ``alpha = 1`` everything (zero-token chunks are free, so
any ``alpha > 0`` selects them); the budget product is snapped to
the nearest integer when within 1e-9 of it, so binary rounding (``0.1 * 30 =
3.0000000000000004``) does not add a token.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import normalize_rows
from graphrag_integrations.errors import EmptyCorpusError
from graphrag_integrations.methods.clue.bleu import bleu_against_rest
from graphrag_integrations.methods.clue.knapsack import solve_knapsack

__all__ = ["SelectionResult", "mean_cosine_to_rest", "select_chunks", "token_budget"]

logger = logging.getLogger(__name__)

ValueKind = Literal["bleu", "cosine"]


@dataclass(frozen=True)
class SelectionResult:
    """The chunks chosen for LLM extraction.

    Parameters
    ----------
    selected : list of int
        Indices of the selected chunks, ascending.
    budget : int
        Token budget ``ceil(alpha * total_tokens)``.
    total_tokens : int
        Sum of all chunks' token counts.
    selected_tokens : int
        Tokens of the selected chunks (``<= budget``).
    values : list of float
        Each chunk's relevance value (BLEU in 0-100, or mean cosine in [-1, 1]).
    value_kind : str
        ``"bleu"`` or ``"cosine"``.
    upper_bound : float
        Proven upper bound on the best achievable total value (see
        :class:`~graphrag_integrations.methods.clue.knapsack.KnapsackSolution`).
    method : str
        Knapsack path that produced the selection.

    Examples
    --------
    >>> res = select_chunks(["a b c", "a b d", "x y z"], [3, 3, 3], 0.34)
    >>> res.budget, res.selected
    (4, [0])
    """

    selected: list[int]
    budget: int
    total_tokens: int
    selected_tokens: int
    values: list[float]
    value_kind: str = "bleu"
    upper_bound: float = 0.0
    method: str = "all"

    @property
    def selected_value(self) -> float:
        """Total knapsack value of the selection (negative values count as 0)."""
        return float(sum(max(self.values[i], 0.0) for i in self.selected))


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)):
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
    if not 0.0 <= float(alpha) <= 1.0:  # also rejects NaN
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    return float(alpha)


def token_budget(alpha: float, total_tokens: int) -> int:
    """``ceil(alpha * total_tokens)``, robust to binary rounding of ``alpha``.

    Parameters
    ----------
    alpha : float
        Share of the corpus tokens, in ``[0, 1]``.
    total_tokens : int
        Corpus size in tokens.

    Raises
    ------
    ValueError
        If ``alpha`` is not a number in ``[0, 1]``.

    Examples
    --------
    >>> token_budget(0.1, 30), token_budget(0.5, 7), token_budget(1.0, 7)
    (3, 4, 7)
    """
    product = _check_alpha(alpha) * total_tokens
    nearest = round(product)
    if abs(product - nearest) <= 1e-9 * max(1.0, product):
        return int(nearest)
    return math.ceil(product)


def mean_cosine_to_rest(embeddings: npt.ArrayLike) -> list[float]:
    """Mean cosine similarity of each row to every other row, ``O(N d)``.

    Rows are L2-normalised first (zero rows stay zero and score 0). A single row has no
    others: its score is 0.

    Examples
    --------
    >>> [round(x, 3) for x in mean_cosine_to_rest([[1, 0], [1, 0], [0, 1]])]
    [0.5, 0.5, 0.0]
    """
    matrix = normalize_rows(embeddings).astype(np.float64)
    n_rows = matrix.shape[0]
    if n_rows < 2:
        return [0.0] * n_rows
    total = matrix.sum(axis=0)
    self_sim = np.einsum("ij,ij->i", matrix, matrix)
    scores = (matrix @ total - self_sim) / (n_rows - 1)
    return [float(x) for x in scores]


def _embedding_matrix(embeddings: Any, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    if hasattr(embeddings, "embed") and callable(embeddings.embed):
        matrix = np.asarray(embeddings.embed(list(texts)), dtype=np.float32)
    else:
        matrix = np.asarray(embeddings, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(texts):
        raise ValueError(
            f"embeddings must have shape (len(texts), d) = ({len(texts)}, d); got {matrix.shape}"
        )
    return matrix


def select_chunks(
    texts: Sequence[str],
    token_counts: Sequence[int],
    alpha: float,
    *,
    value: ValueKind = "bleu",
    embeddings: Any = None,
    core_size: int = 256,
) -> SelectionResult:
    """Select the chunks for LLM extraction (Clue-RAG Algorithm 2).

    Parameters
    ----------
    texts : sequence of str
        The corpus chunks.
    token_counts : sequence of int
        Each chunk's length in tokens (the knapsack weights).
    alpha : float
        Share of the corpus tokens the LLM may read, in ``[0, 1]``.
    value : {"bleu", "cosine"}
        Relevance value of a chunk (see the module docstring).
    embeddings : array of shape (N, d) or Embedder, optional
        Needed for ``value="cosine"``: the chunk embeddings, or an
        :class:`~graphrag_integrations.core.encoders.embeddings.Embedder` to compute them.
    core_size : int
        Core window of the knapsack solver.

    Returns
    -------
    SelectionResult

    Raises
    ------
    EmptyCorpusError
        If ``texts`` is empty.
    ValueError
        If ``alpha`` is outside ``[0, 1]``, the token counts do not match the texts or are
        negative, ``value`` is unknown, or ``value="cosine"`` without (matching) embeddings.

    Examples
    --------
    >>> texts = ["the cat sat on the mat", "the cat sat on a mat", "stock prices fell"]
    >>> select_chunks(texts, [6, 6, 3], 0.5).selected
    [0]
    >>> select_chunks(texts, [6, 6, 3], 1.0).selected
    [0, 1, 2]
    """
    _check_alpha(alpha)
    if len(texts) == 0:
        raise EmptyCorpusError("chunk selection needs at least one chunk")
    if len(token_counts) != len(texts):
        raise ValueError(f"{len(token_counts)} token counts for {len(texts)} texts")
    weights = [int(c) for c in token_counts]
    if any(c < 0 or c != t for c, t in zip(weights, token_counts, strict=True)):
        raise ValueError("token counts must be non-negative integers")
    total_tokens = sum(weights)
    budget = token_budget(alpha, total_tokens)

    if value == "bleu":
        values = bleu_against_rest(texts)
    elif value == "cosine":
        if embeddings is None:
            raise ValueError('value="cosine" needs embeddings (an (N, d) array or an Embedder)')
        values = mean_cosine_to_rest(_embedding_matrix(embeddings, texts))
    else:
        raise ValueError(f'value must be "bleu" or "cosine", got {value!r}')

    if alpha == 0:  # Clue-RAG-0.0: no LLM at all, not even for zero-token chunks
        result = SelectionResult([], 0, total_tokens, 0, values, value, 0.0, "empty")
    else:
        solution = solve_knapsack(
            [max(v, 0.0) for v in values], weights, budget, core_size=core_size
        )
        result = SelectionResult(
            solution.selected,
            budget,
            total_tokens,
            solution.weight,
            values,
            value,
            solution.upper_bound,
            solution.method,
        )
    logger.info(
        "chunk selection (%s, alpha=%s): %d/%d chunks, %d/%d tokens (budget %d)",
        value,
        alpha,
        len(result.selected),
        len(texts),
        result.selected_tokens,
        total_tokens,
        budget,
    )
    return result
