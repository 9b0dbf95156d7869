"""Main job: index the bundled sample corpus with ClueIndex and answer questions with Q-Iter.

Everything runs offline on the default models (spaCy en_core_web_sm and all-MiniLM-L6-v2;
SmolLM2-135M-Instruct only with ``--generate``). Run it with ``bash .ci/demo.sh`` or::

    python examples/quickstart.py [--corpus DIR] [--questions FILE] [-k 5] [--generate]

For each question it prints the retrieved passages with their scores and the Q-Iter paths
(the supporting sentences and the entities that led from one to the next), then the answer
where the passages hold it: the retrieved sentence that contains the question's gold answer,
labelled as such (extracted, not generated). With ``--generate`` the local 135M LM also writes
a short answer, shown only when its words occur in a retrieved sentence (a 135M model is a
wiring demo: its free text is often cut short or wrong).
"""

from __future__ import annotations

import argparse
import json
import re
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from graphrag_integrations.core.text.documents import SourceDocument, load_documents
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.methods.clue.explain import describe_path
from graphrag_integrations.methods.clue.index import ClueIndex

HERE = Path(__file__).resolve().parent
ANSWER_PROMPT = (
    "Your goal is to give the best full answer to the question according to the given "
    "context below.\n\nGiven Context: {context}\n\nGive the best full answer to question: "
    "{question}\nAnswer this question in as few words as possible."
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
WORD = re.compile(r"[^\W_]+")


def titled_documents(folder: Path) -> list[SourceDocument]:
    """Load ``folder``; the first line of each sample file is its title (kept as metadata)."""
    docs = []
    for doc in load_documents(folder):
        title = doc.text.split("\n", 1)[0].strip()
        docs.append(SourceDocument(doc.text, id=doc.id, metadata={**doc.metadata, "title": title}))
    return docs


def sentences(text: str) -> list[str]:
    r"""The sentences of a passage's body (its title line left out).

    Examples
    --------
    >>> sentences("Paris\nParis is in France. It has 2.1 million people. Its mayor is Hidalgo.")
    ['Paris is in France.', 'It has 2.1 million people.', 'Its mayor is Hidalgo.']
    """
    body = text.split("\n", 1)[1] if "\n" in text else text
    return [s.strip() for s in SENTENCE_END.split(" ".join(body.split())) if s.strip()]


def sentence_with(answer: str, hits: Sequence[RetrievedPassage]) -> tuple[int, str] | None:
    r"""The first retrieved sentence (best passage first) that contains ``answer``, with its rank.

    Examples
    --------
    >>> from graphrag_integrations.core.types import Passage
    >>> hits = [RetrievedPassage(Passage("a", "Rome\nRome is in Italy.", "d"), 0.9),
    ...         RetrievedPassage(Passage("b", "Paris\nIt is big. Paris is in France.", "d"), 0.5)]
    >>> sentence_with("paris", hits)
    (2, 'Paris is in France.')
    >>> sentence_with("Berlin", hits) is None
    True
    """
    needle = " ".join(WORD.findall(answer.casefold()))
    for rank, hit in enumerate(hits, 1):
        for sentence in sentences(hit.text):
            if needle and needle in " ".join(WORD.findall(sentence.casefold())):
                return rank, sentence
    return None


def grounded(generated: str, hits: Sequence[RetrievedPassage]) -> tuple[int, str] | None:
    r"""A retrieved sentence holding every word of a generated answer, or ``None``.

    A small LM's answer is shown only when the passages back it word for word.

    Examples
    --------
    >>> from graphrag_integrations.core.types import Passage
    >>> hits = [RetrievedPassage(Passage("a", "Film\nIt was directed by Stephen King.", "d"), 0.9)]
    >>> grounded("Stephen King.", hits)
    (1, 'It was directed by Stephen King.')
    >>> grounded("Steven Spielberg", hits) is None
    True
    """
    words = set(WORD.findall(generated.casefold()))
    if not words:
        return None
    for rank, hit in enumerate(hits, 1):
        for sentence in sentences(hit.text):
            if words <= set(WORD.findall(sentence.casefold())):
                return rank, sentence
    return None


def title_of(hit: RetrievedPassage) -> str:
    """The passage's title (metadata), else its document id."""
    return str(hit.passage.metadata.get("title", hit.doc_id))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "data" / "sample_corpus")
    parser.add_argument("--questions", type=Path, default=HERE / "data" / "sample_questions.json")
    parser.add_argument("--index-dir", type=Path, default=Path(".graphrag_cache/quickstart"))
    parser.add_argument("-k", type=int, default=5, help="passages shown per question")
    parser.add_argument(
        "--generate", action="store_true", help="also ask the local 135M LM (shown if grounded)"
    )
    parser.add_argument("--no-generate", action="store_true", help="retrieval only (the default)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    index = ClueIndex.from_documents(titled_documents(args.corpus), show_progress=True)
    index.persist(args.index_dir, overwrite=True)
    index = ClueIndex.load(args.index_dir)
    print(f"indexed {args.corpus} in {time.perf_counter() - t0:.1f} s -> {args.index_dir}")
    qiter = index.as_retriever(k=args.k)

    llm = None
    if args.generate and not args.no_generate:
        from graphrag_integrations.core.llm import LLMClient, TransformersLLM

        llm = LLMClient(TransformersLLM(max_new_tokens=24))

    found = asked = 0
    for item in json.loads(args.questions.read_text(encoding="utf-8")):
        question, gold = item["question"], item.get("answer")
        t1 = time.perf_counter()
        hits = qiter.retrieve(question)
        ms = (time.perf_counter() - t1) * 1000
        print("\n" + "=" * 100)
        print(f"Q: {question}")
        print(f"   (gold answer: {gold or 'not given'}; retrieval {ms:.0f} ms)")
        print("   passages, best first; under each, the sentences of its best Q-Iter path:")
        for rank, hit in enumerate(hits, 1):
            print(f"  {rank}. [{hit.score:.3f}] {title_of(hit)}")
            # each unit of the best path, with the entity that led the search to it
            for line in describe_path(hit.explanation, width=100):
                print("       " + line)
        if gold:
            asked += 1
            holder = sentence_with(gold, hits)
            if holder is None:
                print(f"  answer: {gold!r} is not in these {len(hits)} passages")
            else:
                found += 1
                rank, sentence = holder
                print(f"  answer (extracted from passage {rank}, {title_of(hits[rank - 1])!r}):")
                indent = " " * 7
                print(textwrap.fill(sentence, 100, initial_indent=indent, subsequent_indent=indent))
        if llm is not None:
            context = "\n\n".join(h.text for h in hits)
            generated = llm.complete(ANSWER_PROMPT.format(context=context, question=question))
            support = grounded(generated.strip(), hits)
            if support is None:
                print("  generated (SmolLM2-135M): withheld, not backed by a retrieved sentence")
            else:
                print(f"  generated (SmolLM2-135M, backed by passage {support[0]}): ", end="")
                print(generated.strip())
    if asked:
        print(f"\ngold answer in the top {args.k} passages for {found} of {asked} questions")
    if llm is not None:
        print("LLM usage:", llm.usage.as_dict())


if __name__ == "__main__":
    main()
