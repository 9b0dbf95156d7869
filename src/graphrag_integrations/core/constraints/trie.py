"""Prefix trie over token-id sequences, stored in a ``marisa_trie.BytesTrie``.

The entity constraint of KG-Translator (paper eq. 5): while the LM spells an entity name,
the next token must extend the generated prefix towards some entity. marisa-trie has no
"children of a node" call, so :class:`TokenTrie` precomputes, for every prefix of every
entry, the sorted ids that may follow it, and stores that table in a ``BytesTrie``:

* key   = ``"t"`` + the prefix encoded one code point per token id (see :func:`encode_ids`);
  UTF-8 makes this a variable-length integer code that keeps id order, and slicing the
  encoded string slices the prefix;
* value = the allowed next ids packed as little-endian ``uint32``.

Every entry is closed by ``eos_token_id``: it is allowed exactly where a whole entry ends, so
a match can never run on past an entry, and a prefix that leads nowhere gets an EMPTY
allowed set (the beam is dead), never "all tokens".
"""

from __future__ import annotations

import json
import logging
import os
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

logger = logging.getLogger(__name__)

TokenIds = npt.NDArray[np.int64]
"""Sorted, distinct token ids (``int64`` so they index torch tensors directly)."""

_SURROGATE_START = 0xD800
_SURROGATE_SPAN = 0x800
MAX_TOKEN_ID = 0x10FFFF - _SURROGATE_SPAN - 1
"""Largest token id :func:`encode_ids` can represent (1,112,062)."""

_TABLE_PREFIX = "t"
_META_KEY = "m"
_FORMAT = "graphrag-integrations/token-trie"
_FORMAT_VERSION = 1
_EMPTY: TokenIds = np.zeros(0, dtype=np.int64)
_EMPTY.setflags(write=False)


def check_token_ids(sequence: Iterable[Any], *, what: str = "sequence") -> tuple[int, ...]:
    """Validate a token-id sequence and return it as a tuple of ``int``.

    Raises
    ------
    TypeError
        If an element is not an integer (``bool`` and floats are refused).
    ValueError
        If an id is negative or above :data:`MAX_TOKEN_ID`.

    Examples
    --------
    >>> check_token_ids([3, 1, 2])
    (3, 1, 2)
    """
    out: list[int] = []
    for value in sequence:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"{what} must hold integer token ids, got {value!r}")
        token = int(value)
        if token < 0 or token > MAX_TOKEN_ID:
            raise ValueError(f"{what} holds token id {token} outside [0, {MAX_TOKEN_ID}]")
        out.append(token)
    return tuple(out)


def encode_ids(ids: Iterable[int]) -> str:
    """Encode token ids as a string, one code point per id, order preserving.

    Id ``i`` becomes code point ``i + 1`` (marisa-trie mishandles NUL in keys), shifted past the
    UTF-16 surrogate block, which UTF-8 cannot encode.

    Examples
    --------
    >>> encode_ids([0, 65])
    '\\x01B'
    >>> decode_ids(encode_ids([5, 60000]))
    (5, 60000)
    """
    try:
        text = "".join(
            [chr(i + 1 if i + 1 < _SURROGATE_START else i + 1 + _SURROGATE_SPAN) for i in ids]
        )
    except (ValueError, OverflowError, TypeError) as exc:
        check_token_ids(ids)  # raises the precise error
        raise ValueError(f"cannot encode token ids {ids!r}: {exc}") from exc
    if "\x00" in text:  # id -1 maps to code point 0
        check_token_ids(ids)
    return text


def decode_ids(text: str) -> tuple[int, ...]:
    """Inverse of :func:`encode_ids`.

    Examples
    --------
    >>> decode_ids(encode_ids([7, 0]))
    (7, 0)
    """
    return tuple(_decode_char(c) for c in text)


def _decode_char(char: str) -> int:
    point = ord(char)
    return point - 1 if point < _SURROGATE_START else point - 1 - _SURROGATE_SPAN


