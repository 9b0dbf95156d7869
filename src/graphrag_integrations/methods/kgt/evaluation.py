"""Evaluation builder for KG-Translator (``"kgt": "...methods.kgt.evaluation:build"``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage, Retriever


def build(
    passages: list[Passage] | Sequence[Passage],
    embedder: Embedder,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Retriever:
    """Build a :class:`ParseKGTranslatorRetriever` over ``passages``.

    Options: ``translator`` (model path / adapter / ``TransformersLLM``), ``decomposer``,
    any :class:`~graphrag_integrations.methods.kgt.params.IndexParams` or
    :class:`~graphrag_integrations.methods.kgt.params.QueryParams` field, and
    ``preset="paper-<dataset>"`` (e.g. ``"paper-musique"``) for the paper's query settings
    (explicit options still win).

    Examples
    --------
    The presets (``build(passages, embedder, preset="paper-musique")``):

    >>> from graphrag_integrations.methods.kgt.params import PRESETS
    >>> sorted(PRESETS)[:2], PRESETS["paper-musique"].beta
    (['default', 'paper-2wiki'], 5)
    """
    from dataclasses import replace

    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever, split_options
    from graphrag_integrations.methods.kgt.params import PRESETS

    preset = options.pop("preset", None)
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"unknown KG-Translator preset {preset!r}; known: {sorted(PRESETS)}")
        _, query_opts, _ = split_options(options)
        for name in query_opts:
            options.pop(name)
        options["query_params"] = replace(PRESETS[preset], **query_opts)
    return ParseKGTranslatorRetriever.from_passages(
        list(passages), embedding=embedder, show_progress=show_progress, **options
    )
