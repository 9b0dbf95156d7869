"""Clue-traced passage retrieval (paper §3.4, Algorithm 1 step 4) and multi-step rounds.

* **tracing** - each clue points to the hyperedges of its entity (in its direction) whose
  tokenised hyperrelation contains the relation span; a hyperedge is a sentence, and the
  sentence's passage is a candidate (:func:`trace_clues`);
* **ranking** - candidates are ranked by cosine between the query and the passage embedding
  (all-MiniLM-L6-v2 by default) and the top ``k`` kept; fewer are returned when fewer were
  traced (the paper's "Ctx"), unless the product top-up is on, which fills up with the
  nearest passages of the whole corpus and flags them (``"source": "top_up"``);
* **multi-step** - an optional LLM reads the question, the evidence so far and the queries
  used, and answers with prompt 3 of appendix M; the text after "So the next search query
  is" starts another round, ``"None"`` (or the step limit) ends it
  (:func:`parse_next_query`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from graphrag_integrations.methods.kgt.params import DECOMPOSITION_PROMPT
from graphrag_integrations.methods.kgt.store import ParseKGView, read_many
from graphrag_integrations.methods.kgt.translation import Clue

_NEXT_QUERY = re.compile(r"so the next search query is\s*[:\-]?\s*(.+)", re.IGNORECASE | re.DOTALL)


def trace_clues(clues: Iterable[Clue], view: ParseKGView) -> dict[str, list[dict[str, Any]]]:
    """Passage id -> the clues that reach it (each with the hyperedge and its sentence).

    Passages are listed in order of first reach.
    """
    traced: dict[str, list[dict[str, Any]]] = {}
    clues = list(clues)
    rels = read_many(view.rels, [r for clue in clues for r in clue.hyperedges])
    for clue in clues:
        for rel_id in clue.hyperedges:
            rel = rels[rel_id]
            traced.setdefault(rel.passage_id, []).append(
                {**clue.to_dict(), "hyperedge": rel_id, "sentence": rel.sentence}
            )
    return traced


def decomposition_prompt(question: str, evidence: Sequence[str], used: Sequence[str]) -> str:
    """Prompt 3 of appendix M with the question, the evidence so far and the queries used.

    Examples
    --------
    >>> p = decomposition_prompt("Q?", ["E1"], ["Q?"])
    >>> p.splitlines()[-1]
    'Used queries: Q?'
    """
    lines = [DECOMPOSITION_PROMPT, f"Question: {question}", "Evidence:"]
    lines += [f"{i}. {text}" for i, text in enumerate(evidence, 1)] or ["(none)"]
    lines.append("Used queries: " + " | ".join(used))
    return "\n".join(lines)


def parse_next_query(reply: str) -> str | None:
    """The next search query of a prompt-3 reply; ``None`` for "None" or no query.

    Examples
    --------
    >>> parse_next_query("Evidence lacks X. So the next search query is: Who founded X?")
    'Who founded X?'
    >>> parse_next_query('... So the next search query is "None".') is None
    True
    >>> parse_next_query("I do not know") is None
    True
    """
    match = _NEXT_QUERY.search(reply)
    if match is None:
        return None
    text = match.group(1).strip().splitlines()[0].strip()
    text = text.strip(" \"'`\u201c\u201d*")
    if not text or text.rstrip(".").strip(" \"'\u201c\u201d").lower() == "none":
        return None
    return text
