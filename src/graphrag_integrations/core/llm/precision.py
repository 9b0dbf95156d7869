"""Which floating-point precision a local model should run in.

``dtype="auto"`` (:class:`~graphrag_integrations.core.llm.TransformersLLM`, KG-Translator's
``translator_dtype``) resolves through :func:`resolve_dtype` to ``"bfloat16"`` where the
hardware computes bfloat16 natively and to ``"float32"`` elsewhere:

* CPU: the x86 flags ``avx512_bf16`` or ``amx_bf16`` (``/proc/cpuinfo``; where that file does
  not exist, torch's ``torch.backends.mkldnn`` bfloat16 check). Without them torch emulates
  bfloat16 matrix products, which is slower than float32 (on an AVX2-only CPU a 300-token
  prompt of SmolLM2-135M took 6.6x the CPU time of float32; docs/llm.md);
* CUDA: ``torch.cuda.is_bf16_supported()`` (compute capability >= 8.0).

The answer is computed once per device type. The resolved name, never ``"auto"``, is what
goes into model names (:func:`precision_suffix`), so response caches and artefact headers
never mix precisions.

``"int8"`` is never chosen by ``"auto"`` (it is lossy): it asks for dynamic int8
quantisation on CPU (:func:`quantize_int8`): the weights of every ``torch.nn.Linear`` are
stored as int8 with one scale per output channel, activations are quantised per batch at run
time, everything else (embeddings, norms, attention) stays float32. On an AVX2-only CPU it
decodes SmolLM2-135M 1.2-1.8x faster than float32 (docs/llm.md); greedy and beam outputs can
differ from float32's. ``"int8-mixed"`` does the same but keeps the layers that suffer most
from per-batch activation scales in float32 (:data:`INT8_FLOAT_LAYERS`: the MLP output
projection ``down_proj``, whose inputs carry the activation outliers): closer to float32, a
little slower than ``"int8"``.

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
    "BF16_CPU_FLAGS",
    "DTYPES",
    "INT8_FLOAT_LAYERS",
    "QUANTIZED",
    "clear_cache",
    "cpu_flags",
    "cpu_has_native_bf16",
    "precision_suffix",
    "preferred_dtype",
    "quantize_int8",
    "resolve_dtype",
    "torch_dtype_name",
]

#: The value resolved to the hardware's preferred precision.
AUTO = "auto"
#: The concrete precisions a local model accepts.
DTYPES: frozenset[str] = frozenset({"float32", "bfloat16", "float16", "int8", "int8-mixed"})
#: Precisions that quantise a float32 model after loading (CPU only).
QUANTIZED: frozenset[str] = frozenset({"int8", "int8-mixed"})
#: Per quantised precision, the linear layers (by the last part of their module name) that
#: stay float32.
INT8_FLOAT_LAYERS: dict[str, tuple[str, ...]] = {"int8": (), "int8-mixed": ("down_proj",)}
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
    logger.info("dtype='auto' on %s: %s", device_type, dtype)
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
        ``None`` (keep the checkpoint's), ``"auto"`` (:func:`preferred_dtype`), or one of
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
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES | {AUTO})} or None, got {dtype!r}")
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
    passages matches float32's at 46 % of positions (docs/llm.md).
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


def precision_suffix(dtype: str | None) -> str:
    """The model-name suffix of a (resolved) precision: ``"[bfloat16]"``; none for float32 or
    the checkpoint's own (``None``)."""
    if dtype == AUTO:
        raise ValueError("resolve 'auto' (resolve_dtype) before naming a model")
    return "" if dtype in (None, "float32") else f"[{dtype}]"
