"""Shared helpers for the KG-Translator tests: a tiny offline causal LM with a real BPE tokenizer.

The tokenizer is a byte-level BPE (the GPT-2 / SmolLM2 family: leading-space tokens, merges
across word pieces) trained in a few milliseconds on the test corpus, with ``"@@"`` as one
added token, as in SmolLM2's vocabulary. The model is a randomly initialised 1-layer Llama
(seeded), so decoding-validity tests see arbitrary - but deterministic - preferences.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import CLUE_PROMPT, KGTIndexParams, KGTQueryParams
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS

EXTRA = [
    (
        "Marie Curie",
        "Marie Curie was born in Warsaw. Marie Curie won the Nobel Prize in Physics in 1903. "
        "Pierre Curie married Marie Curie in Paris.",
    ),
    ("Warsaw", "Warsaw is the capital of Poland. The Vistula flows through Warsaw."),
]
KGT_CORPUS = [*CORPUS, *EXTRA]


def documents(items: Sequence[tuple[str, str]] = KGT_CORPUS) -> list[SourceDocument]:
    return [SourceDocument(text=f"{t}\n{body}", id=t, metadata={"title": t}) for t, body in items]


def make_kgt(
    lm: Any,
    items: Sequence[tuple[str, str]] = KGT_CORPUS,
    *,
    decomposer: Any = None,
    graph_store: Any = None,
    **options: Any,
) -> ParseKGTranslatorRetriever:
    """A KG-Translator over ``items`` (the fake embedder, ``lm`` as translator); ``options``
    are fields of the index params, the others (and ``preset``) go to the query params."""
    index_names = {s.name for s in KGTIndexParams.specs()}
    index = {k: v for k, v in options.items() if k in index_names}
    query = {k: v for k, v in options.items() if k not in index_names}
    return ParseKGTranslatorRetriever.from_documents(
        documents(items),
        embedding=FakeEmbedder(),
        translator=lm,
        decomposer=decomposer,
        index_params=KGTIndexParams.from_options(index),
        query_params=KGTQueryParams.from_options(query),
        graph_store=graph_store,
    )


def make_tiny_lm(path: Path, seed: int = 0, vocab_size: int = 600) -> Path:
    """Write a tiny Llama + byte-level BPE tokenizer folder at ``path``; returns ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<eos>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    texts = [body for _, body in KGT_CORPUS] + [CLUE_PROMPT, "Query: Who? ##"]
    backend.train_from_iterator(texts * 3, trainer)
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, eos_token="<eos>", pad_token="<pad>"
    )
    tokenizer.add_tokens(["@@"])
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path
