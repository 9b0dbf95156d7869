"""The documentation a newcomer reads: short lines and pages, links that resolve, runnable snippets.

* README lines stay under 300 characters (no paragraph of figures in a table cell);
* every user page (``docs/**/*.md`` outside ``docs/lab/``) has at most 350 lines; the
  phase-by-phase experiment logs live in ``docs/lab/``;
* every relative link of the README, ``docs/`` and ``examples/README.md`` names an existing
  file, and an ``#anchor`` into a Markdown file names one of its headings;
* the demo's answer helpers (``examples/quickstart.py``) behave as their doctests say;
* the README's ``python`` blocks compile, and (``slow``: real models) run top to bottom in one
  fresh interpreter, in a folder where ``examples/`` is the repository's. A block preceded by
  ``<!-- no-run -->`` (one that needs a user's own LLM, say) is skipped.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
LAB = DOCS / "lab"
MAX_README_LINE = 300
MAX_USER_PAGE_LINES = 350

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
NO_RUN = "<!-- no-run -->"


def user_pages() -> list[Path]:
    """Every Markdown page of ``docs/`` a user reads (the lab notes excluded)."""
    return sorted(p for p in DOCS.rglob("*.md") if LAB not in p.parents)


def linked_pages() -> list[Path]:
    """Every Markdown page whose links are checked."""
    return [README, REPO / "examples" / "README.md", *sorted(DOCS.rglob("*.md"))]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed."""
    lines, in_fence = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append(INLINE_CODE.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page (a repeated heading gets ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_fence or not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` that name no file (or no heading of a Markdown file)."""
    broken = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path_part, _, fragment = target.partition("#")
            resolved = (page.parent / path_part).resolve() if path_part else page
            if not resolved.exists():
                broken.append(f"{target} (no file {resolved})")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{target} (no heading #{fragment} in {resolved.name})")
    return broken


def readme_snippets() -> list[str]:
    """The README's ``python`` blocks, in order, without those marked ``<!-- no-run -->``."""
    blocks: list[str] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            previous = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            if previous != NO_RUN:
                blocks.append("\n".join(lines[i + 1 : end]))
            i = end
        i += 1
    return blocks


def test_readme_lines_are_short() -> None:
    long_lines = [
        f"line {n}: {len(line)} characters"
        for n, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) >= MAX_README_LINE
    ]
    assert not long_lines, long_lines


def test_docs_are_split_into_guide_reference_and_lab() -> None:
    assert {p.name for p in DOCS.iterdir() if p.is_dir()} >= {"guide", "reference", "lab"}
    assert {"clue.md", "qcg.md", "kgt.md", "reg.md"} <= {p.name for p in (DOCS / "guide").iterdir()}


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_user_page_is_at_most_350_lines(page: Path) -> None:
    n_lines = len(page.read_text(encoding="utf-8").splitlines())
    assert n_lines <= MAX_USER_PAGE_LINES, f"{n_lines} lines: move experiment logs to docs/lab/"


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_user_page_names_no_shared_data_path_outside_commands(page: Path) -> None:
    # datasets and papers are named; `../shared/...` paths belong in commands and lab notes
    prose = [line for line in prose_lines(page.read_text(encoding="utf-8")) if "../shared/" in line]
    assert not prose, prose


@pytest.mark.parametrize("page", linked_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    assert not broken_links(page)


def test_link_checker_reports_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Some heading: with `code`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#some-heading-with-code) [gone](missing.md) [bad](other.md#nope)\n"
        "[web](https://example.com/x.md) `[code](not-checked.md)`\n"
        "```\n[in a block](not-checked-either.md)\n```\n",
        encoding="utf-8",
    )
    assert [b.split(" ")[0] for b in broken_links(page)] == ["missing.md", "other.md#nope"]


def test_readme_snippets_compile() -> None:
    snippets = readme_snippets()
    assert snippets, "the README has no runnable python block"
    for snippet in snippets:
        ast.parse(snippet)


@pytest.mark.slow
def test_readme_snippets_run(tmp_path: Path) -> None:
    # run where the README's relative paths work (examples/...) but files it writes land in tmp
    (tmp_path / "examples").symlink_to(REPO / "examples")
    script = tmp_path / "readme_snippets.py"
    script.write_text("\n\n".join(readme_snippets()) + "\n", encoding="utf-8")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}
    run_offline([str(script)], tmp_path, env)


def run_offline(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """``python *argv`` in ``cwd`` with the package's ``src`` first on its path and the model
    hubs offline; asserts it succeeds and returns its output."""
    env = {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_quickstart_shows_only_answers_the_passages_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    # registered under its own name: doctest finds a module's tests through sys.modules, where
    # another test may have left a different "quickstart"
    name = "quickstart_under_doctest"
    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / "quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    result = doctest.testmod(module)
    assert result.attempted >= 8 and result.failed == 0


@pytest.mark.slow
def test_demo_shows_passages_paths_and_extracted_answers(tmp_path: Path) -> None:
    script = REPO / "examples" / "quickstart.py"
    argv = [str(script), "--index-dir", str(tmp_path / "index")]
    out = run_offline(argv, tmp_path, dict(os.environ))
    assert "<- via '" in out  # the supporting sentences of each path, with their entities
    assert "answer (extracted from passage" in out
    assert "Georg Philipp Telemann" in out
    assert re.search(r"^gold answer in the top 5 passages for \d of 6 questions$", out, re.M)
    assert "SmolLM2" not in out  # no generated answer unless asked for
