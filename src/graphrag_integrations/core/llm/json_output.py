"""Strict extraction of one JSON value from a free-form LLM reply.

Small and mid-sized models wrap JSON in Markdown fences, put prose before or after it, or
leave a trailing comma. :func:`extract_json` accepts exactly those deviations and nothing
looser (no single quotes, no comments, no unquoted keys): anything else raises
:class:`~graphrag_integrations.errors.LLMOutputError`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from graphrag_integrations.errors import LLMOutputError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_OPENERS = {"{": "}", "[": "]"}


def extract_json(text: str, *, python_literals: bool = False) -> Any:
    """Parse the JSON object or list an LLM reply holds.

    Tried in order, the first success wins:

    1. the contents of each Markdown code fence (```` ```json ```` or bare ```` ``` ````);
    2. the whole reply;
    3. every balanced ``{...}`` / ``[...]`` span in the reply; when several parse, the
       longest (ties: the first) is returned, since the payload is normally the largest
       structure and bracketed prose such as ``[1]`` is short.

    Each candidate is parsed as strict JSON and, failing that, again with trailing commas
    before ``}`` / ``]`` removed (outside strings only).

    Parameters
    ----------
    text : str
        The raw reply.
    python_literals : bool
        Also accept Python literal syntax (single-quoted strings) for a candidate that is not
        JSON, via :func:`ast.literal_eval` (never ``eval``). Off by default.

    Returns
    -------
    Any
        The parsed value (a ``dict`` or ``list``; a bare scalar only when it is the whole reply).

    Raises
    ------
    LLMOutputError
        When no candidate parses.

    Examples
    --------
    >>> extract_json('Sure! Here it is:\\n```json\\n{"a": [1, 2,],}\\n```')
    {'a': [1, 2]}
    >>> extract_json('The triples are [["Paris", "capital of", "France"]]. Done.')
    [['Paris', 'capital of', 'France']]
    """
    if not isinstance(text, str):
        raise LLMOutputError(f"expected the reply text, got {type(text).__name__}")
    for match in _FENCE.finditer(text):
        ok, value = _parse(match.group(2).strip(), python_literals)
        if ok:
            return value
    ok, value = _parse(text.strip(), python_literals)
    if ok:
        return value
    ok, value = _best_span(text, python_literals)
    if ok:
        return value
    preview = text.strip().replace("\n", " ")[:200]
    raise LLMOutputError(f"no JSON object or list found in the reply: {preview!r}")


def strip_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` (ignoring those inside strings).

    Examples
    --------
    >>> strip_trailing_commas('{"a": "x,]", "b": [1, 2, ],}')
    '{"a": "x,]", "b": [1, 2 ]}'
    """
    out: list[str] = []
    n = len(text)
    for i, ch, quoted in _scan(text):
        if ch == "," and not quoted:
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                continue
        out.append(ch)
    return "".join(out)


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, bool]]:
    """``(index, character, quoted)`` for ``text[start:]``; ``quoted``: the character belongs
    to a JSON string, its quotes included (backslash escapes honoured)."""
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            yield i, ch, True
        else:
            in_string = ch == '"'
            yield i, ch, in_string


def _parse(candidate: str, python_literals: bool = False) -> tuple[bool, Any]:
    if not candidate:
        return False, None
    for attempt in (candidate, strip_trailing_commas(candidate)):
        try:
            return True, json.loads(attempt)
        except ValueError:
            continue
    if python_literals and candidate[0] in _OPENERS:
        try:
            return True, ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return False, None


def _balanced_end(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (string-aware), or -1."""
    stack = [_OPENERS[text[start]]]
    for i, ch, quoted in _scan(text, start + 1):
        if quoted:
            continue
        if ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif ch in "}]":
            if ch != stack.pop():
                return -1
            if not stack:
                return i
    return -1


def _best_span(text: str, python_literals: bool = False) -> tuple[bool, Any]:
    best: tuple[int, Any] | None = None
    covered_until = -1
    for start, ch in enumerate(text):
        if ch not in _OPENERS or start <= covered_until:
            continue
        end = _balanced_end(text, start)
        if end < 0:
            continue
        ok, value = _parse(text[start : end + 1], python_literals)
        if not ok:
            continue
        covered_until = end
        length = end + 1 - start
        if best is None or length > best[0]:
            best = (length, value)
    if best is None:
        return False, None
    return True, best[1]
