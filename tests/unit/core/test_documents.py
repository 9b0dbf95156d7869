"""Tests for core.text.documents: every accepted input, ids, files/folders, bad input."""

from __future__ import annotations

import doctest
import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphrag_integrations.core.text import documents
from graphrag_integrations.core.text.documents import (
    LOAD_OPTIONS,
    LoadReport,
    SourceDocument,
    content_id,
    from_path,
    load_documents,
    pop_load_options,
    read_file,
    require_nonempty,
    to_source_document,
)
from graphrag_integrations.errors import DocumentLoadError, EmptyCorpusError, GraphRAGError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "docs"
CORPUS = FIXTURES / "corpus"


def test_doctests() -> None:
    result = doctest.testmod(documents)
    assert result.attempted > 0
    assert result.failed == 0


# ----------------------------------------------------------------------------- ids


@given(st.lists(st.text(max_size=20), min_size=1, max_size=4))
def test_content_id_is_stable_and_hex(parts: list[str]) -> None:
    cid = content_id(*parts)
    assert cid == content_id(*parts)
    assert len(cid) == 16
    int(cid, 16)


def test_content_id_separates_parts() -> None:
    assert content_id("ab", "c") != content_id("a", "bc")


def test_string_gets_content_hash_id() -> None:
    (doc,) = load_documents(["Paris is in France."])
    assert doc.id == content_id("Paris is in France.")
    assert load_documents(["Paris is in France."])[0].id == doc.id
    assert doc.metadata == {}


def test_user_id_wins() -> None:
    doc = SourceDocument("text", id="mine", metadata={"k": 1})
    assert load_documents([doc]) == [doc]


def test_source_document_rejects_non_str_text() -> None:
    with pytest.raises(DocumentLoadError, match="must be a str"):
        SourceDocument(b"bytes")  # type: ignore[arg-type]


# ---------------------------------------------------------------- framework inputs


def test_langchain_document() -> None:
    from langchain_core.documents import Document

    with_id = Document(page_content="Alpha.", metadata={"source": "x.txt"}, id="lc-1")
    without_id = Document(page_content="Beta.", metadata={"page": 2})
    a, b = load_documents([with_id, without_id])
    assert (a.id, a.text, dict(a.metadata)) == ("lc-1", "Alpha.", {"source": "x.txt"})
    assert b.id == content_id("Beta.")
    assert dict(b.metadata) == {"page": 2}


def test_langchain_document_alone_is_one_input() -> None:
    from langchain_core.documents import Document

    docs = load_documents(Document(page_content="Solo.", id="s"))
    assert [(d.id, d.text) for d in docs] == [("s", "Solo.")]


def test_llama_index_document_and_nodes() -> None:
    from llama_index.core.schema import (
        Document,
        NodeRelationship,
        RelatedNodeInfo,
        TextNode,
    )

    parent = Document(text="Whole text.", id_="parent", metadata={"title": "T"})
    node_a = TextNode(text="Part one.", id_="n1")
    node_b = TextNode(text="Part two.", id_="n2")
    for node in (node_a, node_b):
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="parent")
    orphan = TextNode(text="Orphan.", id_="n3")

    docs = load_documents([parent, node_a, node_b, orphan])
    assert [(d.id, d.text) for d in docs] == [
        ("parent", "Whole text."),
        ("parent", "Part one."),
        ("parent", "Part two."),
        ("n3", "Orphan."),
    ]
    assert docs[0].metadata["title"] == "T"
    assert docs[1].metadata["node_id"] == "n1"
    assert "node_id" not in docs[3].metadata


def test_mapping_inputs() -> None:
    doc = to_source_document(
        {"doc_id": "m1", "page_content": "Body.", "title": "T", "metadata": {"lang": "en"}}
    )
    assert (doc.id, doc.text, dict(doc.metadata)) == ("m1", "Body.", {"title": "T", "lang": "en"})
    with pytest.raises(DocumentLoadError, match="needs one of the keys"):
        to_source_document({"title": "no text"})
    with pytest.raises(DocumentLoadError, match="must be a string"):
        to_source_document({"text": 3})


@pytest.mark.parametrize("bad", [42, b"raw bytes", object()])
def test_unsupported_types_raise(bad: object) -> None:
    with pytest.raises(DocumentLoadError):
        load_documents([bad])


def test_errors_are_catchable_generically() -> None:
    with pytest.raises(GraphRAGError):
        load_documents([1.5])
    with pytest.raises(ValueError):
        load_documents([1.5])


def test_to_source_document_refuses_paths() -> None:
    with pytest.raises(DocumentLoadError, match="is a path"):
        to_source_document(CORPUS / "curie.txt")


def test_generator_input_mixed_with_path() -> None:
    def gen() -> object:
        yield "From a generator."
        yield CORPUS / "curie.txt"
        yield {"text": "From a dict."}

    docs = load_documents(gen())
    assert [d.text.split()[0] for d in docs] == ["From", "Marie", "From"]


