"""Extended Doc2Query prompts (QCG-RAG §3.3 step 1, prompt C.1) and the tolerant reply parser.

The paper's Doc2Query prompt (appendix C.1; ``20`` replaced by ``M``, and the chunk appended
under ``---Input chunk---``, a place the paper does not print), a short line-format prompt for
very small local models, their repair suffixes, and :func:`parse_qa_pairs`. Replies are parsed
tolerantly, since small local models rarely return clean JSON (measured in ``docs/lab/qcg.md``):

1. the JSON array / object of the reply (code fences, prose around it, trailing commas and
   Python quoting accepted: :func:`~graphrag_integrations.core.llm.extract_json`);
2. failing that, every flat ``{...}`` object of the reply that parses (a reply cut off by the
   token limit keeps its complete pairs);
3. failing that, ``"query": "...", "answer": "..."`` key-value runs without braces;
4. failing that, plain ``Question: ...`` / ``Answer: ...`` lines (also ``Query:``, ``Q:``,
   ``A:``, optionally numbered), read line by line: a key with nothing after it takes the next
   non-blank line, skipping lead-ins such as ``The answer is:``;
5. failing that, a numbered list of questions (``1. Who came?``), which has no answers.

Pairs are whitespace-normalised; pairs with a query without a letter (``"[1]"``), duplicates,
pairs that copy a query of the prompt's own example (small models echo it) and pairs beyond
``M`` are dropped (counted). A question with an empty answer is not a pair (the paper's nodes
are ``q (+) a``): it is kept apart (:attr:`ParsedReply.questions`) and stored after the pairs
as ``QAPair(question, "")``, which an index drops (the paper) or keeps as a query-only node
(``QCGIndexParams.answerless``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.llm.json_output import extract_json
from graphrag_integrations.errors import LLMOutputError

__all__ = [
    "DOC2QUERY_PROMPT",
    "REPAIR_SUFFIX",
    "SMALL_MODEL_PROMPT",
    "SMALL_MODEL_REPAIR_SUFFIX",
    "TEMPLATES",
    "ParsedReply",
    "QAPair",
    "doc2query_prompt",
    "parse_qa_pairs",
    "prompt_hash",
    "resolve_template",
]

#: The paper's Doc2Query prompt (appendix C.1) with ``{M}`` / ``{last}`` for the count and
#: ``{chunk}`` for the chunk text (the paper does not print where the chunk goes).
DOC2QUERY_PROMPT = """\
---Role---
You are a Doc2Query assistant.

---Goal---
Given a text chunk, generate {M} distinct user queries that can be directly answered by \
that chunk.
For each query, also provide an exact answer and a relevance score.

---Generation rules---
1. Answerability - Every query must be answerable using only information in the chunk.
2. Comprehensive coverage - Collectively, the all generated queries should cover all key \
ideas in the chunk from different viewpoints or levels of detail.
3. Diversity requirements - Ensure diversity along the following dimensions:
- Question-style variety - Mix interrogative forms (who/what/why/how/where/when/did), \
imperative prompts ("List...", "Summarize..."), comparative questions, conditional or \
speculative forms, etc.
- Content-perspective variety - Include queries on facts, definitions, methods, reasons, \
outcomes, examples, comparisons, limitations, and so on.
- Information granularity - Combine macro (overall purpose, high-level summary) and micro \
(specific figures, terms, steps) queries.
- User-intent variety - Simulate intents such as confirmation, evaluation, usability, \
diagnosis, and decision-making (e.g., "Is this approach more efficient than ...?").
- Linguistic expression variety - Vary wording, syntax (active <--> passive), and synonyms; \
avoid repeating near-identical phrases.
- No redundancy - Each query must be meaningfully distinct; eliminate trivial rephrases that \
offer no new angle.
- Chunk-grounded specificity - Queries must be grounded in specific factual points from the \
chunk. Avoid vague or generic formulations such as "What did X say?" or "Tell me more about \
Y" that lack anchoring in actual content.
4. Required fields - Each output item must be based on the given chunk and include the \
following fields:
- query - A question or search phrase a user might ask.
- answer - A concise answer taken verbatim (or nearly verbatim) from the chunk.

