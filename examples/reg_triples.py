"""ReG over (head, relation, tail) triples: build, train the triple scorer, retrieve chains.

A tiny MetaQA-shaped movie KG is given as Python triples. The scorer is trained with weak
(shortest-path) supervision on three questions - enough to show the API, not a benchmark (see
``benchmarks/bench_reg.py`` for MetaQA) - and its checkpoint chosen on a held-out question.
Two of the training questions ask about the same actor (directors, then release years), so
the scorer has to read the question, not only recognise the actor's films: trained on one
relation per actor, it would answer any question about an actor with that relation. The
question asked at the end names an actor whose directors it was not trained on.

Retrieval returns evidence chains ``h -> [r] -> t -> ...``, here also through the LangChain
retriever surface. Offline: all-MiniLM-L6-v2 embeds queries, entities and relations. The
index is persisted to ``--index-dir`` (default: a temporary folder, deleted at the end) and
reloaded. Run it with::

    python examples/reg_triples.py [--index-dir DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from graphrag_integrations import RefinedSubgraphRetriever as RegIndex
from graphrag_integrations.methods.reg.index import TrainingQuestion
from graphrag_integrations.methods.reg.params import RegTrainParams

TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Ronald Colman"),
    ("Kismet", "release_year", "1944"),
    ("Random Harvest", "starred_actors", "Ronald Colman"),
    ("Random Harvest", "directed_by", "Mervyn LeRoy"),
    ("Random Harvest", "release_year", "1942"),
    ("Juarez", "directed_by", "William Dieterle"),
    ("Juarez", "starred_actors", "Bette Davis"),
    ("Juarez", "release_year", "1939"),
    ("Now Voyager", "starred_actors", "Bette Davis"),
    ("Now Voyager", "directed_by", "Irving Rapper"),
    ("Now Voyager", "release_year", "1942"),
]
QUESTIONS = [
    TrainingQuestion(
        "q0",
        "who directed the films starring Ronald Colman",
        ("Ronald Colman",),
        ("William Dieterle", "Mervyn LeRoy"),
    ),
    TrainingQuestion(
        "q1",
        "when were the films starring Ronald Colman released",
        ("Ronald Colman",),
        ("1944", "1942"),
    ),
    TrainingQuestion(
        "q2",
        "which actors starred in films by William Dieterle",
        ("William Dieterle",),
        ("Ronald Colman", "Bette Davis"),
    ),
]
#: Held out: picks the training epoch (validation recall), never trained on.
VALIDATION = [
    TrainingQuestion(
        "v0",
        "when were the films starring Bette Davis released",
        ("Bette Davis",),
        ("1939", "1942"),
    ),
]
QUERY = "who directed the films starring [Bette Davis]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index-dir", type=Path, default=None)
    args = ap.parse_args()
    index = RegIndex.from_triples(TRIPLES, doc_id="movies")
    labels = index.supervision(QUESTIONS, mode="weak")
    print("candidate pools (before / after merging):", labels.pool_summary())
    # the held-out question is labelled with the same (weak) supervision
    report = index.train(
        QUESTIONS,
        labels.labels,
        validation=VALIDATION,
        params=RegTrainParams(epochs=30, recall_k=4),
    )
    print(f"trained in {report.seconds:.1f}s, validation triple recall@4 {report.best_recall:.2f}")
    print(f"Q: {QUERY}")
    for t in index.retrieve_triples(QUERY, k=4):
        print(f"  {t.score:7.3f}  {t.head} -[{t.relation}]-> {t.tail}")
    for doc in index.as_langchain_retriever(k=2).invoke(QUERY):
        print("chain:", doc.page_content, "| targets:", doc.metadata["explanation"]["targets"])
    with tempfile.TemporaryDirectory() as tmp:
        target = args.index_dir or Path(tmp) / "reg-index"
        index.persist(target)
        again = RegIndex.load(target)
        assert [r.text for r in again.retrieve(QUERY)] == [r.text for r in index.retrieve(QUERY)]
        where = target if args.index_dir else "a temporary folder"
        print(f"persisted to {where} and reloaded: same chains")


if __name__ == "__main__":
    main()