# -------------------------------------------------------------------- files, folders


@pytest.mark.parametrize(
    "name",
    [str(CORPUS), str(CORPUS) + "/", str(CORPUS / "curie.txt"), "no_such_file.txt", "./nowhere"],
)
def test_a_string_that_looks_like_a_path_is_refused_not_indexed_as_text(name: str) -> None:
    """Issue 20: ``from_documents("my_docs/")`` indexed the folder name as a passage."""
    for inputs in (name, [name], ["Some text.", name]):
        with pytest.raises(DocumentLoadError) as error:
            load_documents(inputs)
        message = str(error.value)
        assert f"Path({name!r})" in message and "\n" not in message
    with pytest.raises(DocumentLoadError, match="names an existing folder"):
        load_documents(str(CORPUS))
    with pytest.raises(DocumentLoadError, match="looks like a file path"):
        load_documents("no_such_file.txt")


def test_a_path_as_path_or_as_a_source_document_still_works() -> None:
    as_text = str(CORPUS / "curie.txt")
    (doc,) = load_documents([SourceDocument(as_text)])
    assert doc.text == as_text
    (doc,) = load_documents(Path(as_text))
    assert doc.text.startswith("Marie Curie")


@pytest.mark.parametrize("text", ["TCP/IP", "Paris is in France.", "see docs/ and notes.txt"])
def test_text_that_is_not_path_shaped_stays_text(text: str) -> None:
    (doc,) = load_documents(text)
    assert doc.text == text


def test_file_path() -> None:
    (doc,) = load_documents(CORPUS / "curie.txt")
    assert doc.text.startswith("Marie Curie was a physicist")
    assert doc.metadata["source"] == str(CORPUS / "curie.txt")
    assert doc.metadata["file_name"] == "curie.txt"
    assert doc.id == content_id(doc.text)


def test_folder_is_recursive_sorted_and_skips_hidden_other_suffixes_and_blank(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.documents"):
        docs = load_documents(CORPUS)
    assert [d.metadata["file_name"] for d in docs] == ["curie.txt", "rivers.md"]
    assert "dropping empty document" in caplog.text
    assert "blank.txt" in caplog.text


def test_folder_non_recursive_and_pattern() -> None:
    top = [d.metadata["file_name"] for d in from_path(CORPUS, recursive=False)]
    assert top == ["blank.txt", "curie.txt"]  # from_path reads; load_documents cleans
    csv_docs = from_path(CORPUS, pattern="*.csv")
    assert [d.metadata["file_name"] for d in csv_docs] == ["table.csv"]
    assert csv_docs[0].text.startswith("name,city")


def test_path_keyword_accepts_strings_and_lists() -> None:
    one = load_documents(path=str(CORPUS / "nested"))
    assert [d.metadata["file_name"] for d in one] == ["rivers.md"]
    both = load_documents(["Text first."], path=[str(CORPUS / "curie.txt"), CORPUS / "nested"])
    assert [d.text.split()[0] for d in both] == ["Text", "Marie", "#"]


def test_folder_without_matches_warns_and_returns_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "data.bin").write_bytes(b"\x00\x01")
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.documents"):
        assert from_path(tmp_path) == []
    assert "no files matching" in caplog.text


@pytest.mark.parametrize("how", ["inputs", "path"])
def test_missing_path_raises(tmp_path: Path, how: str) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(DocumentLoadError, match=r"nope\.txt"):
        if how == "inputs":
            load_documents([missing])
        else:
            load_documents(path=str(missing))


def test_read_file_on_folder_raises() -> None:
    with pytest.raises(DocumentLoadError, match="is not a file"):
        read_file(CORPUS)


def test_non_utf8_file_names_the_file() -> None:
    bad = FIXTURES / "bad" / "latin1.txt"
    with pytest.raises(DocumentLoadError, match=r"latin1\.txt.*byte 3"):
        load_documents(bad)
    with pytest.raises(DocumentLoadError, match=r"latin1\.txt"):
        load_documents(path=FIXTURES / "bad")


def test_non_utf8_with_replace_or_right_encoding(caplog: pytest.LogCaptureFixture) -> None:
    bad = FIXTURES / "bad" / "latin1.txt"
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.documents"):
        (doc,) = load_documents(bad, errors="replace")
    assert doc.text == "caf\ufffd au lait\n"
    assert "latin1.txt" in caplog.text
    (latin,) = load_documents(bad, encoding="latin-1")
    assert latin.text == "café au lait\n"