---Example---
1. Input Chunk
- Alice met with Bob at the Central Cafe on Tuesday to discuss their upcoming collaborative \
research project. During the meeting, Bob suggested incorporating advanced AI methodologies \
into their experimental design, which Alice enthusiastically supported. They agreed to \
present their initial findings at the International AI Conference next March.
2. Generated Queries
- Where did Alice and Bob meet?
- When did the meeting take place?
- What was the main topic discussed during the meeting?
- Who suggested incorporating advanced AI methodologies?
- Did Alice support Bob's suggestion about AI methodologies?
- When will Alice and Bob present their initial findings?
- At which conference will their findings be presented?
- What kind of methodologies were discussed?
- What is the nature of Alice and Bob's project?
- Who participated in the meeting at Central Cafe?

---Output format---
Return only the following JSON array; do not include any additional text. Include an \
'index' field for each query.
[
{ "index": 0, "query": "", "answer": "" },
{ "index": 1, "query": "", "answer": "" },
...
{ "index": {last}, "query": "", "answer": "" }
]

---Input chunk---
{chunk}
"""

#: A short line-format prompt for very small local models (a deviation; measured in
#: ``docs/lab/qcg.md``: SmolLM2-135M returns no usable pair for the paper's prompt). Replies are
#: read by step 4 of the parser (``Question:`` / ``Answer:`` lines).
SMALL_MODEL_PROMPT = """\
Read the text and write {M} different questions that the text answers. After each question \
write its short answer copied from the text. Use exactly this format:
Question: ...
Answer: ...

Text:
{chunk}
"""

#: Appended to the prompt for the one retry of a reply that gave no pair.
REPAIR_SUFFIX = (
    "\nYour previous reply could not be read. Reply with the JSON array only, "
    'each item like { "index": 0, "query": "...", "answer": "..." }.\n'
)

#: The retry instruction for :data:`SMALL_MODEL_PROMPT` (line format, not JSON).
SMALL_MODEL_REPAIR_SUFFIX = (
    "\nWrite each question on a line starting with 'Question:' and its answer on the next "
    "line starting with 'Answer:'.\n"
)

#: Queries of the prompt's example: a pair repeating one is an echo, not a generated query.
EXAMPLE_QUERIES = frozenset(
    " ".join(line[2:].split()).lower()
    for line in DOC2QUERY_PROMPT.split("2. Generated Queries\n", 1)[1]
    .split("\n\n", 1)[0]
    .splitlines()
    if line.startswith("- ")
)

_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")
_KEY_VALUE = re.compile(
    r"""["']?(query|question|answer)["']?\s*:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""",
    re.IGNORECASE,
)
_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]*)?(?:\d+[.)][ \t]*)?(query|question|q|answer|a)"
    r"[ \t]*[:\-][ \t]*(.*?)[ \t]*$",
    re.IGNORECASE,
)
_ENUMERATION = re.compile(r"^\s*\d+[.)]\s+")
#: A numbered question without a key (``"2. Who came?"``): an answerless question.
_NUMBERED_QUESTION = re.compile(r"^[ \t]*\d+[.)][ \t]+(.*\?)[ \t]*$")
#: Lead-ins small models put before the real answer (``"The answer is:"``): skipped.
_FILLER = re.compile(
    r"^(?:the |my |here is the |here's the )?answer(?: to this question)?"
    r"(?: is)?\s*:?$|^.{0,40}:$",
    re.IGNORECASE,
)
_QUERY_KEYS = ("query", "question", "q")
_ANSWER_KEYS = ("answer", "a", "ans")


#: Named Doc2Query templates (``QueryCentricGraphIndex(template="small")``).
TEMPLATES: dict[str, str] = {"paper": DOC2QUERY_PROMPT, "small": SMALL_MODEL_PROMPT}


def resolve_template(template: str) -> str:
    """A template by name (``"paper"``, ``"small"``) or a template text with ``{chunk}``.

    Examples
    --------
    >>> resolve_template("small") == SMALL_MODEL_PROMPT
    True
    >>> resolve_template("Questions about: {chunk}")
    'Questions about: {chunk}'
    """
    text = TEMPLATES.get(template, template)
    if "{chunk}" not in text:
        raise ValueError(
            f"Doc2Query template must be one of {sorted(TEMPLATES)} or contain {{chunk}}, "
            f"got {template[:60]!r}"
        )
    return text


def prompt_hash(template: str = DOC2QUERY_PROMPT) -> str:
    """First 16 hex digits of the template's SHA-256 (recorded in manifests and query sets).

    Examples
    --------
    >>> len(prompt_hash())
    16
    """
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:16]


