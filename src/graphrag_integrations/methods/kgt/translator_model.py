"""Which translator LM a KG-Translator index runs: :func:`resolve_translator` (a committed
adapter, a path, a model object or an ``LLMClient``), and how the index names it
(:func:`translator_name`, :func:`translator_dtype`).

Examples
--------
>>> translator_name(None), translator_name("musique-100-b")
('default', 'musique-100-b')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.precision import resolve_dtype


def resolve_translator(translator: Any, *, dtype: str | None = None) -> Any:
    """The translator as an ``LLMClient`` (cache, token accounting) over a causal LM.

    ``None`` or ``"default"``: the committed MuSiQue-100 fold-a adapter; ``"base"``: the untuned
    SmolLM2-135M-Instruct; the name of another committed adapter; a folder written by
    ``train --method kgt`` or any causal LM path; a ``TransformersLLM``; an ``LLMClient``
    over one (kept as given, with its response cache). ``dtype`` is the precision of a
    translator loaded here (by name or path; ``TransformersLLM``'s ``dtype``); a given
    model object keeps its own.

    Raises
    ------
    TypeError
        An object that cannot generate token-level beams.
    """
    from graphrag_integrations.core.llm import LLMClient, TransformersLLM
    from graphrag_integrations.methods.kgt.lora import (
        DEFAULT_TRANSLATOR,
        adapter_path,
        committed_adapters,
    )

    if translator is None or translator == "default":
        translator = adapter_path(DEFAULT_TRANSLATOR)
    elif translator == "base":
        translator = TransformersLLM(dtype=dtype)
    elif isinstance(translator, str) and translator in committed_adapters():
        translator = adapter_path(translator)
    if isinstance(translator, (str, Path)):
        from graphrag_integrations.methods.kgt.training import load_translator

        translator = load_translator(translator, dtype=dtype)
    if isinstance(translator, LLMClient):
        client = translator
    else:
        for attr in ("generate", "tokenizer", "eos_token_id"):
            if not hasattr(type(translator), attr):
                raise TypeError(
                    f"translator must be a model path, a TransformersLLM or an LLMClient over "
                    f"one; {type(translator).__name__} lacks {attr!r}"
                )
        client = LLMClient(translator)
    return client


def translator_name(spec: Any) -> str:
    """The name of the translator ``spec`` (what the index was given) as recorded in a
    manifest: ``"default"`` for ``None``, a name or path as given, else the model's name."""
    if spec is None:
        return "default"
    if isinstance(spec, (str, Path)):
        return str(spec)
    return str(getattr(spec, "model_name", type(spec).__name__))


def translator_dtype(spec: Any, setting: str) -> str | None:
    """The precision the translator ``spec`` runs in, without loading it: ``setting`` (the
    query params' ``translator_dtype``) resolved for one loaded by name or path; a given
    model's own ``dtype`` (``None``: its checkpoint's)."""
    if spec is None or isinstance(spec, (str, Path)):
        return resolve_dtype(setting)
    return getattr(getattr(spec, "llm", spec), "dtype", None)
