"""On-disk LLM response cache (one SQLite file), so re-indexing never pays twice.

Keys are ``sha256`` digests of the model name, the prompt and the generation parameters
(:func:`cache_key`). The file is safe to share between the threads of one process (one
connection behind a lock) and between processes (SQLite file locking, WAL journal).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.protocol import LLMResult

#: File name of the cache database inside ``cache_dir``.
CACHE_FILE = "llm_cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model_name TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    model_name TEXT NOT NULL,
    payload TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def cache_key(model_name: str, prompt: str, params: Mapping[str, Any]) -> str:
    """``sha256`` hex digest identifying one request.

    Examples
    --------
    >>> a = cache_key("m", "hi", {"temperature": 0.0, "max_tokens": None})
    >>> a == cache_key("m", "hi", {"max_tokens": None, "temperature": 0.0})
    True
    >>> a == cache_key("other", "hi", {"temperature": 0.0, "max_tokens": None})
    False
    """
    payload = json.dumps(
        {"model": model_name, "prompt": prompt, "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """A persistent ``key -> LLMResult`` map in ``cache_dir/llm_cache.sqlite``.

    Completions are stored one :class:`LLMResult` per key (:meth:`get` / :meth:`put`); other
    requests (several generated hypotheses, continuation scores) as one JSON value per key in
    a second table (:meth:`get_record` / :meth:`put_record`).

    Parameters
    ----------
    cache_dir : str or Path
        Created if missing.

    Examples
    --------
    >>> import tempfile
    >>> cache = ResponseCache(tempfile.mkdtemp())
    >>> cache.put("k", "m", LLMResult("hello", 3, 1))
    >>> cache.get("k") == LLMResult("hello", 3, 1)
    True
    >>> len(cache)
    1
    >>> cache.put_record("r", "m", [0.5, -1.25])
    >>> cache.get_record("r")
    [0.5, -1.25]
    """

    def __init__(self, cache_dir: str | Path) -> None:
        self.path = Path(cache_dir).expanduser() / CACHE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=60.0, check_same_thread=False, isolation_level=None
        )
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)

    def get(self, key: str) -> LLMResult | None:
        """The stored result for ``key``, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, prompt_tokens, completion_tokens, estimated "
                "FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return LLMResult(str(row[0]), int(row[1]), int(row[2]), bool(row[3]))

    def put(self, key: str, model_name: str, result: LLMResult) -> None:
        """Store ``result`` under ``key`` (replacing any previous entry)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model_name,
                    result.text,
                    result.prompt_tokens,
                    result.completion_tokens,
                    int(result.estimated),
                    time.time(),
                ),
            )

    def get_record(self, key: str) -> Any | None:
        """The JSON value stored with :meth:`put_record` under ``key``, or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT payload FROM records WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_record(self, key: str, model_name: str, value: Any) -> None:
        """Store a JSON-serialisable ``value`` under ``key`` (replacing any previous one)."""
        payload = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)",
                (key, model_name, payload, time.time()),
            )

    def clear(self) -> None:
        """Delete every entry."""
        with self._lock:
            self._conn.execute("DELETE FROM responses")
            self._conn.execute("DELETE FROM records")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM responses) + (SELECT COUNT(*) FROM records)"
            ).fetchone()
        return int(row[0])
