"""Generated query-answer pairs per chunk, reusable without any LLM (:class:`QuerySet`).

A query set is an index build artefact: the parsed pairs of every chunk (before filtering),
keyed by :func:`chunk_key` of the chunk text, with the generator model, the prompt hash and
``M``; saved as gzip-compressed JSON lines. ``QueryCentricGraphIndex(query_set=...)`` reuses
it chunk by chunk, and a persisted QCG index folder holds one (:data:`QUERY_SET_FILE`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.qcg.prompts import QAPair

__all__ = ["QUERY_SET_FILE", "QuerySet", "chunk_key"]


def chunk_key(text: str) -> str:
    """The key of a chunk in a :class:`QuerySet`: SHA-256 of its text (first 24 hex digits).

    Examples
    --------
    >>> chunk_key("a") == chunk_key("a") != chunk_key("b")
    True
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


#: The query set a persisted index folder holds (:meth:`QuerySet.load` accepts the folder).
QUERY_SET_FILE = "query_set.jsonl.gz"


@dataclass
class QuerySet:
    """Generated pairs per chunk text, reusable without the LLM (an index build artefact).

    Parameters
    ----------
    pairs : dict of str to list of QAPair
        :func:`chunk_key` of the chunk text -> its pairs (before filtering).
    model : str
        Generator model.
    prompt_hash : str
        :func:`prompt_hash` of the template used.
    M : int
        Pairs asked per chunk.
    extra : dict
        Free-form provenance (``alpha``, corpus, date...).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> qs = QuerySet({chunk_key("Paris is in France."): [QAPair("Where is Paris?", "France")]},
    ...               model="toy", prompt_hash="0" * 16, M=1)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qs.jsonl.gz"
    >>> qs.save(path)
    >>> QuerySet.load(path).get("Paris is in France.")
    [QAPair(query='Where is Paris?', answer='France')]
    """

    pairs: dict[str, list[QAPair]]
    model: str
    prompt_hash: str
    M: int
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pairs)

    def get(self, chunk_text: str) -> list[QAPair] | None:
        """The pairs of a chunk text, or ``None`` when the set has none for it."""
        return self.pairs.get(chunk_key(chunk_text))

    def update(self, items: Iterable[tuple[str, Sequence[QAPair]]]) -> None:
        """Add ``(chunk text, pairs)`` items."""
        for text, pairs in items:
            self.pairs[chunk_key(text)] = list(pairs)

    def header(self) -> dict[str, Any]:
        """First line of the saved file."""
        return {
            "format": "qcg-query-set",
            "version": 1,
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "M": self.M,
            "chunks": len(self.pairs),
            "extra": self.extra,
        }

    def save(self, path: str | Path) -> None:
        """Write gzip-compressed JSON lines: a header, then one ``{"key", "pairs"}`` per chunk."""
        from graphrag_integrations.core.persistence import atomic_write_bytes

        lines = [json.dumps(self.header(), ensure_ascii=False)]
        for key in sorted(self.pairs):
            pairs = [[p.query, p.answer] for p in self.pairs[key]]
            lines.append(json.dumps({"key": key, "pairs": pairs}, ensure_ascii=False))
        data = ("\n".join(lines) + "\n").encode("utf-8")
        atomic_write_bytes(path, gzip.compress(data, mtime=0))

    @classmethod
    def load(cls, path: str | Path) -> QuerySet:
        """Read a file written by :meth:`save`, or the one a persisted QCG index folder holds
        (``query_set.jsonl.gz``).

        Raises
        ------
        IndexMismatchError
            If the file is not a query set (or the folder holds none).
        """
        if Path(path).is_dir():
            path = Path(path) / QUERY_SET_FILE
        try:
            lines = gzip.decompress(Path(path).read_bytes()).decode("utf-8").splitlines()
            header = json.loads(lines[0])
            if header.get("format") != "qcg-query-set":
                raise ValueError("not a qcg-query-set header")
            pairs = {}
            for line in lines[1:]:
                if line.strip():
                    row = json.loads(line)
                    pairs[str(row["key"])] = [QAPair(str(q), str(a)) for q, a in row["pairs"]]
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise IndexMismatchError(f"{path} is not a QCG query set: {exc}") from exc
        return cls(
            pairs,
            model=str(header["model"]),
            prompt_hash=str(header["prompt_hash"]),
            M=int(header["M"]),
            extra=dict(header.get("extra") or {}),
        )
