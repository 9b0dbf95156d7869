"""Which floating-point precision a local model should run in.

``dtype="auto"`` (:class:`~graphrag_integrations.core.llm.TransformersLLM`, KG-Translator's
``translator_dtype``) resolves through :func:`resolve_dtype` to ``"bfloat16"`` where the
hardware computes bfloat16 natively and to ``"float32"`` elsewhere:

* CPU: the x86 flags ``avx512_bf16`` or ``amx_bf16`` (``/proc/cpuinfo``; where that file does
  not exist, torch's ``torch.backends.mkldnn`` bfloat16 check). Without them torch emulates
  bfloat16 matrix products, which is slower than float32 (on an AVX2-only CPU a 300-token
  prompt of SmolLM2-135M took 6.6x the CPU time of float32; docs/reference/llm.md);
* CUDA: ``torch.cuda.is_bf16_supported()`` (compute capability >= 8.0).

The answer is computed once per device type. The resolved name, never ``"auto"``, is what
goes into model names (:func:`precision_suffix`), so response caches and artefact headers
never mix precisions.

``"int8"`` is never chosen by ``"auto"`` (it is lossy): it asks for dynamic int8
quantisation on CPU (:func:`quantize_int8`): the weights of every ``torch.nn.Linear`` are
stored as int8 with one scale per output channel, activations are quantised per batch at run
time, everything else (embeddings, norms, attention) stays float32. On an AVX2-only CPU it
decodes SmolLM2-135M 1.2-1.8x faster than float32 (docs/reference/llm.md); greedy, beam outputs can
differ from float32's. ``"int8-mixed"`` does the same but keeps the layers that suffer most
from per-batch activation scales in float32 (:data:`INT8_FLOAT_LAYERS`: the MLP output
projection ``down_proj``, whose inputs carry the activation outliers): closer to float32, a
little slower than ``"int8"``. ``"int8-smooth"`` quantises every linear layer but first
moves the MLP's activation outliers into the weights (:func:`smooth_activation_outliers`,
SmoothQuant), calibrated on :data:`CALIBRATION_TEXTS`.

``dtype="auto-fast"`` (KG-Translator's default) is ``"auto"`` where bfloat16 is native and
``"int8-smooth"`` on a CPU without it (its next-token agreement with float32 is 73 % against
int8's 48 %, and KG-Translator's R@5 stays within a point of float32's; docs/guide/kgt.md).

Examples
--------
>>> resolve_dtype(None), resolve_dtype("float16")
(None, 'float16')
>>> precision_suffix("bfloat16"), precision_suffix("float32"), precision_suffix(None)
('[bfloat16]', '', '')
>>> precision_suffix("int8")
'[int8]'
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "AUTO",
    "AUTO_FAST",
    "BF16_CPU_FLAGS",
    "DTYPES",
    "INT8_FLOAT_LAYERS",
    "QUANTIZED",
    "SMOOTHED",
    "clear_cache",
    "cpu_flags",
    "cpu_has_native_bf16",
    "precision_suffix",
    "preferred_dtype",
    "quantize_int8",
    "resolve_dtype",
    "smooth_activation_outliers",
    "torch_dtype_name",
]

#: The value resolved to the hardware's preferred exact precision.
AUTO = "auto"
#: The value resolved to the hardware's fastest precision that keeps recall: bfloat16 where it
#: is native, else ``"int8-smooth"`` on the CPU (float32 on other devices).
AUTO_FAST = "auto-fast"
#: The concrete precisions a local model accepts.
DTYPES: frozenset[str] = frozenset(
    {"float32", "bfloat16", "float16", "int8", "int8-mixed", "int8-smooth"}
)
#: Precisions that quantise a float32 model after loading (CPU only).
QUANTIZED: frozenset[str] = frozenset({"int8", "int8-mixed", "int8-smooth"})
#: Quantised precisions that smooth the activations first (:func:`smooth_activation_outliers`).
SMOOTHED: frozenset[str] = frozenset({"int8-smooth"})
#: SmoothQuant's migration strength alpha used by ``"int8-smooth"``.
SMOOTH_ALPHA = 0.8
#: Text the activation ranges of ``"int8-smooth"`` are measured on (any English prose works:
#: the outlier channels of a model's MLP do not depend much on the input).
CALIBRATION_TEXTS: tuple[str, ...] = (
    "The Eiffel Tower, completed in 1889 for the World's Fair, stands on the Champ de Mars in "
    "Paris and was designed by the engineering company of Gustave Eiffel.",
    "Who directed the film that won the Academy Award for Best Picture in 1998, and where was "
    "that director born?",
    "Marie Curie was a Polish and naturalised-French physicist and chemist who conducted "
    "pioneering research on radioactivity; she won Nobel Prizes in physics and chemistry.",
    "The river flows north through the valley, past the old mill and the market town, before "
    "it joins the larger river near the capital of the province.",
    "In 2015 the company moved its headquarters to Seattle, where its founder, a former "
    "teacher, had studied computer science at the University of Washington.",
    "Query: Which university did the author of the novel attend?\nClues: novel@@was written by",
)
#: Per quantised precision, the linear layers (by the last part of their module name) that
#: stay float32.
INT8_FLOAT_LAYERS: dict[str, tuple[str, ...]] = {
    "int8": (),
    "int8-mixed": ("down_proj",),
    "int8-smooth": (),
}
#: CPU flags (``/proc/cpuinfo``) of native bfloat16 arithmetic.
BF16_CPU_FLAGS: frozenset[str] = frozenset({"avx512_bf16", "amx_bf16"})
_CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo: Path = _CPUINFO) -> frozenset[str] | None:
    """The CPU feature flags listed in ``cpuinfo`` (``None`` when it cannot be read).

    Parameters
    ----------
    cpuinfo : Path
        The ``/proc/cpuinfo`` file (Linux).

    Returns
    -------
    frozenset of str or None
        The flags of the first processor listed (``flags`` line on x86, ``Features`` on ARM).
    """
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return None


def _torch_cpu_bf16() -> bool:
    """torch's own check (oneDNN bfloat16 support), for systems without ``/proc/cpuinfo``."""
    try:
        import torch
    except ImportError:
        return False
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else False
    except RuntimeError:  # an op missing from this torch build
        return False


