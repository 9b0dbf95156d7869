"""Trained ReG scorers as files: ``NAME.pt.gz`` (float16 state dict, gzip) next to
``NAME.json`` (scorer shape and provenance: supervision, hop count, training and validation
question ids, epochs, time).

The MetaQA scorers committed with the package live in :data:`ASSETS`
(``{supervision}-{hops}hop``); ``eval --method reg`` / ``reg-weak`` use them by default.

Examples
--------
>>> import tempfile, pathlib
>>> from graphrag_integrations.methods.reg.scorer import TripleScorer
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> save_scorer(TripleScorer(4, 2, 3), d / "toy", {"supervision": "weak"})
>>> scorer, meta = load_scorer(d / "toy")
>>> scorer.config(), meta["supervision"]
({'dim': 4, 'dde_dim': 2, 'hidden': 3}, 'weak')
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import IndexNotFoundError
from graphrag_integrations.methods.reg.scorer import TripleScorer

__all__ = ["ASSETS", "asset", "load_scorer", "save_scorer"]

#: Folder of the committed MetaQA scorers.
ASSETS = Path(__file__).with_name("assets")


def asset(supervision: str, hops: int) -> Path:
    """Stem of the committed scorer trained with ``supervision`` on ``hops``-hop questions."""
    return ASSETS / f"{supervision}-{hops}hop"


def save_scorer(scorer: TripleScorer, stem: str | Path, meta: Mapping[str, Any]) -> None:
    """Write ``stem.pt.gz`` (float16 weights) and ``stem.json`` (shape + ``meta``)."""
    import torch

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.half() for k, v in scorer.module.state_dict().items()}
    buf = io.BytesIO()
    torch.save(state, buf)
    Path(f"{stem}.pt.gz").write_bytes(gzip.compress(buf.getvalue(), mtime=0))
    Path(f"{stem}.json").write_text(
        json.dumps({"config": scorer.config(), **meta}, indent=1), encoding="utf-8"
    )


def load_scorer(stem: str | Path) -> tuple[TripleScorer, dict[str, Any]]:
    """Read what :func:`save_scorer` wrote: ``(scorer, metadata)``.

    Raises
    ------
    IndexNotFoundError
        If ``stem.pt.gz`` or ``stem.json`` is missing.
    """
    import torch

    weights, meta_file = Path(f"{stem}.pt.gz"), Path(f"{stem}.json")
    for f in (weights, meta_file):
        if not f.is_file():
            raise IndexNotFoundError(f"no trained ReG scorer: {f} does not exist")
    meta: dict[str, Any] = json.loads(meta_file.read_text(encoding="utf-8"))
    state = torch.load(io.BytesIO(gzip.decompress(weights.read_bytes())), weights_only=True)
    scorer = TripleScorer(**meta["config"])
    scorer.module.load_state_dict({k: v.float() for k, v in state.items()})
    return scorer, meta
