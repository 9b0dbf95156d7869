"""ReG over a LlamaIndex property graph store (``SimplePropertyGraphStore``).

Users who keep their KG in LlamaIndex hand the store to ``RegIndex.from_property_graph_store``;
its triplets become the ReG KG (entity nodes by name). The index then serves LlamaIndex as a
retriever (``as_llama_index_retriever``) whose nodes are evidence chains with their triples
and scores in the metadata. No scorer is trained here, so the zero-shot order is used (a
warning says so); see ``reg_triples.py`` for training. Offline; run it with::

    python examples/reg_llama_index_property_graph.py
"""

from __future__ import annotations

from llama_index.core.graph_stores import SimplePropertyGraphStore
from llama_index.core.graph_stores.types import EntityNode, Relation

from graphrag_integrations.methods.reg.index import RegIndex

FACTS = [
    ("Marie Curie", "won", "Nobel Prize in Physics"),
    ("Marie Curie", "born_in", "Warsaw"),
    ("Pierre Curie", "married_to", "Marie Curie"),
    ("Pierre Curie", "won", "Nobel Prize in Physics"),
    ("Warsaw", "capital_of", "Poland"),
]


def build_store() -> SimplePropertyGraphStore:
    store = SimplePropertyGraphStore()
    nodes = {name: EntityNode(name=name) for h, _, t in FACTS for name in (h, t)}
    store.upsert_nodes(list(nodes.values()))
    store.upsert_relations(
        [Relation(label=r, source_id=nodes[h].id, target_id=nodes[t].id) for h, r, t in FACTS]
    )
    return store


def main() -> None:
    index = RegIndex.from_property_graph_store(build_store())
    print(f"KG: {index.view.n_triples} triples, {len(index.view.entities)} entities")
    retriever = index.as_llama_index_retriever(similarity_top_k=3)
    for node in retriever.retrieve("In which country was the wife of Pierre Curie born?"):
        print(f"{node.score:6.3f}  {node.node.get_content()}")
        print("        triples:", node.node.metadata["explanation"]["triples"])


if __name__ == "__main__":
    main()
