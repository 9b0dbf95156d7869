"""Import contracts (pyproject ``[tool.importlinter]``): the package keeps them, and they catch
a deliberately bad import graph.

The contracts are run by ``lint-imports`` itself (a subprocess), once on this checkout and then
on a tiny fake package laid out like ``graphrag_integrations`` with one bad import added per
case, so a contract that stopped checking what docs/reference/architecture.md says would fail here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphrag_integrations

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(graphrag_integrations.__file__).resolve().parent
FAKE = "gi_layers_fake"
# contract ids in pyproject order (named in docs/reference/architecture.md); a dropped one fails
CONTRACT_IDS = (
    "layers",
    "methods-independent",
    "core-index-on-top",
    "core-subjects-independent",
    "core-encoders-below",
    "acyclic",
)


def _lint_imports() -> list[str]:
    script = Path(sys.executable).with_name("lint-imports")
    if script.exists():
        return [str(script)]
    found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports not found: install the dev extra (import-linter)")
    return [found]


def _importlinter_config() -> str:
    """The ``[tool.importlinter]`` part of pyproject.toml, verbatim."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.importlinter]")
    rest = text[start:]
    others = [m.start() for m in re.finditer(r"^\[(?!\[?tool\.importlinter)", rest, re.M)]
    return rest[: others[0]] if others else rest


def _contract_names(config: str) -> dict[str, str]:
    found = re.findall(r'^id = "([^"]+)"\s*\nname = "([^"]+)"', config, re.M)
    return dict(found)