def cpu_has_native_bf16() -> bool:
    """Whether the CPU computes bfloat16 natively (AVX-512 BF16 or AMX).

    Reads the flags of ``/proc/cpuinfo``; where they cannot be read, asks torch (oneDNN).
    """
    flags = cpu_flags()
    if flags is not None:
        return bool(flags & BF16_CPU_FLAGS)
    return _torch_cpu_bf16()


def _cuda_has_bf16() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


@functools.cache
def _preferred(device_type: str) -> str:
    if device_type == "cuda":
        native = _cuda_has_bf16()
    elif device_type == "cpu":
        native = cpu_has_native_bf16()
    else:  # mps, xpu...: no rule measured; float32 is always correct
        native = False
    dtype = "bfloat16" if native else "float32"
    logger.info("preferred exact precision on %s: %s", device_type, dtype)
    return dtype


def preferred_dtype(device: str = "cpu") -> str:
    """The precision ``dtype="auto"`` runs in on ``device``.

    Parameters
    ----------
    device : str
        Torch device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``...); only its type counts.

    Returns
    -------
    str
        ``"bfloat16"`` when the device computes bfloat16 natively (CPU: ``avx512_bf16`` or
        ``amx_bf16``; CUDA: ``torch.cuda.is_bf16_supported()``), else ``"float32"``.
        Computed once per device type (:func:`clear_cache` forgets it).
    """
    return _preferred(device.split(":", 1)[0].strip().lower())


def clear_cache() -> None:
    """Forget the per-device answers of :func:`preferred_dtype` (tests, hot-plugged GPUs)."""
    _preferred.cache_clear()


def resolve_dtype(dtype: str | None, device: str = "cpu") -> str | None:
    """A precision request as a concrete precision.

    Parameters
    ----------
    dtype : str or None
        ``None`` (keep the checkpoint's), ``"auto"`` (:func:`preferred_dtype`), ``"auto-fast"``
        (``"auto"``, but ``"int8-smooth"`` on a CPU without native bfloat16), or one of
        ``"float32"``, ``"bfloat16"``, ``"float16"``, ``"int8"`` (CPU only).
    device : str
        The device the model runs on.

    Returns
    -------
    str or None
        ``None`` or a member of :data:`DTYPES`.

    Raises
    ------
    ValueError
        Any other value, or ``"int8"`` on a device other than the CPU.

    Examples
    --------
    >>> resolve_dtype("int8")
    'int8'
    >>> resolve_dtype("int8", "cuda")
    Traceback (most recent call last):
    ...
    ValueError: dtype='int8' (dynamic int8 quantisation) runs on the CPU only, not on 'cuda'
    """
    if dtype is None:
        return None
    if dtype == AUTO:
        return preferred_dtype(device)
    if dtype == AUTO_FAST:
        exact = preferred_dtype(device)
        on_cpu = device.split(":", 1)[0].strip().lower() == "cpu"
        return "int8-smooth" if exact == "float32" and on_cpu else exact
    if dtype not in DTYPES:
        raise ValueError(
            f"dtype must be one of {sorted(DTYPES | {AUTO, AUTO_FAST})} or None, got {dtype!r}"
        )
    if dtype in QUANTIZED and device.split(":", 1)[0].strip().lower() != "cpu":
        raise ValueError(
            f"dtype={dtype!r} (dynamic int8 quantisation) runs on the CPU only, not on {device!r}"
        )
    return dtype


