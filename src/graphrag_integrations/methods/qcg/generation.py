"""Extended Doc2Query (QCG-RAG §3.3 step 1, prompt C.1): query-answer pairs per chunk.

Each chunk is sent to an LLM with the paper's Doc2Query prompt (appendix C.1; ``20`` replaced
by ``M``, and the chunk appended under ``---Input chunk---``, a place the paper does not
print). Replies are parsed tolerantly, since small local models rarely return clean JSON
(measured in ``docs/lab/qcg.md``):

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
(``QCGIndexParams.answerless``). A reply giving no pair is retried once with a short repair
instruction appended (its own cache entry); a chunk still without pairs is counted as failed
and logged.

Calls go through :class:`~graphrag_integrations.core.llm.LLMClient`: with ``cache_dir`` each
reply is stored on disk as soon as it arrives, keyed by model, prompt (chunk text + template)
and generation parameters, so a rebuild or a restart after a crash never pays twice. A
:class:`QuerySet` keeps the parsed pairs per chunk text for reuse without any LLM.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.json_output import extract_json
from graphrag_integrations.errors import IndexMismatchError, LLMOutputError

logger = logging.getLogger(__name__)

__all__ = [
    "DOC2QUERY_PROMPT",
    "QUERY_SET_FILE",
    "REPAIR_SUFFIX",
    "SMALL_MODEL_PROMPT",
    "SMALL_MODEL_REPAIR_SUFFIX",
    "Doc2QueryGenerator",
    "GenerationStats",
    "QAPair",
    "QuerySet",
    "chunk_key",
    "doc2query_prompt",
    "parse_qa_pairs",
    "prompt_hash",
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


def chunk_key(text: str) -> str:
    """The key of a chunk in a :class:`QuerySet`: SHA-256 of its text (first 24 hex digits).

    Examples
    --------
    >>> chunk_key("a") == chunk_key("a") != chunk_key("b")
    True
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


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
    questions = _distinct_questions(unanswered, pairs, M)
    return ParsedReply(pairs, how if pairs else "none", len(raw) - len(pairs), questions)