def _run(config_path: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(pythonpath),
        "COLUMNS": "400",  # one line per contract result
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [*_lint_imports(), "--config", str(config_path), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=config_path.parent,
        timeout=120,
    )


def _broken(out: subprocess.CompletedProcess[str], names: dict[str, str]) -> set[str]:
    """Ids of the contracts lint-imports reports as broken (each must be reported)."""
    broken = set()
    for contract_id, name in names.items():
        kept = re.search(rf"^{re.escape(name)} KEPT$", out.stdout, re.M)
        failed = re.search(rf"^{re.escape(name)} BROKEN$", out.stdout, re.M)
        assert bool(kept) != bool(failed), f"no verdict for {name!r}:\n{out.stdout}{out.stderr}"
        if failed:
            broken.add(contract_id)
    return broken


def test_contracts_are_the_documented_ones() -> None:
    config = _importlinter_config()
    assert tuple(_contract_names(config)) == CONTRACT_IDS
    assert 'root_package = "graphrag_integrations"' in config
    assert "exclude_type_checking_imports" not in config  # TYPE_CHECKING imports count
    architecture = (ROOT / "docs" / "reference" / "architecture.md").read_text(encoding="utf-8")
    for contract_id in CONTRACT_IDS:
        assert f"**`{contract_id}`**" in architecture


def test_package_keeps_the_import_contracts(tmp_path: Path) -> None:
    config = tmp_path / "importlinter.toml"
    config.write_text(_importlinter_config(), encoding="utf-8")
    out = _run(config, PACKAGE_DIR.parent)
    names = _contract_names(config.read_text(encoding="utf-8"))
    assert _broken(out, names) == set(), out.stdout
    assert out.returncode == 0, out.stdout + out.stderr


# -- a fake package with the same layout, so each contract can be shown to bite ----------------
_CLEAN_TREE = {
    "__init__": "",
    "errors": "",
    "_lazy": "",
    "cli": f"from {FAKE} import evaluation",
    "testing/__init__": f"from {FAKE} import evaluation, methods",
    "evaluation/__init__": f"from {FAKE} import baselines, methods",
    "baselines/__init__": f"from {FAKE} import adapters",
    "methods/__init__": "",
    "methods/clue/__init__": f"from {FAKE}.methods.clue import graph",
    "methods/clue/graph": f"from {FAKE}.methods.clue import stores\nfrom {FAKE} import adapters",
    "methods/clue/stores": f"from {FAKE} import core",
    "methods/other/__init__": f"from {FAKE} import core",
    "methods/reg/__init__": f"from {FAKE} import core",
    "methods/kgt/__init__": f"from {FAKE} import core",
    "adapters/__init__": f"from {FAKE} import core",
    "core/__init__": f"from {FAKE} import _lazy, errors",
    # core by subject: index on top, encoders at the bottom
    "core/registry": f"from {FAKE}.core import index",
    "core/index/__init__": f"from {FAKE}.core import graph, text, retrieval, vector_store",
    "core/graph/__init__": f"from {FAKE}.core import persistence",
    "core/text/__init__": f"from {FAKE}.core import encoders",
    "core/retrieval/__init__": f"from {FAKE}.core import encoders",
    "core/vector_store/__init__": f"from {FAKE}.core import graph, retrieval",
    "core/llm/__init__": f"from {FAKE}.core import constraints, encoders",
    "core/persistence/__init__": f"from {FAKE}.core import encoders",
    "core/constraints/__init__": "",
    "core/encoders/__init__": "",
}

# case -> (module, extra source, the contracts it must break): an upward import that closes a
# loop between two top-level packages is a cycle as well as a layer breach
_VIOLATIONS: dict[str, tuple[str, str, set[str]]] = {
    "core imports adapters": (
        "core/__init__",
        f"from {FAKE} import adapters",
        {"layers", "acyclic"},
    ),
    "baselines import a method": ("baselines/__init__", f"from {FAKE} import methods", {"layers"}),
    "testing imports cli": ("testing/__init__", f"from {FAKE} import cli", {"layers"}),
    "errors imports core inside a function": (
        "errors",
        f"def f() -> None:\n    from {FAKE} import core\n",
        {"layers", "acyclic"},
    ),
    "core imports evaluation under TYPE_CHECKING": (
        "core/__init__",
        f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from {FAKE} import evaluation\n",
        {"layers", "acyclic"},
    ),
    "a method imports another": (
        "methods/other/__init__",
        f"from {FAKE}.methods.clue import stores",
        {"methods-independent"},
    ),
    "the core's graph subpackage imports index": (
        "core/graph/__init__",
        f"from {FAKE}.core import index",
        # index imports text and retrieval: graph now reaches them through it
        {"core-index-on-top", "core-subjects-independent", "acyclic"},
    ),
    "core text imports graph": (
        "core/text/__init__",
        f"from {FAKE}.core import graph",
        {"core-subjects-independent"},
    ),
    "core encoders import text": (
        "core/encoders/__init__",
        f"def f() -> None:\n    from {FAKE}.core import text\n",
        # retrieval reaches text through encoders
        {"core-encoders-below", "core-subjects-independent", "acyclic"},
    ),
    "core llm imports the registry": (
        "core/llm/__init__",
        f"from {FAKE}.core import registry",
        {"core-index-on-top"},
    ),
    "a cycle inside a method package": (
        "methods/clue/stores",
        f"from {FAKE}.methods.clue import graph",
        {"acyclic"},
    ),
}


def _fake_package(root: Path, extra: tuple[str, str] | None = None) -> Path:
    files = dict(_CLEAN_TREE)
    if extra is not None:
        module, source = extra
        files[module] = files[module] + "\n" + source
    for module, source in files.items():
        path = root / FAKE / f"{module}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source + "\n", encoding="utf-8")
    config = _importlinter_config().replace("graphrag_integrations", FAKE)
    # a second method, listed the way a new method adds its line
    config = config.replace(
        f'"{FAKE}.methods.clue",', f'"{FAKE}.methods.clue",\n    "{FAKE}.methods.other",'
    )
    assert f'"{FAKE}.methods.other"' in config
    # every method the real contract lists exists in the fake tree (import-linter needs it)
    for name in re.findall(rf'"{FAKE}\.methods\.(\w+)"', config):
        init = root / FAKE / "methods" / name / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f"from {FAKE} import core\n", encoding="utf-8")
    path = root / "importlinter.toml"
    path.write_text(config, encoding="utf-8")
    return path


def test_fake_package_without_violations_keeps_every_contract(tmp_path: Path) -> None:
    config = _fake_package(tmp_path)
    out = _run(config, tmp_path)
    assert _broken(out, _contract_names(config.read_text(encoding="utf-8"))) == set(), out.stdout


@pytest.mark.parametrize("case", sorted(_VIOLATIONS))
def test_contract_catches_a_bad_import(case: str, tmp_path: Path) -> None:
    module, source, contracts = _VIOLATIONS[case]
    config = _fake_package(tmp_path, (module, source))
    out = _run(config, tmp_path)
    broken = _broken(out, _contract_names(config.read_text(encoding="utf-8")))
    assert broken == contracts, out.stdout
    assert out.returncode != 0


def test_independence_contract_refuses_a_missing_module(tmp_path: Path) -> None:
    # why a planned method is not listed before its package exists
    config = _fake_package(tmp_path)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace(
            f'"{FAKE}.methods.other",', f'"{FAKE}.methods.other",\n    "{FAKE}.methods.planned",'
        ),
        encoding="utf-8",
    )
    out = _run(config, tmp_path)
    assert out.returncode != 0
    assert f"Module '{FAKE}.methods.planned' does not exist" in out.stdout + out.stderr
