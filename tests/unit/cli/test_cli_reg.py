"""``graphrag-integrations index`` / ``query`` / ``show`` with ReG (``reg`` and ``reg-weak``): a
folder of text documents and a ``.tsv`` triples file (fake embedder, offline spaCy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_integrations import cli
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import MOVIES

DOCS = {
    "curie.txt": "Marie Curie worked in Paris with Pierre Curie. Marie Curie was born in Warsaw.",
    "babbage.txt": "Charles Babbage designed the Analytical Engine in London.",
    "lonely.txt": "Nothing here names two entities at all.",
}


def _index(method: str, source: Path, out: Path, *options: str) -> int:
    argv = ["index", "--method", method, "--input", str(source), "--out", str(out)]
    for option in options:
        argv += ["--option", option]
    return cli.main([*argv, "--no-progress"])


@pytest.mark.parametrize("method", ["reg", "reg-weak"])
def test_index_query_show_a_text_folder(
    method: str, fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    idx = tmp_path / "idx"
    assert _index(method, docs, idx) == 0
    out = capsys.readouterr().out
    assert "indexed 3 passages" in out
    manifest = json.loads((idx / "manifest.json").read_text())
    assert manifest["method"] == "reg"
    query = ["query", "--index", str(idx), "Who designed the Analytical Engine?", "-k", "2"]
    assert cli.main([*query, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert 1 <= len(rows) <= 2
    assert "analytical engine" in rows[0]["text"].lower()
    page = tmp_path / "q.html"
    show = ["show", "--index", str(idx), "Where was Marie Curie born?", "--out", str(page)]
    assert cli.main([*show, "--no-open"]) == 0
    assert "warsaw" in page.read_text(encoding="utf-8").lower()


@pytest.mark.parametrize("method", ["reg", "reg-weak"])
def test_index_query_show_a_tsv_triples_file(
    method: str, fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "movies.tsv"
    kb.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in MOVIES), encoding="utf-8")
    idx = tmp_path / "idx"
    assert _index(method, kb, idx, "preset=paper", "dde_rounds=1") == 0
    capsys.readouterr()
    manifest = json.loads((idx / "manifest.json").read_text())
    assert manifest["parameters"]["triples"] == len(MOVIES)
    assert manifest["parameters"]["index"]["dde_rounds"] == 1
    assert manifest["parameters"]["query"]["K"] == 200  # the paper preset
    query = ["query", "--index", str(idx), "who directed [Kismet]", "-k", "1", "--json"]
    assert cli.main(query) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["text"].startswith("Kismet -> [") and row["anchors"] == ["Kismet"]
    assert row["doc_id"] == "movies.tsv"
    page = tmp_path / "q.html"
    show = ["show", "--index", str(idx), "films starring [Bette Davis]", "--out", str(page)]
    assert cli.main([*show, "--no-open"]) == 0
    assert "Bette Davis" in page.read_text(encoding="utf-8")


def test_index_refuses_query_and_builder_options(
    fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "movies.tsv"
    kb.write_text("Kismet\tdirected_by\tWilliam Dieterle\n", encoding="utf-8")
    assert _index("reg", kb, tmp_path / "a", "max_length=3") == 2
    assert "query-time option" in capsys.readouterr().err
    assert _index("reg", kb, tmp_path / "b", "scorer=weak") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "scorer" in err and err.count("\n") == 1