def _distinct_questions(
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


@dataclass
class GenerationStats:
    """Counts over every chunk sent through :class:`Doc2QueryGenerator`.

    Attributes
    ----------
    chunks : int
        Chunks generated for (blank chunks are not sent).
    json_replies, salvaged_replies : int
        Chunks whose final reply parsed as one JSON value / only by the salvage steps.
    retried : int
        Chunks whose first reply gave no pair (each retried once).
    failed : int
        Chunks without any pair after the retry.
    pairs, dropped_pairs : int
        Pairs kept / dropped by the parser.
    questions : int
        Answerless questions kept beside the pairs (:attr:`ParsedReply.questions`).
    seconds : float
        Wall time spent generating.
    """

    chunks: int = 0
    json_replies: int = 0
    salvaged_replies: int = 0
    retried: int = 0
    failed: int = 0
    pairs: int = 0
    dropped_pairs: int = 0
    questions: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def record(self, parsed: ParsedReply, retried: bool) -> None:
        """Add the outcome of one chunk."""
        with self._lock:
            self.chunks += 1
            self.retried += int(retried)
            self.failed += int(not parsed.pairs)
            self.json_replies += int(parsed.how == "json")
            self.salvaged_replies += int(parsed.how in ("objects", "key-values", "lines"))
            self.pairs += len(parsed.pairs)
            self.dropped_pairs += parsed.dropped
            self.questions += len(parsed.questions)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counters."""
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.init}


class Doc2QueryGenerator:
    """Generate query-answer pairs for chunks through an LLM client.

    Parameters
    ----------
    client : LLMClient
        ``core.llm.LLMClient`` (its ``cache_dir`` makes replies persistent, its
        ``max_concurrency`` bounds the calls in flight, its ``usage`` counts tokens).
    M : int
        Pairs asked per chunk.
    template : str
        Prompt with ``{chunk}`` (and optionally ``{M}`` / ``{last}``).
    max_tokens : int, optional
        Generation limit per reply (``None``: the client's / model's default).
    repair_suffix : str, optional
        Appended to the prompt for the one retry; ``None``: :data:`SMALL_MODEL_REPAIR_SUFFIX`
        for :data:`SMALL_MODEL_PROMPT`, else :data:`REPAIR_SUFFIX` (JSON).
    show_progress : bool
        Progress bar with chunks/s and tokens/s.

    Examples
    --------
    >>> from graphrag_integrations.core.llm import LLMClient
    >>> reply = '[{"index": 0, "query": "Where is Paris?", "answer": "France"}]'
    >>> gen = Doc2QueryGenerator(LLMClient(lambda prompt: reply), M=1)
    >>> gen.generate(["Paris is in France."])
    [[QAPair(query='Where is Paris?', answer='France')]]
    """

    def __init__(
        self,
        client: Any,
        *,
        M: int = 20,
        template: str = DOC2QUERY_PROMPT,
        max_tokens: int | None = None,
        repair_suffix: str | None = None,
        show_progress: bool = False,
    ) -> None:
        if "{chunk}" not in template:
            raise ValueError("the Doc2Query template must contain {chunk}")
        if M < 1:
            raise ValueError(f"M must be >= 1, got {M}")
        self.client = client
        self.M = M
        self.template = template
        self.max_tokens = max_tokens
        if repair_suffix is None:
            small = template == SMALL_MODEL_PROMPT
            repair_suffix = SMALL_MODEL_REPAIR_SUFFIX if small else REPAIR_SUFFIX
        self.repair_suffix = repair_suffix
        self.show_progress = show_progress
        self.stats = GenerationStats()

    @property
    def model_name(self) -> str:
        return str(self.client.model_name)

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.template)

    def _complete(self, prompt: str) -> str:
        """The one LLM call of this stage."""
        return str(self.client.complete(prompt, max_tokens=self.max_tokens))

    def generate_one(self, chunk: str) -> list[QAPair]:
        """Pairs of one chunk (one retry when the first reply gives none)."""
        prompt = doc2query_prompt(chunk, self.M, self.template)
        parsed = parse_qa_pairs(self._complete(prompt), self.M)
        retried = not parsed.pairs
        if retried:
            logger.info("Doc2Query reply gave no pair; retrying once with a repair instruction")
            again = parse_qa_pairs(self._complete(prompt + self.repair_suffix), self.M)
            parsed = self._after_retry(parsed, again)
        return self._finish(chunk, parsed, retried)

    def _after_retry(self, first: ParsedReply, again: ParsedReply) -> ParsedReply:
        """The retry's pairs, with the answerless questions of both replies."""
        questions = _distinct_questions(first.questions + again.questions, again.pairs, self.M)
        return ParsedReply(again.pairs, again.how, again.dropped, questions)

    def _finish(self, chunk: str, parsed: ParsedReply, retried: bool) -> list[QAPair]:
        """The pairs to store: answered pairs first, then the answerless questions as
        ``QAPair(question, "")`` (an index drops or keeps them: ``QCGIndexParams.answerless``).
        """
        if not parsed.pairs:
            logger.warning(
                "Doc2Query: no query-answer pair for a chunk after one retry (%r...)", chunk[:60]
            )
        self.stats.record(parsed, retried)
        return parsed.pairs + [QAPair(q, "") for q in parsed.questions]

    @property
    def batched(self) -> bool:
        """Whether the client batches a local model (``LLMClient.complete_many`` +
        ``complete_batch``): then :meth:`generate` sends every first prompt in batches, then
        every retry prompt, instead of one chunk per thread."""
        llm = getattr(self.client, "llm", None)
        return callable(getattr(self.client, "complete_many", None)) and callable(
            getattr(llm, "complete_batch", None)
        )

    def _generate_batched(self, chunks: Sequence[str], todo: list[int]) -> dict[int, list[QAPair]]:
        """First replies of every chunk in batches, then the retries in batches.

        ``complete_many`` caches each batch as it completes under the same keys as single
        calls, so a batched and a one-at-a-time build share the cache.
        """
        prompts = {i: doc2query_prompt(chunks[i], self.M, self.template) for i in todo}
        replies = self.client.complete_many(
            [prompts[i] for i in todo],
            show_progress=self.show_progress,
            desc="Doc2Query",
            max_tokens=self.max_tokens,
        )
        parsed = {i: parse_qa_pairs(str(r), self.M) for i, r in zip(todo, replies, strict=True)}
        retry = [i for i in todo if not parsed[i].pairs]
        if retry:
            logger.info("Doc2Query: %d replies gave no pair; retrying each once", len(retry))
            again = self.client.complete_many(
                [prompts[i] + self.repair_suffix for i in retry],
                show_progress=self.show_progress,
                desc="Doc2Query retries",
                max_tokens=self.max_tokens,
            )
            for i, reply in zip(retry, again, strict=True):
                parsed[i] = self._after_retry(parsed[i], parse_qa_pairs(str(reply), self.M))
        retried = set(retry)
        return {i: self._finish(chunks[i], parsed[i], i in retried) for i in todo}

    def generate(self, chunks: Sequence[str]) -> list[list[QAPair]]:
        """Pairs of every chunk, in order, with at most ``max_concurrency`` calls in flight
        (or in ``batch_size`` batches when :attr:`batched`).

        Every reply is cached by the client as soon as it arrives; an exception from the model
        (after the client's retries) propagates once the calls in flight have finished.
        """
        todo = [i for i, c in enumerate(chunks) if c.strip()]
        out: list[list[QAPair]] = [[] for _ in chunks]
        if not todo:
            return out
        from tqdm.auto import tqdm

        start = time.perf_counter()
        if self.batched:
            for i, pairs in self._generate_batched(chunks, todo).items():
                out[i] = pairs
            self.stats.seconds += time.perf_counter() - start
            return out
        usage = getattr(self.client, "usage", None)
        tokens0 = usage.total_tokens if usage is not None else 0
        workers = max(1, min(int(getattr(self.client, "max_concurrency", 1)), len(todo)))
        with (
            ThreadPoolExecutor(workers, thread_name_prefix="doc2query") as pool,
            tqdm(
                total=len(todo), desc="Doc2Query", unit="chunk", disable=not self.show_progress
            ) as bar,
        ):
            futures = {i: pool.submit(self.generate_one, chunks[i]) for i in todo}

            def done(_: Any) -> None:
                bar.update(1)
                if usage is not None:
                    elapsed = max(time.perf_counter() - start, 1e-9)
                    bar.set_postfix(tok_s=f"{(usage.total_tokens - tokens0) / elapsed:.0f}")

            for fut in futures.values():
                fut.add_done_callback(done)
            for i, fut in futures.items():
                out[i] = fut.result()
        self.stats.seconds += time.perf_counter() - start
        return out


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