def doc2query_prompt(chunk: str, M: int = 20, template: str = DOC2QUERY_PROMPT) -> str:
    """Fill the Doc2Query prompt for one chunk.

    Examples
    --------
    >>> p = doc2query_prompt("Paris is in France.", M=5)
    >>> "generate 5 distinct user queries" in p, p.rstrip().endswith("Paris is in France.")
    (True, True)
    """
    return template.replace("{M}", str(M)).replace("{last}", str(M - 1)).replace("{chunk}", chunk)


@dataclass(frozen=True)
class QAPair:
    """One generated query and its answer.

    Examples
    --------
    >>> QAPair("Where is Paris?", "France").text("query+answer")
    'Where is Paris? France'
    """

    query: str
    answer: str

    def text(self, node_text: str = "query+answer") -> str:
        """``q (+) a`` (text-level concatenation, one space), or the query or the answer.

        An answerless question (``answer == ""``) is its query in every mode.

        >>> QAPair("Who came?", "").text("answer")
        'Who came?'
        """
        if node_text == "query" or not self.answer:
            return self.query
        if node_text == "answer":
            return self.answer
        return f"{self.query} {self.answer}"


def _clean(value: Any) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split())
    return ""


def _pick(item: Mapping[str, Any], keys: Sequence[str]) -> str:
    lowered = {str(k).strip().lower(): v for k, v in item.items()}
    for key in keys:
        if key in lowered:
            return _clean(lowered[key])
    return ""


def _items(value: Any) -> list[Mapping[str, Any]] | None:
    """The pair objects of a parsed JSON value, or ``None`` if it holds none."""
    if isinstance(value, Mapping):
        if _pick(value, _QUERY_KEYS):
            return [value]
        lists = [v for v in value.values() if isinstance(v, list)]
        value = max(lists, key=len) if lists else None
    if isinstance(value, list):
        found = [v for v in value if isinstance(v, Mapping)]
        return found or None
    return None


@dataclass(frozen=True)
class ParsedReply:
    """What :func:`parse_qa_pairs` read from one reply.

    Parameters
    ----------
    pairs : list of QAPair
        The usable pairs, in reply order.
    how : {"json", "objects", "key-values", "lines", "none"}
        Which step of the tolerant parser succeeded.
    dropped : int
        Items not kept as pairs (empty query / answer, duplicate, echo of the example, beyond
        ``M``).
    questions : list of str
        Questions the reply gave without an answer (line format: ``Question: ...`` with an
        empty ``Answer:``, numbered question lists; JSON items with an empty answer), in reply
        order, without duplicates, echoes or the queries of :attr:`pairs`, at most ``M``. The
        paper's nodes are ``q (+) a``, so they are not pairs; an index may use them as
        query-only nodes (``QCGIndexParams.answerless``).
    """

    pairs: list[QAPair]
    how: str
    dropped: int = 0
    questions: list[str] = field(default_factory=list)


def parse_qa_pairs(reply: str, M: int | None = None) -> ParsedReply:
    """Parse a Doc2Query reply tolerantly (see the module docstring for the steps).

    Parameters
    ----------
    reply : str
        Raw model output.
    M : int, optional
        Keep at most ``M`` pairs.

    Examples
    --------
    >>> r = parse_qa_pairs('[{"index": 0, "query": "Who?", "answer": "Bob"}, {"index": 1, "qu')
    >>> r.how, r.pairs
    ('objects', [QAPair(query='Who?', answer='Bob')])
    >>> parse_qa_pairs("no pairs here").how
    'none'
    """
    raw: list[tuple[str, str]] = []
    how = "none"
    try:
        value = extract_json(reply, python_literals=True)
    except LLMOutputError:
        value = None
    # a lone pair object may be the longest piece of a cut-off array: scan for all of them
    single = isinstance(value, Mapping) and bool(_pick(value, _QUERY_KEYS))
    items = None if single else _items(value)
    if items is not None:
        how = "json"
    else:
        items = []
        for match in _FLAT_OBJECT.finditer(reply):
            try:
                value = extract_json(match.group(0), python_literals=True)
            except LLMOutputError:
                continue
            if isinstance(value, Mapping):
                items.append(value)
        if items:
            how = "objects"
    if items:
        raw = [(_pick(i, _QUERY_KEYS), _pick(i, _ANSWER_KEYS)) for i in items]
    else:
        raw = _key_value_pairs(reply)
        how = "key-values" if raw else "none"
        if not raw:
            raw = _line_pairs(reply)
            how = "lines" if raw else "none"
        if not raw:
            raw = _numbered_questions(reply)
    pairs: list[QAPair] = []
    seen: set[tuple[str, str]] = set()
    unanswered: list[str] = []
    for query, answer in raw:
        key = (query.lower(), answer.lower())
        wordless = not any(ch.isalpha() for ch in query)
        echoed = query.lower() in EXAMPLE_QUERIES or key[0] == key[1]
        if wordless or echoed or key in seen:
            continue
        if not answer:
            unanswered.append(query)
            continue
        if M is not None and len(pairs) >= M:
            continue
        seen.add(key)
        pairs.append(QAPair(query, answer))
    questions = distinct_questions(unanswered, pairs, M)
    return ParsedReply(pairs, how if pairs else "none", len(raw) - len(pairs), questions)


