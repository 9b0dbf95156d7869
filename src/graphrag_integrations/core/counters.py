"""Counters that many threads update: :class:`Counters`, the base of such a dataclass.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass
... class Hits(Counters):
...     hits: int = 0
>>> h = Hits()
>>> with h._lock:
...     h.hits += 2
>>> h.as_dict(), h.reset(), h.as_dict()
({'hits': 2}, None, {'hits': 0})
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["Counters"]


@dataclass
class Counters:
    """Base of a dataclass whose fields (those of its ``__init__``) are counters that threads
    update under :attr:`_lock` (``with self._lock: ...``); :meth:`as_dict` and :meth:`reset`
    take the lock too."""

    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def as_dict(self) -> dict[str, Any]:
        """The counters by name (one consistent reading), JSON-ready."""
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def reset(self) -> None:
        """Set every counter back to its default (zero)."""
        with self._lock:
            for f in fields(self):
                if f.init:
                    setattr(self, f.name, f.default)