def _pack(ids: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(ids)}I", *ids)


def _unpack(blob: bytes) -> TokenIds:
    return np.frombuffer(blob, dtype="<u4").astype(np.int64)


@dataclass(frozen=True)
class TrieStats:
    """Size figures of a :class:`TokenTrie`.

    Attributes
    ----------
    entries : int
        Distinct sequences stored.
    nodes : int
        Distinct prefixes (trie nodes, the root included) = rows of the next-token table.
    tokens : int
        Total tokens over the distinct entries.
    max_length : int
        Longest entry, in tokens.
    size_bytes : int
        Size of the serialised marisa trie (what :meth:`TokenTrie.save` writes).
    """

    entries: int
    nodes: int
    tokens: int
    max_length: int
    size_bytes: int


class TokenTrie:
    """Allowed-next-token table for a set of token-id sequences (prefix constraint).

    Parameters
    ----------
    sequences : iterable of sequences of int
        The entries, e.g. tokenised entity names exactly as they appear after the prompt
        (leading space / separator included). Duplicates are merged.
    eos_token_id : int
        Terminator: allowed right after a complete entry, never inside one.
    allow_empty_entries : bool
        If ``False`` (default) an empty entry raises ``ValueError`` (it would let the LM stop
        before generating anything); ``True`` stores it (``eos`` allowed at the root).

    Raises
    ------
    ValueError
        On an entry holding ``eos_token_id``, a negative or too large id, or (by default) an
        empty entry.

    Notes
    -----
    A trie built from no sequences is valid: every :meth:`allowed` call returns an empty
    array, i.e. every beam is dead.

    Examples
    --------
    >>> trie = TokenTrie([[5, 6], [5, 7, 8], [9]], eos_token_id=0)
    >>> trie.allowed([]).tolist()
    [5, 9]
    >>> trie.allowed([5]).tolist()
    [6, 7]
    >>> trie.allowed([5, 6]).tolist()
    [0]
    >>> trie.allowed([4]).tolist()
    []
    >>> [5, 7, 8] in trie, [5, 7] in trie
    (True, False)
    """

    def __init__(
        self,
        sequences: Iterable[Sequence[int]],
        *,
        eos_token_id: int,
        allow_empty_entries: bool = False,
    ) -> None:
        (eos,) = check_token_ids([eos_token_id], what="eos_token_id")
        self.eos_token_id = eos
        encoded: set[str] = set()
        for raw in sequences:
            seq = check_token_ids(raw, what="entry")
            if eos in seq:
                raise ValueError(f"entry {seq!r} contains eos_token_id {eos} (the terminator)")
            if not seq and not allow_empty_entries:
                raise ValueError("empty entry (pass allow_empty_entries=True to store it)")
            encoded.add(encode_ids(seq))
        table = _next_token_table(sorted(encoded), eos)
        self._meta: dict[str, Any] = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "eos_token_id": eos,
            "entries": len(encoded),
            "nodes": len(table),
            "tokens": sum(len(s) for s in encoded),
            "max_length": max((len(s) for s in encoded), default=0),
        }
        import marisa_trie

        items = [(_TABLE_PREFIX + key, _pack(ids)) for key, ids in table.items()]
        items.append((_META_KEY, json.dumps(self._meta).encode()))
        self._trie: Any = marisa_trie.BytesTrie(items)

    def allowed(self, prefix: Sequence[int]) -> TokenIds:
        """Token ids that may follow ``prefix``: sorted, ``eos`` where an entry ends.

        An empty result means no entry starts with ``prefix`` (the beam is dead).
        """
        values = self._trie.get(_TABLE_PREFIX + encode_ids(prefix))
        if not values:
            return _EMPTY
        return _unpack(values[0])

    def __call__(self, prefix: Sequence[int]) -> TokenIds:
        """Same as :meth:`allowed`, so the trie is itself an ``allowed_fn``."""
        return self.allowed(prefix)

    def __contains__(self, sequence: object) -> bool:
        """Whether ``sequence`` is a complete entry."""
        if not isinstance(sequence, Sequence) or isinstance(sequence, (str, bytes)):
            return False
        try:
            allowed = self.allowed(check_token_ids(sequence))
        except (TypeError, ValueError):
            return False
        return bool(np.any(allowed == self.eos_token_id))

    def __len__(self) -> int:
        return int(self._meta["entries"])

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        """Yield the entries as tuples of ids, in id order."""
        for key in sorted(self._trie.keys(_TABLE_PREFIX)):
            if self.eos_token_id in self.allowed(decode_ids(key[1:])):
                yield decode_ids(key[1:])

    @property
    def stats(self) -> TrieStats:
        """Entry, node and byte counts (see :class:`TrieStats`)."""
        return TrieStats(
            entries=int(self._meta["entries"]),
            nodes=int(self._meta["nodes"]),
            tokens=int(self._meta["tokens"]),
            max_length=int(self._meta["max_length"]),
            size_bytes=len(self._trie.tobytes()),
        )

    def save(self, path: str | Path) -> None:
        """Write the trie to one file (atomically: temp file, then rename).

        The file is marisa's own format, so :meth:`load` can memory-map it.
        """
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            self._trie.save(str(tmp))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | Path, *, mmap: bool = True) -> TokenTrie:
        """Open a file written by :meth:`save`.

        Parameters
        ----------
        path : str or Path
            The file.
        mmap : bool
            Memory-map the file (default; the OS shares pages between processes and loads
            them lazily) instead of reading it into memory.

        Raises
        ------
        IndexNotFoundError
            If the file does not exist.
        IndexMismatchError
            If it is not a token trie of this format version.
        """
        import marisa_trie

        source = Path(path)
        if not source.is_file():
            raise IndexNotFoundError(f"no token trie file at {source}")
        trie: Any = marisa_trie.BytesTrie()
        try:
            trie = trie.mmap(str(source)) if mmap else trie.load(str(source))
            values = trie.get(_META_KEY)
            meta = json.loads(values[0]) if values else {}
        except Exception as exc:  # marisa raises RuntimeError/ValueError on foreign files
            raise IndexMismatchError(f"{source} is not a token trie file: {exc}") from exc
        if meta.get("format") != _FORMAT or meta.get("version") != _FORMAT_VERSION:
            raise IndexMismatchError(
                f"{source} is not a token trie of format {_FORMAT} v{_FORMAT_VERSION}"
            )
        obj = cls.__new__(cls)
        obj.eos_token_id = int(meta["eos_token_id"])
        obj._meta = meta
        obj._trie = trie
        return obj

    def __repr__(self) -> str:
        return (
            f"TokenTrie(entries={self._meta['entries']}, nodes={self._meta['nodes']}, "
            f"eos_token_id={self.eos_token_id})"
        )


def _next_token_table(encoded: list[str], eos: int) -> dict[str, list[int]]:
    """Map every prefix (encoded) to its sorted next ids; ``encoded`` is sorted and distinct.

    In sorted order a new entry shares its longest common prefix ``lcp`` with the previous
    one, so it adds the child ``s[d]`` to the nodes ``s[:d]`` for ``d >= lcp`` only, then
    ``eos`` under itself. Children arrive in increasing order; ``eos`` is placed by sorting.
    """
    table: dict[str, list[int]] = {}
    previous = ""
    for seq in encoded:
        lcp = _common_prefix_length(previous, seq)
        for depth in range(lcp, len(seq)):
            table.setdefault(seq[:depth], []).append(_decode_char(seq[depth]))
        table.setdefault(seq, []).append(eos)
        previous = seq
    for ids in table.values():
        if len(ids) > 1 and ids[0] == eos:
            ids.sort()
    return table


def _common_prefix_length(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
