"""Knowledge-unit extraction (Clue-RAG §3.2, Algorithm 1 lines 6-11, prompt of appendix A.3).

Chunks chosen by :func:`~graphrag_integrations.methods.clue.selection.select_chunks` are sent
to an LLM with the paper's prompt (Figure 9), which asks for self-contained atomic statements
("knowledge units") as JSON. The reply is parsed leniently: a Markdown code fence, text around
the JSON, trailing commas (the paper's own examples have them), Python-style quoting, the key
spelled ``knowledge units`` / ``knowledge_units`` / ``knowledgeUnits``, or a bare JSON list.
Units are whitespace-normalised, de-duplicated (first occurrence wins) and empty ones dropped.

A chunk whose reply does not parse, or parses to no units, falls back to sentence units from
the ``sentence_splitter`` the caller passes (Clue-RAG uses sentences for every chunk the LLM
does not process); each fallback is logged and counted in :class:`ExtractionStats`. A chunk
that is blank is not sent to the LLM and gets no units. An exception raised by the client
itself (after its own retries) propagates: an unreachable model is not a parse failure.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from graphrag_integrations.core.llm.json_output import extract_json
from graphrag_integrations.errors import LLMOutputError

__all__ = [
    "KNOWLEDGE_UNIT_PROMPT",
    "CompletionClient",
    "ExtractionOutcome",
    "ExtractionStats",
    "KnowledgeUnitExtractor",
    "clean_units",
    "knowledge_unit_prompt",
    "parse_knowledge_units",
]

logger = logging.getLogger(__name__)

#: Clue-RAG's knowledge-unit prompt (appendix A.3, Figure 9), with its two examples as printed
#: in the paper; ``{passage}`` is replaced by the chunk text.
KNOWLEDGE_UNIT_PROMPT = """\
Decompose the content into clear knowledge units, ensuring they are interpretable \
independently of their original context:
- (1) Sentence Simplification: Break compound sentences into simpler, individual sentences. \
Whenever possible, retain the original phrasing from the input text.
- (2) Entity and Description Separation: For named entities that are accompanied by \
descriptive information, separate the descriptive details into a distinct knowledge unit. \
Ensure each knowledge unit represents a single, clear fact.
- (3) Pronoun Resolution: Replace all pronouns (e.g., "it", "they", "this") with explicit \
references, using full taxonomic names or clear identifiers. Always use "[entity]'s \
[property]" construction.
- (4) Output Format: Present the resulting knowledge units as a list of strings, formatted in \
JSON.

EXAMPLE-1:
Input:
Jesús Aranguren. His 13-year professional career was solely associated with Athletic Bilbao, \
with which he played in nearly 400 official games, winning two Copa del Rey trophies.
Output:
```
{
  "knowledge units": [
    "Jesús Aranguren had a 13-year professional career.",
    "Jesús Aranguren's professional career was solely associated with Athletic Bilbao.",
    "Athletic Bilbao is a football club.",
    "Jesús Aranguren played for Athletic Bilbao in nearly 400 official games.",
    "Jesús Aranguren won two Copa del Rey trophies with Athletic Bilbao.",
  ]
}
```

EXAMPLE-2:
Input:
Ophrys apifera. Ophrys apifera grows to a height of 15 – 50 centimetres (6 – 20 in). This \
hardy orchid develops small rosettes of leaves in autumn. They continue to grow slowly during \
winter. Basal leaves are ovate or oblong - lanceolate, upper leaves and bracts are ovate - \
lanceolate and sheathing. The plant blooms from mid-April to July producing a spike composed \
from one to twelve flowers. The flowers have large sepals, with a central green rib and their \
colour varies from white to pink, while petals are short, pubescent, yellow to greenish. The \
labellum is trilobed, with two pronounced humps on the hairy lateral lobes, the median lobe is \
hairy and similar to the abdomen of a bee. It is quite variable in the pattern of coloration, \
but usually brownish - red with yellow markings. The gynostegium is at right angles, with an \
elongated apex.
Output:
```
{
  "knowledge units": [
    "Ophrys apifera grows to a height of 15-50 centimetres (6-20 in)",
    "Ophrys apifera is a hardy orchid",
    "Ophrys apifera develops small rosettes of leaves in autumn",
    "The leaves of Ophrys apifera continue to grow slowly during winter",
    "The basal leaves of Ophrys apifera are ovate or oblong-lanceolate",
    "The upper leaves and bracts of Ophrys apifera are ovate-lanceolate and sheathing",
    "Ophrys apifera blooms from mid-April to July",
    "Ophrys apifera produces a spike composed of one to twelve flowers",
    "The flowers of Ophrys apifera have large sepals with a central green rib",
    "The flowers of Ophrys apifera vary in colour from white to pink",
    "The petals of Ophrys apifera are short, pubescent, and yellow to greenish",
    "The labellum of Ophrys apifera is trilobed with two pronounced humps on the hairy lateral \
lobes",
    "The median lobe of Ophrys apifera's labellum is hairy and resembles a bee's abdomen",
    "The coloration pattern of Ophrys apifera is variable but usually brownish-red with yellow \
markings",
    "The gynostegium of Ophrys apifera is at right angles with an elongated apex" ,
  ]
}
```

