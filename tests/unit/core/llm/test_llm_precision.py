"""``dtype="auto"``: bfloat16 where the hardware computes it natively, else float32;
``dtype="auto-fast"``: the same, but int8-smooth on a CPU without native bfloat16."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import precision
from graphrag_integrations.core.llm.precision import (
    cpu_flags,
    cpu_has_native_bf16,
    precision_suffix,
    preferred_dtype,
    resolve_dtype,
    torch_dtype_name,
)

X86_AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\nflags\t: fpu\n"
X86_BF16 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
X86_AMX = "processor\t: 0\nflags\t\t: fpu avx2 amx_tile amx_bf16 amx_int8\n"


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    precision.clear_cache()
    yield
    precision.clear_cache()


def use_cpuinfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str | None) -> None:
    """Point the flag source at a fake ``/proc/cpuinfo`` (``None``: no such file)."""
    path = tmp_path / "cpuinfo"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(precision, "_CPUINFO", path)
    monkeypatch.setattr(precision.cpu_flags, "__defaults__", (path,))


def test_cpu_flags_reads_the_first_processor(tmp_path: Path) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(X86_AVX2, encoding="utf-8")
    assert cpu_flags(path) == frozenset({"fpu", "sse2", "avx", "avx2", "fma"})
    path.write_text("processor\t: 0\nFeatures\t: fp asimd bf16\n", encoding="utf-8")  # ARM
    assert cpu_flags(path) == frozenset({"fp", "asimd", "bf16"})
    assert cpu_flags(tmp_path / "missing") is None
    path.write_text("processor\t: 0\n", encoding="utf-8")
    assert cpu_flags(path) is None


@pytest.mark.parametrize(
    ("cpuinfo", "expected"),
    [(X86_AVX2, "float32"), (X86_BF16, "bfloat16"), (X86_AMX, "bfloat16")],
)
def test_auto_on_cpu_follows_the_bf16_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cpuinfo: str, expected: str
) -> None:
    use_cpuinfo(monkeypatch, tmp_path, cpuinfo)
    assert cpu_has_native_bf16() is (expected == "bfloat16")
    assert preferred_dtype("cpu") == expected
    assert resolve_dtype("auto") == expected
    assert resolve_dtype("auto", "CPU") == expected


@pytest.mark.parametrize(
    ("cpuinfo", "expected"),
    [(X86_AVX2, "int8-smooth"), (X86_BF16, "bfloat16"), (X86_AMX, "bfloat16")],
)
def test_auto_fast_on_cpu_is_bf16_where_native_else_int8_smooth(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cpuinfo: str, expected: str
) -> None:
    use_cpuinfo(monkeypatch, tmp_path, cpuinfo)
    assert resolve_dtype("auto-fast") == expected
    assert resolve_dtype("auto-fast", "CPU") == expected
    assert resolve_dtype("auto-fast", "cpu:0") == expected
    with pytest.raises(ValueError, match="resolve"):
        precision_suffix("auto-fast")


def test_auto_fast_off_the_cpu_is_the_preferred_dtype(monkeypatch: pytest.MonkeyPatch) -> None:
    # never int8 (CPU-only quantisation) on another device: the preferred exact precision
    monkeypatch.setattr(precision, "_cuda_has_bf16", lambda: True)
    assert resolve_dtype("auto-fast", "cuda:1") == "bfloat16" == preferred_dtype("cuda")
    precision.clear_cache()
    monkeypatch.setattr(precision, "_cuda_has_bf16", lambda: False)
    assert resolve_dtype("auto-fast", "cuda") == "float32"
    assert resolve_dtype("auto-fast", "mps") == "float32"


def test_auto_is_resolved_once_per_device_type(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_cpuinfo(monkeypatch, tmp_path, X86_BF16)
    assert preferred_dtype() == "bfloat16"
    (tmp_path / "cpuinfo").write_text(X86_AVX2, encoding="utf-8")
    assert preferred_dtype() == "bfloat16"  # cached: one answer per process
    precision.clear_cache()
    assert preferred_dtype() == "float32"


def test_without_cpuinfo_torch_decides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_cpuinfo(monkeypatch, tmp_path, None)
    monkeypatch.setattr(precision, "_torch_cpu_bf16", lambda: True)
    assert preferred_dtype() == "bfloat16"
    precision.clear_cache()
    monkeypatch.setattr(precision, "_torch_cpu_bf16", lambda: False)
    assert preferred_dtype() == "float32"


def test_cuda_and_other_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "_cuda_has_bf16", lambda: True)
    assert preferred_dtype("cuda:1") == "bfloat16"
    precision.clear_cache()
    monkeypatch.setattr(precision, "_cuda_has_bf16", lambda: False)
    assert preferred_dtype("cuda") == "float32"
    assert preferred_dtype("mps") == "float32"


def test_explicit_values_and_names() -> None:
    assert resolve_dtype(None) is None
    for name in ("float32", "bfloat16", "float16", "int8"):
        assert resolve_dtype(name) == name
    with pytest.raises(ValueError, match="dtype must be one of"):
        resolve_dtype("int4")
    with pytest.raises(ValueError, match="CPU only"):
        resolve_dtype("int8", "cuda:0")
    assert resolve_dtype("int8", "CPU") == "int8"
    assert precision_suffix("int8") == "[int8]"
    assert torch_dtype_name("int8") == "float32"
    assert torch_dtype_name("bfloat16") == "bfloat16"
    assert precision_suffix("bfloat16") == "[bfloat16]"
    assert precision_suffix("float16") == "[float16]"
    assert precision_suffix("float32") == precision_suffix(None) == ""
    with pytest.raises(ValueError, match="resolve"):
        precision_suffix("auto")


def test_auto_never_picks_int8(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for text in (X86_AVX2, X86_BF16, X86_AMX, None):
        precision.clear_cache()
        use_cpuinfo(monkeypatch, tmp_path, text)
        assert resolve_dtype("auto") in ("float32", "bfloat16")