def torch_dtype_name(dtype: str) -> str:
    """The torch floating-point type a (resolved) precision loads the weights in.

    Examples
    --------
    >>> torch_dtype_name("bfloat16"), torch_dtype_name("int8")
    ('bfloat16', 'float32')
    """
    return "float32" if dtype in QUANTIZED else dtype


def quantize_int8(model: Any, keep_float: tuple[str, ...] = ()) -> Any:
    """Dynamic int8 quantisation of a float32 CPU model's ``torch.nn.Linear`` layers, in place.

    Weights become int8 with one scale per output channel (closer to float32 than one scale
    per tensor, at the same speed), activations are quantised per batch when the layer runs,
    outputs are float32. Lossy for small models: SmolLM2-135M's next-token choice on real
    passages matches float32's at 46 % of positions (docs/reference/llm.md).
    Uses torch's eager dynamic quantisation (``torch.ao.quantization.quantize_dynamic``, the
    ``fbgemm`` / ``x86`` kernels; torch marks the module deprecated in favour of ``torchao``,
    its deprecation warnings are silenced here).

    Parameters
    ----------
    model : torch.nn.Module
        A float32 model on the CPU.
    keep_float : tuple of str
        Linear layers left in float32, by the last part of their module name (e.g.
        ``("down_proj",)``, :data:`INT8_FLOAT_LAYERS`); ``()``: every linear layer.

    Returns
    -------
    torch.nn.Module
        The same model object, its linear layers replaced by dynamically quantised ones.

    Raises
    ------
    RuntimeError
        When this torch build has no dynamic quantisation (use ``"float32"`` instead).
    """
    import warnings

    import torch

    try:
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    except ImportError as exc:  # removed from a future torch
        raise RuntimeError(
            f"dtype='int8' needs torch.ao.quantization.quantize_dynamic, missing in torch "
            f"{torch.__version__}; use dtype='float32'"
        ) from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        spec: dict[Any, Any] = {torch.nn.Linear: per_channel_dynamic_qconfig}
        if keep_float:
            spec = {
                name: per_channel_dynamic_qconfig
                for name, module in model.named_modules()
                if isinstance(module, torch.nn.Linear) and name.rsplit(".", 1)[-1] not in keep_float
            }
        return quantize_dynamic(  # type: ignore[no-untyped-call]
            model, spec, dtype=torch.qint8, inplace=True
        )


