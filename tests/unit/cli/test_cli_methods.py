"""Every registered method through ``index``, ``query`` and ``show``; ``--version``; query
options; the global ``--threads`` / ``--quiet`` / ``--verbose`` options.

The per-method tests iterate the registry, so a new method is covered without editing this
file (with the passage corpus and no options unless ``method_fixtures.index_options`` knows
better; the fixtures are in ``tests/unit/cli/conftest.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import __version__, cli
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.core.threads import apply_thread_limit
from graphrag_integrations.evaluation import registry
from tests.conftest import FakeEmbedder
from tests.unit.cli.method_fixtures import QUESTION, index_options, method_input

ROOT = Path(__file__).resolve().parents[3]


def _int_query_option(reg: MethodRegistration) -> str | None:
    """``NAME=VALUE`` of the first integer query option at its default, if any."""
    defaults = reg.query_params()
    for name in reg.query_params.names():
        value = getattr(defaults, name, None)
        if type(value) is int:
            return f"{name}={value}"
    return None


def _method_params() -> list[Any]:
    return list(registry.method_names())


@pytest.mark.parametrize("method", _method_params())
def test_index_query_show_every_method(
    method: str,
    fake_embedder: FakeEmbedder,
    corpus: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reg = registry.get_registration(method)
    out = tmp_path / "index"
    source = str(method_input(reg, corpus))
    argv = ["index", "--method", method, "--input", source, "--out", str(out)]
    assert cli.main([*argv, *index_options(method, request), "--no-progress"]) == 0
    index_class = registry.get_registration(method).resolve_index_class()
    assert json.loads((out / "manifest.json").read_text())["method"] == index_class.method
    capsys.readouterr()

    assert cli.main(["query", "--index", str(out), QUESTION, "-k", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1 and rows[0]["rank"] == 1 and rows[0]["text"]

    option = _int_query_option(reg)
    if option is not None:  # a query option at its default: validated, bound, same ranking
        argv = ["query", "--index", str(out), QUESTION, "-k", "1", "--json"]
        assert cli.main([*argv, "--option", f"{index_class.method}.{option}"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["text"] == rows[0]["text"]

    page = tmp_path / "q.html"
    argv = ["show", "--index", str(out), QUESTION, "-k", "1", "--out", str(page), "--no-open"]
    assert cli.main(argv) == 0
    assert f"wrote {page} (1 passages)" in capsys.readouterr().out
    assert QUESTION in page.read_text(encoding="utf-8")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first == f"graphrag-integrations {__version__}"
    assert second.startswith("torch ") and ", transformers " in second


@pytest.fixture
def dense_index(fake_embedder: FakeEmbedder, corpus: Path, tmp_path: Path) -> Path:
    out = tmp_path / "dense"
    argv = ["index", "--method", "dense", "--input", str(corpus), "--out", str(out)]
    assert cli.main(argv) == 0
    return out


@pytest.fixture
def qcg_index(fake_embedder: FakeEmbedder, corpus: Path, query_set: Path, tmp_path: Path) -> Path:
    out = tmp_path / "qcg"
    argv = ["index", "--method", "qcg", "--input", str(corpus), "--out", str(out)]
    assert cli.main([*argv, "--option", f"query_set={query_set}", "--no-progress"]) == 0
    return out


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return list(json.loads(capsys.readouterr().out))


def test_query_option_k_sets_the_count_and_call_k_wins(
    dense_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    base = ["query", "--index", str(dense_index), QUESTION, "--json"]
    assert cli.main(base) == 0
    assert len(_rows(capsys)) == 2  # the index's default (5) over 2 passages
    assert cli.main([*base, "--option", "k=1"]) == 0
    assert len(_rows(capsys)) == 1
    assert cli.main([*base, "--option", "dense.k=1", "-k", "2"]) == 0
    assert len(_rows(capsys)) == 2


def test_query_and_show_options_reach_the_retrieval(
    fake_embedder: FakeEmbedder, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hybrid"
    assert cli.main(["index", "--method", "hybrid", "--input", str(corpus), "--out", str(out)]) == 0
    capsys.readouterr()
    base = ["query", "--index", str(out), QUESTION, "--json"]
    assert cli.main(base) == 0
    minmax = [r["score"] for r in _rows(capsys)]
    assert cli.main([*base, "--option", "fusion=rrf", "--option", "hybrid.rrf_k=1"]) == 0
    rrf = [r["score"] for r in _rows(capsys)]
    # RRF with rrf_k=1: at most 0.5 * 1/2 + 0.5 * 1/2 = 0.5; min-max puts the top at 1.0
    assert max(minmax) == pytest.approx(1.0) and max(rrf) <= 0.5
    page = tmp_path / "q.html"
    show = ["show", "--index", str(out), QUESTION, "--out", str(page), "--no-open"]
    assert cli.main([*show, "--option", "k=1"]) == 0
    assert "(1 passages)" in capsys.readouterr().out


def test_qcg_query_option(qcg_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    base = ["query", "--index", str(qcg_index), QUESTION, "--json"]
    assert cli.main([*base, "--option", "h=2", "--option", "qcg.K=1"]) == 0
    assert len(_rows(capsys)) == 1


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("KK=3", "unknown option 'dense.KK'; valid options: k"),
        ("k=0", "option dense.k: must be >= 1, got 0"),
        ("k=x", "option dense.k: expected an integer, got 'x'"),
        ("bm25.k=3", "option bm25.k: this index is dense, not bm25"),
        ("k", "option 'k' is not KEY=VALUE"),
    ],
)
def test_bad_query_options_are_one_line_errors_before_loading(
    option: str,
    message: str,
    dense_index: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.baselines.dense import DenseRetriever

    monkeypatch.setattr(DenseRetriever, "load", lambda *a, **k: pytest.fail("loaded"))
    capsys.readouterr()
    for command in (["query"], ["show", "--no-open"]):
        argv = [*command, "--index", str(dense_index), QUESTION, "--option", option]
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_index_time_option_is_refused_by_query(
    qcg_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    argv = ["query", "--index", str(qcg_index), QUESTION, "--option", "k_neighbors=1"]
    assert cli.main(argv) == 2
    assert "option qcg.k_neighbors is an index-time option" in capsys.readouterr().err


def test_threads_option(dense_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["query", "--index", str(dense_index), QUESTION]) == 0
    assert os.environ["OMP_NUM_THREADS"] == "1"  # the default policy
    try:
        assert cli.main(["--threads", "2", "query", "--index", str(dense_index), QUESTION]) == 0
        assert (os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == ("2", "2")
        if "torch" in sys.modules:
            assert sys.modules["torch"].get_num_threads() == 2
    finally:  # the loaded libraries keep their pools: back to one thread for the next tests
        apply_thread_limit(1)
    with pytest.raises(SystemExit) as exc:
        cli.main(["--threads", "0", "methods"])
    assert exc.value.code == 2


def _run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name in ("TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "graphrag_integrations.cli", *argv]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=ROOT)


@pytest.mark.slow
def test_library_noise_is_silenced_unless_verbose(
    corpus: Path, tiny_lm: Path, tmp_path: Path
) -> None:
    # real commands: MiniLM and the translator make transformers draw "Loading weights" bars,
    # and its generation warns that `past_key_values` is deprecated
    out = tmp_path / "kgt"
    build = _run_cli(
        "index", "--method", "kgt", "--input", str(corpus), "--out", str(out),
        "--option", f"translator={tiny_lm}",
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    assert "Loading weights" not in build.stderr
    query = ["query", "--index", str(out), QUESTION, "-k", "1"]
    quiet = _run_cli(*query)
    assert quiet.returncode == 0, quiet.stderr
    assert "Loading weights" not in quiet.stderr and "deprecated" not in quiet.stderr
    assert "Warning" not in quiet.stderr
    loud = _run_cli("--verbose", *query)
    assert loud.returncode == 0, loud.stderr
    assert "Loading weights" in loud.stderr and "deprecated" in loud.stderr
    assert loud.stdout == quiet.stdout
