"""Constrained decoding: which token ids may come next.

* :class:`TokenTrie` - prefix constraint (the generated ids must be a prefix of an entry).
* :class:`SubstringIndex` - substring constraint (the generated ids must occur inside an
  entry), backed by an integer-alphabet FM-index or a suffix trie.
* :class:`ConstrainedLogitsProcessor` - a ``transformers.LogitsProcessor`` that applies any
  such ``allowed_fn`` during generation (imported on first access: it needs torch).

Examples
--------
>>> from graphrag_integrations.core.constraints import TokenTrie
>>> TokenTrie([[5, 6]], eos_token_id=0).allowed([5]).tolist()
[6]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphrag_integrations._lazy import resolve_lazy
from graphrag_integrations.core.constraints.substring import SubstringIndex
from graphrag_integrations.core.constraints.trie import TokenIds, TokenTrie, TrieStats

if TYPE_CHECKING:
    from graphrag_integrations.core.constraints.logits import (
        AllowedFn,
        ConstrainedLogitsProcessor,
        DeadBeam,
        Verdict,
    )

_LAZY = {
    "AllowedFn": "graphrag_integrations.core.constraints.logits",
    "ConstrainedLogitsProcessor": "graphrag_integrations.core.constraints.logits",
    "DeadBeam": "graphrag_integrations.core.constraints.logits",
    "Verdict": "graphrag_integrations.core.constraints.logits",
}

__all__ = [
    "AllowedFn",
    "ConstrainedLogitsProcessor",
    "DeadBeam",
    "SubstringIndex",
    "TokenIds",
    "TokenTrie",
    "TrieStats",
    "Verdict",
]


def __getattr__(name: str) -> Any:
    return resolve_lazy(globals(), _LAZY, name)
