"""``graphrag-integrations show``: the HTML picture of a retrieval (evaluation.show + cli)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders import embeddings
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.evaluation.show import render_html, retrieval_subgraph
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
from tests.unit.clue_fixtures import documents

QUESTION = "Which club did the manager born in Middlesbrough lead to the European Cup?"


class Page(HTMLParser):
    """Collects text by enclosing element class, and every URL-valued attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: dict[str, list[str]] = {}
        self.urls: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        a = dict(attrs)
        for name in ("src", "href", "xlink:href", "action", "data"):
            if a.get(name):
                self.urls.append(str(a[name]))
        if a.get("style") and "url(" in str(a["style"]):
            self.urls.append(str(a["style"]))
        self.stack.append(a.get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        for cls in set(self.stack):
            for part in cls.split():
                self.text.setdefault(part, []).append(data)

    def joined(self, cls: str) -> str:
        return " ".join(self.text.get(cls, []))


@pytest.fixture
def clue_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("spacy")
    fake = FakeEmbedder()
    real = embeddings.as_embedder
    monkeypatch.setattr(
        "graphrag_integrations.methods.clue.index.as_embedder",
        lambda obj=None: fake if obj is None or isinstance(obj, str) else real(obj),
    )
    index = ClueIndex.from_documents(documents(), embedding=fake)
    index.persist(tmp_path / "clue")
    return tmp_path / "clue"


def test_show_writes_a_self_contained_page_of_the_clue_subgraph(
    clue_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or False)
    out = tmp_path / "pic.html"
    args = ["show", "--index", str(clue_dir), QUESTION, "--out", str(out), "-k", "3"]
    assert cli.main(args) == 0
    assert opened == [out.resolve().as_uri()]  # tried to open it; no browser is not an error
    printed = capsys.readouterr().out
    assert f"wrote {out} (3 passages)" in printed and "no browser opened" in printed

    loaded = ClueIndex.load(clue_dir, embedding=FakeEmbedder())
    expected = loaded.retrieve(QUESTION, k=3)
    similarity = loaded.explanation_scores(QUESTION, expected)
    text = out.read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    assert {"svg", "style", "script", "table"} <= page.tags
    assert page.urls == [] or all(u.startswith("#") or u.startswith("url(#") for u in page.urls)
    assert not re.search(r"https?://", text)
    assert "<link" not in text and "@import" not in text
    assert QUESTION in page.joined("question")
    # the top passages, their scores, in order
    rows = page.joined("passage")
    for hit in expected:
        assert " ".join(hit.text.split()[:6]) in " ".join(rows.split())
    scores = [s.strip() for s in page.text["score"]]
    assert scores == [f"{h.score:.4f}" for h in expected]
    # the entities of the explanations, query entities and path entities, and path scores
    entities = page.joined("entity")
    for hit in expected:
        for name in hit.explanation["query_entities"]:
            assert name in entities
        for path in hit.explanation["paths"]:
            for name in path["entities"]:
                assert name in entities
    # every entity and unit node carries its cosine to the question
    assert similarity["entity"] and similarity["unit"]
    for name, score in similarity["entity"].items():
        assert f"{score:.4f}" in entities, name
    for score in similarity["unit"].values():
        assert f"{score:.4f}" in page.joined("unit")
    path_scores = {f"{p['score']:.4f}" for h in expected for p in h.explanation["paths"]}
    assert path_scores and path_scores == {s.strip() for s in page.text["path-score"]}
    assert sum(h.explanation["paths"] != [] for h in expected) >= 1


def test_show_no_open_and_errors(
    clue_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    def boom(*a: Any, **k: Any) -> bool:
        raise AssertionError("must not open a browser")

    monkeypatch.setattr("webbrowser.open", boom)
    out = tmp_path / "sub" / "q.html"
    assert (
        cli.main(["show", "--index", str(clue_dir), "Paris", "--out", str(out), "--no-open"]) == 0
    )
    assert out.is_file()
    capsys.readouterr()
    assert cli.main(["show", "--index", str(tmp_path / "none"), "Paris", "--no-open"]) == 2
    assert "no index" in capsys.readouterr().err
    assert cli.main(["show", "--index", str(clue_dir), "  ", "--no-open"]) == 2
    assert "query is empty" in capsys.readouterr().err


def test_generic_explanations_become_evidence_nodes() -> None:
    p1, p2 = Passage("p1", "Rome is in Italy.", "d1"), Passage("p2", "Italy uses the euro.", "d2")
    hits = [
        RetrievedPassage(
            p1,
            0.7,
            {
                "method": "reg",
                "triples": [["Rome", "in", "Italy"]],
                "triple_scores": [0.65],
                "anchors": ["Rome"],
            },
        ),
        RetrievedPassage(p2, 0.5, {"method": "qcg", "queries": [{"query": "Q?", "s": 0.4}]}),
    ]
    graph = retrieval_subgraph("Where is Rome?", hits)
    evidence = {(n.kind, n.label, n.score) for n in graph.nodes if n.layer == "evidence"}
    assert evidence == {
        ("triples", "Rome | in | Italy", 0.65),
        ("anchors", "Rome", None),
        ("queries", "Q?", 0.4),
    }
    edges = {(e.source, e.target) for e in graph.edges}
    assert ("x:triples:Rome | in | Italy", "p:p1") in edges and ("x:queries:Q?", "p:p2") in edges
    assert ("x:queries:Q?", "p:p1") not in edges
    # no list at all (dense): the question links the passage
    dense = DenseRetriever.from_documents(["Rome is in Italy."], embedding=FakeEmbedder())
    hit = dense.retrieve("Rome", k=1)
    graph = retrieval_subgraph("Rome", hit)
    assert [(e.source, e.target) for e in graph.edges] == [("q", f"p:{hit[0].passage.id}")]
    page = render_html("Rome", hit)
    assert "&quot;method&quot;: &quot;dense&quot;" in page and "Rome is in Italy." in page