JUST OUTPUT THE RESULTS IN JSON FORMAT!

Input: {passage}
Output:
"""

_PLACEHOLDER = "{passage}"
_KEY_SEPARATORS = re.compile(r"[\s_\-]+")
_UNIT_KEYS = {"knowledge units", "knowledgeunits"}


def knowledge_unit_prompt(chunk: str, template: str = KNOWLEDGE_UNIT_PROMPT) -> str:
    """Fill the knowledge-unit prompt with one chunk.

    Examples
    --------
    >>> prompt = knowledge_unit_prompt("Paris is in France.")
    >>> prompt.splitlines()[-2:]
    ['Input: Paris is in France.', 'Output:']
    """
    return template.replace(_PLACEHOLDER, chunk)


def clean_units(units: Sequence[str]) -> list[str]:
    """Collapse whitespace, drop empty units and duplicates (first occurrence kept).

    Examples
    --------
    >>> clean_units(["  A  b ", "", "A b", "c\\n"])
    ['A b', 'c']
    """
    seen: set[str] = set()
    out: list[str] = []
    for unit in units:
        text = " ".join(unit.split())
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def parse_knowledge_units(reply: str) -> list[str]:
    """Parse an LLM reply to the knowledge-unit prompt into cleaned units.

    Parameters
    ----------
    reply : str
        Raw model output.

    Returns
    -------
    list of str
        The units, cleaned by :func:`clean_units` (possibly empty).

    Raises
    ------
    LLMOutputError
        If the reply holds no JSON object/list, the object has no knowledge-units key, or
        the value is not a list.

    Examples
    --------
    >>> parse_knowledge_units('```json\\n{"knowledge_units": ["A is B.", "A is B.",]}\\n```')
    ['A is B.']
    """
    value = extract_json(reply, python_literals=True)
    if isinstance(value, dict):
        matches = [
            v
            for k, v in value.items()
            if _KEY_SEPARATORS.sub(" ", str(k).strip().lower()) in _UNIT_KEYS
        ]
        if not matches:
            raise LLMOutputError(f"JSON object has no 'knowledge units' key: {sorted(value)!r}")
        value = matches[0]
    if not isinstance(value, list):
        raise LLMOutputError(f"knowledge units must be a list, got {type(value).__name__}")
    dropped = sum(1 for item in value if not isinstance(item, str))
    if dropped:
        logger.debug("dropped %d non-string knowledge units", dropped)
    return clean_units([item for item in value if isinstance(item, str)])


@runtime_checkable
class CompletionClient(Protocol):
    """What the extractor needs from an LLM client (``core.llm.LLMClient`` provides it).

    Attributes
    ----------
    usage : Any
        Token usage accounting of the client (``TokenUsage``).
    """

    usage: Any

    def complete_many(self, prompts: Sequence[str], *, show_progress: bool = False) -> list[Any]:
        """Complete every prompt; one reply (``str`` or an object with ``.text``) per prompt."""
        ...


@dataclass(frozen=True)
class ExtractionOutcome:
    """Knowledge units of one chunk and where they came from.

    Parameters
    ----------
    units : list of str
        The knowledge units.
    source : {"llm", "sentences"}
        ``"llm"`` when parsed from the reply, ``"sentences"`` for the fallback.
    error : str or None
        Why the chunk fell back (``None`` for LLM units and for blank chunks).
    """

    units: list[str]
    source: Literal["llm", "sentences"]
    error: str | None = None


@dataclass(frozen=True)
class ExtractionStats:
    """Counts over extracted chunks.

    Parameters
    ----------
    llm_chunks : int
        Chunks whose units came from the LLM.
    fallback_chunks : int
        Chunks that fell back to sentence units (parse failure or no units).
    parse_failures : int
        Fallbacks caused by an unparseable reply (the rest had an empty unit list).
    skipped_chunks : int
        Blank chunks, not sent to the LLM.

    Examples
    --------
    >>> ExtractionStats(2, 1, 1) + ExtractionStats(1, 0, 0)
    ExtractionStats(llm_chunks=3, fallback_chunks=1, parse_failures=1, skipped_chunks=0)
    """

    llm_chunks: int = 0
    fallback_chunks: int = 0
    parse_failures: int = 0
    skipped_chunks: int = 0

    def __add__(self, other: ExtractionStats) -> ExtractionStats:
        return ExtractionStats(
            self.llm_chunks + other.llm_chunks,
            self.fallback_chunks + other.fallback_chunks,
            self.parse_failures + other.parse_failures,
            self.skipped_chunks + other.skipped_chunks,
        )


class KnowledgeUnitExtractor:
    """Extract knowledge units from chunks with an LLM, falling back to sentences.

    Parameters
    ----------
    client : CompletionClient
        LLM client with ``complete_many(prompts, show_progress=...)`` and ``usage``
        (e.g. ``graphrag_integrations.core.llm.LLMClient``).
    sentence_splitter : callable
        ``text -> list of sentences`` used for fallback units (Clue-RAG: spaCy sentences).
    prompt_template : str
        Prompt with a ``{passage}`` placeholder; defaults to :data:`KNOWLEDGE_UNIT_PROMPT`.
    show_progress : bool
        Show a progress bar while the client completes the prompts.

    Attributes
    ----------
    stats : ExtractionStats
        Counts accumulated over every :meth:`extract` call.
    last_stats : ExtractionStats
        Counts of the latest call.

    Raises
    ------
    ValueError
        If ``prompt_template`` has no ``{passage}`` placeholder.

    Examples
    --------
    >>> class EchoClient:
    ...     usage = None
    ...     def complete_many(self, prompts, show_progress=False):
    ...         return ['{"knowledge units": ["Paris is in France."]}' for _ in prompts]
    >>> extractor = KnowledgeUnitExtractor(EchoClient(), lambda t: t.split(". "))
    >>> extractor.extract(["Paris is in France."])[0].units
    ['Paris is in France.']
    """

    def __init__(
        self,
        client: CompletionClient,
        sentence_splitter: Callable[[str], list[str]],
        *,
        prompt_template: str = KNOWLEDGE_UNIT_PROMPT,
        show_progress: bool = False,
    ) -> None:
        if _PLACEHOLDER not in prompt_template:
            raise ValueError("prompt_template must contain the {passage} placeholder")
        self.client = client
        self.sentence_splitter = sentence_splitter
        self.prompt_template = prompt_template
        self.show_progress = show_progress
        self.stats = ExtractionStats()
        self.last_stats = ExtractionStats()

    @property
    def usage(self) -> Any:
        """The client's token usage."""
        return self.client.usage

    def sentence_units(self, chunk: str) -> list[str]:
        """Sentence units of a chunk (the fallback, also usable for unselected chunks).

        A non-blank chunk for which the splitter yields nothing becomes one unit (logged).
        """
        units = clean_units(self.sentence_splitter(chunk))
        if not units and chunk.strip():
            logger.warning("sentence splitter found no sentence; using the whole chunk as a unit")
            units = clean_units([chunk])
        return units

    def extract(self, chunks: Sequence[str]) -> list[ExtractionOutcome]:
        """Extract the knowledge units of every chunk (one LLM call per non-blank chunk).

        Parameters
        ----------
        chunks : sequence of str
            Chunk texts.

        Returns
        -------
        list of ExtractionOutcome
            One per chunk, in order.

        Raises
        ------
        LLMOutputError
            If the client returns a different number of replies than prompts.
        """
        todo = [i for i, chunk in enumerate(chunks) if chunk.strip()]
        replies = self.client.complete_many(
            [knowledge_unit_prompt(chunks[i], self.prompt_template) for i in todo],
            show_progress=self.show_progress,
        )
        if len(replies) != len(todo):
            raise LLMOutputError(f"client returned {len(replies)} replies for {len(todo)} prompts")
        outcomes = [ExtractionOutcome([], "sentences") for _ in chunks]
        stats = ExtractionStats(skipped_chunks=len(chunks) - len(todo))
        for index, reply in zip(todo, replies, strict=True):
            text = reply if isinstance(reply, str) else getattr(reply, "text", None)
            if not isinstance(text, str):
                raise LLMOutputError(f"client reply is not text: {type(reply).__name__}")
            try:
                units = parse_knowledge_units(text)
            except LLMOutputError as exc:
                error, failed = f"unparseable reply: {exc}", 1
            else:
                if units:
                    outcomes[index] = ExtractionOutcome(units, "llm")
                    stats += ExtractionStats(llm_chunks=1)
                    continue
                error, failed = "reply holds no knowledge units", 0
            logger.warning("chunk %d: %s; falling back to sentence units", index, error)
            outcomes[index] = ExtractionOutcome(
                self.sentence_units(chunks[index]), "sentences", error
            )
            stats += ExtractionStats(fallback_chunks=1, parse_failures=failed)
        self.last_stats = stats
        self.stats = self.stats + stats
        logger.info(
            "knowledge units: %d chunks by LLM, %d fell back to sentences (%d unparseable), "
            "%d blank",
            stats.llm_chunks,
            stats.fallback_chunks,
            stats.parse_failures,
            stats.skipped_chunks,
        )
        return outcomes