def smooth_activation_outliers(
    model: Any,
    tokenizer: Any,
    texts: tuple[str, ...] = CALIBRATION_TEXTS,
    alpha: float = SMOOTH_ALPHA,
) -> int:
    """SmoothQuant for Llama-style decoder layers: move activation outliers into the weights.

    Dynamic int8 gives a whole activation tensor ONE scale, so a few outlier channels flatten
    every other channel to a handful of levels. Per input channel ``j`` of a group of linear
    layers reading the same activation ``X``, dividing ``X_j`` by ``s_j`` where ``X`` is made
    and multiplying the layers' weight column ``j`` by ``s_j`` leaves the function unchanged
    (exactly, up to rounding) and moves the outliers into the weights, which are quantised per
    output channel. ``s_j = max|X_j| ** alpha / max|W_j| ** (1 - alpha)`` (Xiao et al. 2023,
    "SmoothQuant"), ``max|X_j|`` over ``texts``, ``max|W_j|`` over the group's weights. Groups:
    ``q/k/v_proj`` (``X`` made by ``input_layernorm``, whose weight absorbs ``1 / s``),
    ``gate/up_proj`` (``post_attention_layernorm``) and ``down_proj`` (``up_proj``'s output
    rows absorb it, since the MLP multiplies ``act(gate) * up``). Run it on the float32 model
    before quantising.

    Parameters
    ----------
    model : torch.nn.Module
        A float32 causal LM with Llama-style decoder layers (``input_layernorm``,
        ``self_attn.{q,k,v}_proj``, ``post_attention_layernorm``, ``mlp.{gate,up,down}_proj``:
        Llama, Mistral, Qwen2, SmolLM...); changed in place.
    tokenizer
        Its tokenizer.
    texts : tuple of str
        Calibration text.
    alpha : float
        Migration strength in ``[0, 1]`` (0: nothing moves to the weights).

    Returns
    -------
    int
        The number of decoder layers smoothed (``0``: no such layer; the model is unchanged).
    """
    import torch

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    layers = [m for m in model.modules() if _llama_like(m)]
    if not layers:
        return 0
    # per layer: the activations read by q_proj, gate_proj and down_proj
    readers = [(m.self_attn.q_proj, m.mlp.gate_proj, m.mlp.down_proj) for m in layers]
    amax: dict[tuple[int, int], Any] = {}

    def record(key: tuple[int, int]) -> Any:
        def hook(_module: Any, args: tuple[Any, ...]) -> None:
            x = args[0].detach().abs().reshape(-1, args[0].shape[-1]).amax(dim=0).float()
            amax[key] = x if key not in amax else torch.maximum(amax[key], x)

        return hook

    handles = [
        lin.register_forward_pre_hook(record((i, g)))
        for i, group in enumerate(readers)
        for g, lin in enumerate(group)
    ]
    try:
        with torch.inference_mode():
            for text in texts:
                ids = tokenizer(text, return_tensors="pt")["input_ids"]
                model(input_ids=ids.to(next(model.parameters()).device))
    finally:
        for h in handles:
            h.remove()

    def scales(key: tuple[int, int], weights: list[Any]) -> Any:
        w_max = torch.stack([w.abs().amax(dim=0).float() for w in weights]).amax(dim=0)
        s = amax[key].clamp(min=1e-5) ** alpha / w_max.clamp(min=1e-5) ** (1 - alpha)
        return s.clamp(min=1e-5)

    with torch.no_grad():
        for i, m in enumerate(layers):
            attn, mlp = m.self_attn, m.mlp
            qkv = [attn.q_proj, attn.k_proj, attn.v_proj]
            for key, norm, group in (
                ((i, 0), m.input_layernorm, qkv),
                ((i, 1), m.post_attention_layernorm, [mlp.gate_proj, mlp.up_proj]),
            ):
                s = scales(key, [lin.weight for lin in group])
                norm.weight.div_(s.to(norm.weight.dtype))
                for lin in group:
                    lin.weight.mul_(s[None, :].to(lin.weight.dtype))
            s = scales((i, 2), [mlp.down_proj.weight])
            mlp.up_proj.weight.div_(s[:, None].to(mlp.up_proj.weight.dtype))
            if getattr(mlp.up_proj, "bias", None) is not None:
                mlp.up_proj.bias.div_(s.to(mlp.up_proj.bias.dtype))
            mlp.down_proj.weight.mul_(s[None, :].to(mlp.down_proj.weight.dtype))
    return len(layers)


def _llama_like(module: Any) -> bool:
    """A decoder layer :func:`smooth_activation_outliers` can smooth (norms without bias)."""
    import torch

    attn, mlp = getattr(module, "self_attn", None), getattr(module, "mlp", None)
    norms = [getattr(module, n, None) for n in ("input_layernorm", "post_attention_layernorm")]
    names = [(attn, n) for n in ("q_proj", "k_proj", "v_proj")] + [
        (mlp, n) for n in ("gate_proj", "up_proj", "down_proj")
    ]
    return (
        all(isinstance(getattr(o, n, None), torch.nn.Linear) for o, n in names)
        and all(isinstance(getattr(n, "weight", None), torch.Tensor) for n in norms)
        and all(getattr(n, "bias", None) is None for n in norms)
    )


def precision_suffix(dtype: str | None) -> str:
    """The model-name suffix of a (resolved) precision: ``"[bfloat16]"``; none for float32 or
    the checkpoint's own (``None``)."""
    if dtype in (AUTO, AUTO_FAST):
        raise ValueError(f"resolve {dtype!r} (resolve_dtype) before naming a model")
    return "" if dtype in (None, "float32") else f"[{dtype}]"