def distinct_questions(
    questions: Iterable[str], pairs: Sequence[QAPair], M: int | None
) -> list[str]:
    """``questions`` without duplicates (case-insensitive) or queries of ``pairs``, at most
    ``M``."""
    taken = {p.query.lower() for p in pairs}
    out: list[str] = []
    for question in questions:
        if question.lower() in taken or (M is not None and len(out) >= M):
            continue
        taken.add(question.lower())
        out.append(question)
    return out


def _numbered_questions(reply: str) -> list[tuple[str, str]]:
    """``1. Who came?`` lines (a numbered list of questions, no answers).

    Examples
    --------
    >>> _numbered_questions("1. Who came?\\n2. Where?\\nnot a question\\n3. Bob")
    [('Who came?', ''), ('Where?', '')]
    """
    out: list[tuple[str, str]] = []
    for line in reply.splitlines():
        match = _NUMBERED_QUESTION.match(line)
        if match:
            out.append((_clean(match.group(1).strip("\"'")), ""))
    return out


def _line_pairs(reply: str) -> list[tuple[str, str]]:
    """``Question: ...`` / ``Answer: ...`` lines, read line by line.

    A key with nothing after it takes the next non-blank line that is not a key line, skipping
    lead-ins such as ``The answer is:``; a question followed by another question (or by the
    end of the reply) without an answer gives ``(question, "")``.

    Examples
    --------
    >>> _line_pairs("1. Question: Who came?\\nAnswer: Bob\\nQ: 2. Where?\\nA: Rome")
    [('Who came?', 'Bob'), ('Where?', 'Rome')]
    >>> _line_pairs("Question:\\n\\nWho came?\\n\\nAnswer:\\nThe answer is:\\nBob\\nQuestion: Why?")
    [('Who came?', 'Bob'), ('Why?', '')]
    """
    lines = reply.splitlines()
    out: list[tuple[str, str]] = []
    query: str | None = None
    i = 0
    while i < len(lines):
        match = _LINE.match(lines[i])
        i += 1
        if match is None:
            continue
        key = match.group(1).lower()
        value = _clean(_ENUMERATION.sub("", match.group(2).strip("\"'")))
        if not value or (key not in _QUERY_KEYS and _FILLER.match(value)):
            # the value is on a following line: the first non-blank, non-key, non-filler one
            while i < len(lines) and _LINE.match(lines[i]) is None:
                candidate = _clean(_ENUMERATION.sub("", lines[i].strip().strip("\"'")))
                i += 1
                if candidate and not (key not in _QUERY_KEYS and _FILLER.match(candidate)):
                    value = candidate
                    break
            else:
                value = ""
        if key in _QUERY_KEYS:
            if query is not None:
                out.append((query, ""))
            query = value or None
        elif query is not None:
            out.append((query, value))
            query = None
    if query is not None:
        out.append((query, ""))
    return out


def _key_value_pairs(reply: str) -> list[tuple[str, str]]:
    """``query: "..."`` followed by ``answer: "..."`` runs (no braces needed)."""
    out: list[tuple[str, str]] = []
    query: str | None = None
    for match in _KEY_VALUE.finditer(reply):
        key = match.group(1).lower()
        value = match.group(2) if match.group(2) is not None else match.group(3)
        value = _clean(value.replace('\\"', '"').replace("\\'", "'"))
        if key in ("query", "question"):
            query = value
        elif query is not None:
            out.append((query, value))
            query = None
    return out
