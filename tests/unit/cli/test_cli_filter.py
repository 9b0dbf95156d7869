"""``query`` and ``show`` take ``--filter JSON``: the answer of the matching passages only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_integrations import cli
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance.boundary import (
    TENANT_QUERIES,
    leaked,
    tenant_documents,
)

TENANT_A = '{"tenant": "A"}'


@pytest.fixture(scope="module")
def clue_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Clue index (default offline models) of two tenants whose documents share entities."""
    out = tmp_path_factory.mktemp("clue") / "idx"
    ClueIndex.from_documents(tenant_documents()).persist(out)
    return out


def test_query_with_a_filter_prints_only_the_matching_passages(
    clue_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for question in TENANT_QUERIES:
        args = ["query", "--index", str(clue_dir), question, "-k", "4", "--json"]
        assert cli.main([*args, "--filter", TENANT_A]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert rows and all(row["tenant"] == "A" for row in rows)
        assert not leaked(rows), (question, leaked(rows))
        assert cli.main(["query", "--index", str(clue_dir), question, "--filter", TENANT_A]) == 0
        assert not leaked(capsys.readouterr().out)
    # without the filter the other tenant's passages answer too: the filter did the work
    assert cli.main(["query", "--index", str(clue_dir), TENANT_QUERIES[0], "-k", "6"]) == 0
    assert leaked(capsys.readouterr().out)


def test_show_with_a_filter_draws_only_the_matching_passages(
    clue_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    args = ["show", "--index", str(clue_dir), TENANT_QUERIES[0], "--out", str(page), "--no-open"]
    assert cli.main([*args, "--filter", TENANT_A]) == 0
    html = page.read_text(encoding="utf-8")
    assert not leaked(html)
    assert "filter: " in html  # the filter is named on the page
    assert cli.main(args) == 0
    assert leaked(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{tenant: A}", "error: --filter: not JSON (Expecting property name"),
        ('["tenant", "A"]', "error: --filter takes a JSON object"),
        ('{"year": {"$around": 2000}}', "error: --filter: unknown filter operator '$around'"),
        ('{"year": {"$in": []}}', "error: --filter: filter value of 'year' (in) must be"),
    ],
)
@pytest.mark.parametrize("command", ["query", "show"])
def test_a_bad_filter_is_a_one_line_error_before_the_index_is_read(
    command: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-index-here"  # never read: the filter is checked first
    args = [command, "--index", str(missing), "Who?", "--filter", value]
    assert cli.main([*args, "--no-open"] if command == "show" else args) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert err.count("\n") == 1
