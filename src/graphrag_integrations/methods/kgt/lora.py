"""The committed LoRA translator adapters of KG-Translator (package data, unpacked on use).

``methods/kgt/assets/<name>.tar.xz`` holds a LoRA adapter folder written by
``graphrag-integrations train --method kgt`` (adapter weights in float16, tokenizer,
``kgt_translator.json`` with the provenance: data, fold, steps, times). :func:`adapter_path`
unpacks it once into ``<cache>/kgt/<name>-<sha256 prefix>/`` and returns the folder, which
``ParseKGTranslatorRetriever(translator=...)`` loads.

Examples
--------
>>> DEFAULT_TRANSLATOR, "base" in TRANSLATOR_ALIASES
('musique-100-a', True)
>>> try:
...     adapter_path("nope")
... except FileNotFoundError as exc:
...     print(str(exc).split(";")[0])
no committed KG-Translator adapter 'nope'
"""

from __future__ import annotations

import hashlib
import logging
import tarfile
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

ASSETS = Path(__file__).with_name("assets")
#: Adapter loaded when no translator is given: trained on the first half (fold a) of the
#: MuSiQue-100 questions (evaluate MuSiQue-100 on the other half only).
DEFAULT_TRANSLATOR = "musique-100-a"
#: Translator names that are not paths: ``"base"`` = the untuned SmolLM2-135M-Instruct.
TRANSLATOR_ALIASES = ("base", "default")


def committed_adapters() -> list[str]:
    """Names of the adapters shipped with the package."""
    return sorted(p.name.removesuffix(".tar.xz") for p in ASSETS.glob("*.tar.xz"))


def adapter_path(name: str = DEFAULT_TRANSLATOR, cache_dir: str | Path | None = None) -> Path:
    """The unpacked folder of the committed adapter ``name`` (unpacked once, then reused).

    Raises
    ------
    FileNotFoundError
        No such committed adapter.
    """
    from graphrag_integrations.core.llm.transformers_lm import cache_root

    archive = ASSETS / f"{name}.tar.xz"
    if not archive.is_file():
        raise FileNotFoundError(
            f"no committed KG-Translator adapter {name!r}; available: {committed_adapters()}"
        )
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    target = cache_root(cache_dir) / "kgt" / f"{name}-{digest}"
    if (target / "adapter_config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp, tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
        (folder,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        try:
            folder.rename(target)
        except OSError:  # another process unpacked it first
            if not (target / "adapter_config.json").is_file():
                raise
    logger.info("unpacked KG-Translator adapter %s into %s", name, target)
    return target
