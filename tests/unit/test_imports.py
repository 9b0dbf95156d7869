"""Import tests: the top level is light and exposes the public names lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import graphrag_integrations as gi


def test_version() -> None:
    assert gi.__version__ == "0.1.0"


def test_import_is_lazy_and_fast() -> None:
    code = (
        "import sys, time; t = time.perf_counter(); import graphrag_integrations; "
        "dt = time.perf_counter() - t; heavy = [m for m in ('torch', 'spacy', 'chromadb', "
        "'langchain_core', 'llama_index', 'transformers') if m in sys.modules]; "
        "print(dt, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt_s, heavy = out.stdout.strip().split(" ", 1)
    assert float(dt_s) < 1.0
    assert heavy == "[]"


@pytest.mark.parametrize(
    "package",
    [
        "graphrag_integrations",
        "graphrag_integrations.evaluation",
        "graphrag_integrations.core.constraints",
    ],
)
def test_unknown_attribute_is_an_attribute_error_naming_the_package(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'DoesNotExist'"):
        _ = module.DoesNotExist
    assert not hasattr(module, "DoesNotExist")


def test_subpackage_lazy_names_resolve_and_are_cached() -> None:
    import graphrag_integrations.evaluation as evaluation

    for name in evaluation.__all__:
        value = getattr(evaluation, name)
        assert vars(evaluation)[name] is value, name


def test_every_public_name_resolves() -> None:
    import importlib.util

    for name in gi.__all__:
        module = gi._LAZY.get(name)
        if module is not None and importlib.util.find_spec(module) is None:
            raise AssertionError(f"{name}: module {module} is missing")
        assert getattr(gi, name) is not None, name