def _mixed_folder(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("Alpha is fine.", encoding="utf-8")
    (root / "b.txt").write_bytes(b"caf\xe9 au lait")
    (root / "sub" / "c.md").write_bytes(b"\xff\xfe broken")
    (root / "sub" / "d.md").write_text("Delta is fine.", encoding="utf-8")
    return root


def test_one_bad_file_aborts_a_strict_folder_load(tmp_path: Path) -> None:
    with pytest.raises(DocumentLoadError, match=r"b\.txt.*errors='skip'"):
        load_documents(path=_mixed_folder(tmp_path))


def test_skip_leaves_bad_files_out_and_reports_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _mixed_folder(tmp_path)
    report = LoadReport()
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.documents"):
        docs = load_documents([root], errors="skip", report=report)
    assert [d.text for d in docs] == ["Alpha is fine.", "Delta is fine."]
    assert report.count == 2
    assert [Path(p).name for p, _ in report.skipped] == ["b.txt", "c.md"]
    assert "skipping" in caplog.text and "b.txt" in caplog.text
    assert "skipped 2 of 4 file(s)" in caplog.text
    # a single bad file given directly is skipped too; replace still decodes it
    assert load_documents(root / "b.txt", errors="skip") == []
    assert load_documents(root / "b.txt", errors="replace")[0].text == "caf\ufffd au lait"


def test_unknown_errors_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DocumentLoadError, match="errors must be one of"):
        load_documents(["text"], errors="drop")  # type: ignore[arg-type]


def test_load_options_forward_unchanged(tmp_path: Path) -> None:
    root = _mixed_folder(tmp_path)
    kwargs = {"errors": "skip", "pattern": "*.txt", "k": 3, "embedding": None}
    options = pop_load_options(kwargs)
    assert kwargs == {"k": 3, "embedding": None}
    assert set(options) <= set(LOAD_OPTIONS)
    assert [d.text for d in load_documents(root, **options)] == ["Alpha is fine."]


def test_unknown_encoding() -> None:
    with pytest.raises(DocumentLoadError, match="unknown encoding"):
        read_file(CORPUS / "curie.txt", encoding="no-such-codec")


def test_bom_and_crlf_are_normalised(tmp_path: Path) -> None:
    p = tmp_path / "win.txt"
    p.write_bytes(b"\xef\xbb\xbfline one\r\nline two\rthree")
    (doc,) = load_documents(p)
    assert doc.text == "line one\nline two\nthree"


def test_json_and_jsonl_records() -> None:
    docs = load_documents([FIXTURES / "records" / "records.json"])
    assert [d.id for d in docs[:1]] == ["r1"]
    assert docs[1].id == content_id("Krakow lies on the Vistula.")
    assert [d.metadata["record_index"] for d in docs] == [0, 1, 2]
    assert docs[0].metadata["title"] == "Warsaw"
    assert docs[2].text == "A bare string record."
    assert all(d.metadata["file_name"] == "records.json" for d in docs)

    lines = load_documents(FIXTURES / "records" / "records.jsonl")
    assert (lines[0].id, lines[0].text) == ("l1", "First line record.")
    assert lines[0].metadata["lang"] == "en"
    assert len(lines) == 2


def test_json_folder_needs_pattern() -> None:
    assert from_path(FIXTURES / "records") == []
    assert len(from_path(FIXTURES / "records", pattern="*.json*")) == 5


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.json", "[{", "invalid JSON at line 1"),
        ("broken.jsonl", '{"text": "ok"}\n{nope', r"broken\.jsonl:2: invalid JSON"),
        ("numbers.json", "[1, 2]", "expected a string or an object"),
    ],
)
def test_bad_json(tmp_path: Path, name: str, content: str, message: str) -> None:
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(DocumentLoadError, match=message):
        load_documents(p)


# ------------------------------------------------------------- cleaning, emptiness


def test_empty_documents_dropped_with_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.documents"):
        docs = load_documents(["", "  \n\t", "Real text."])
    assert [d.text for d in docs] == ["Real text."]
    assert caplog.text.count("dropping empty document") == 2


def test_duplicates_dropped_with_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.core.text.documents"):
        docs = load_documents(
            [
                "Same.",
                "Same.",
                SourceDocument("Same.", id="u"),
                SourceDocument("Same.", id="u"),
                SourceDocument("Other.", id="u"),
            ]
        )
    assert [(d.id, d.text) for d in docs] == [
        (content_id("Same."), "Same."),
        ("u", "Same."),
        ("u", "Other."),
    ]
    assert caplog.text.count("dropping duplicate document") == 2
    assert "differ in text" in caplog.text


def test_require_nonempty() -> None:
    docs = load_documents(["x"])
    assert require_nonempty(docs) is docs
    with pytest.raises(EmptyCorpusError, match="no documents"):
        require_nonempty([])
    with pytest.raises(EmptyCorpusError):
        require_nonempty(load_documents(["", "   "]))


def test_five_megabyte_file_loads(tmp_path: Path) -> None:
    # the wall-clock figure is printed by benchmarks/bench_throughput.py (machine-dependent)
    paragraph = "Marie Curie was born in Warsaw. She moved to Paris in 1891.\n\n"
    big = paragraph * (5_000_000 // len(paragraph) + 1)
    p = tmp_path / "big.txt"
    p.write_text(big, encoding="utf-8")
    (doc,) = load_documents(p)
    assert len(doc.text) == len(big) >= 5_000_000
    assert doc.id == content_id(big)
