"""Main job: index the bundled sample corpus with ClueIndex and answer questions with Q-Iter.

Everything runs offline on the default models (spaCy en_core_web_sm, all-MiniLM-L6-v2 and,
for the short generated answers, SmolLM2-135M-Instruct). Run it with ``bash .ci/demo.sh`` or::

    python examples/quickstart.py [--corpus DIR] [--questions FILE] [--no-generate]

For each question it prints the retrieved passages with their scores and the Q-Iter paths
(knowledge units and the entities that led to them), then a short answer generated from the
retrieved passages by the local LM.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from graphrag_integrations.core.documents import SourceDocument, load_documents
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import describe_path

HERE = Path(__file__).resolve().parent
ANSWER_PROMPT = (
    "Your goal is to give the best full answer to the question according to the given "
    "context below.\n\nGiven Context: {context}\n\nGive the best full answer to question: "
    "{question}\nAnswer this question in as few words as possible."
)


def titled_documents(folder: Path) -> list[SourceDocument]:
    """Load ``folder``; the first line of each sample file is its title (kept as metadata)."""
    docs = []
    for doc in load_documents(folder):
        title = doc.text.split("\n", 1)[0].strip()
        docs.append(SourceDocument(doc.text, id=doc.id, metadata={**doc.metadata, "title": title}))
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "data" / "sample_corpus")
    parser.add_argument("--questions", type=Path, default=HERE / "data" / "sample_questions.json")
    parser.add_argument("--index-dir", type=Path, default=Path(".graphrag_cache/quickstart"))
    parser.add_argument("-k", type=int, default=5, help="passages shown per question")
    parser.add_argument("--no-generate", action="store_true", help="retrieval only")
    args = parser.parse_args()

    t0 = time.perf_counter()
    index = ClueIndex.from_documents(titled_documents(args.corpus), show_progress=True)
    index.persist(args.index_dir)
    index = ClueIndex.load(args.index_dir)
    print(f"indexed {args.corpus} in {time.perf_counter() - t0:.1f} s -> {args.index_dir}")
    qiter = index.as_retriever(k=args.k)

    llm = None
    if not args.no_generate:
        from graphrag_integrations.core.llm import LLMClient, TransformersLLM

        llm = LLMClient(TransformersLLM(max_new_tokens=24))

    for item in json.loads(args.questions.read_text(encoding="utf-8")):
        question = item["question"]
        t1 = time.perf_counter()
        hits = qiter.retrieve(question)
        ms = (time.perf_counter() - t1) * 1000
        print("\n" + "=" * 100)
        print(f"Q: {question}   (gold: {item['answer']}; {ms:.0f} ms)")
        for rank, hit in enumerate(hits, 1):
            title = hit.passage.metadata.get("title", hit.doc_id)
            print(f"  {rank}. [{hit.score:.3f}] {title}")
            # each unit of the best path, with the entity that led the search to it
            for line in describe_path(hit.explanation, width=100):
                print("       " + line)
        if llm is not None:
            context = "\n\n".join(h.text for h in hits)
            answer = llm.complete(ANSWER_PROMPT.format(context=context, question=question))
            print(f"  A (SmolLM2-135M): {answer.strip()}")
    if llm is not None:
        print("\nLLM usage:", llm.usage.as_dict())


if __name__ == "__main__":
    main()
