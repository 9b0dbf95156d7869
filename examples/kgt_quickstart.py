"""KG-Translator on the bundled sample corpus: ParseKG statistics, clues, traced passages.

Everything runs offline: spaCy en_core_web_sm builds the ParseKG, the untuned
SmolLM2-135M-Instruct translates each question into clues under the KG constraints (pass
``--translator PATH`` for a fine-tuned adapter), all-MiniLM-L6-v2 ranks the traced passages.
Run it from the repository root::

    HF_HUB_OFFLINE=1 python examples/kgt_quickstart.py [--questions 3] [--persist DIR]

For each question it prints the clues (entity, relation span, direction) and the passages
they traced to; passages added by the dense top-up are flagged. With ``--persist`` the index
(with its constraint cache) is written and re-loaded to answer the same questions.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from quickstart import HERE, titled_documents

from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever


def show(index: ParseKGTranslatorRetriever, question: str, k: int) -> None:
    started = time.perf_counter()
    results = index.retrieve(question, k=k)
    took = time.perf_counter() - started
    print(f"\nQ: {question}  ({took:.1f}s)")
    if results:
        for rnd in results[0].explanation["rounds"]:
            print(f"  round: {json.dumps(rnd)}")
    for r in results:
        title = r.passage.metadata.get("title", r.id)
        print(f"  [{r.score:.3f}] {title} ({r.explanation['source']})")
        for clue in r.explanation["clues"][:3]:
            print(f"      ({clue['entity']!r}, {clue['relation']!r}, {clue['direction']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=HERE / "data" / "sample_corpus")
    parser.add_argument(
        "--questions-file", type=Path, default=HERE / "data" / "sample_questions.json"
    )
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--translator", default=None)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--persist", type=Path, default=None)
    args = parser.parse_args()

    started = time.perf_counter()
    index = ParseKGTranslatorRetriever.from_documents(
        titled_documents(args.corpus), translator=args.translator
    )
    print(f"ParseKG built in {time.perf_counter() - started:.1f}s")
    print(index.stats().as_table())
    questions = json.loads(args.questions_file.read_text(encoding="utf-8"))[: args.questions]
    for item in questions:
        show(index, item["question"], args.k)
    if args.persist is not None:
        index.persist(args.persist, overwrite=True)  # replaces the index of an earlier run
        again = ParseKGTranslatorRetriever.load(args.persist, translator=args.translator)
        print(f"\nre-loaded from {args.persist}; constraint cache used: ", end="")
        show(again, questions[0]["question"], args.k)
        print(f"cache hits: {again.counters['constraint_cache_hits']}")


if __name__ == "__main__":
    main()
