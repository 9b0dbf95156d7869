"""Compliance cases of the inputs ``from_documents`` and ``insert`` take: strings, LangChain
and LlamaIndex documents, folders (``errors="skip"``), and strings that name a path."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import LoadReport, content_id
from graphrag_integrations.errors import DocumentLoadError
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import (
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES,
    Probe,
    compliance_documents,
)

#: Text of a file that is not valid UTF-8 (Latin-1 bytes), for the ``errors="skip"`` case.
UNDECODABLE = "Caf\u00e9 cr\u00e8me is served in Besan\u00e7on.".encode("latin-1")


class InputCases(ComplianceBase):
    """``from_documents`` from strings and framework documents (ids and metadata kept);
    the document-load options (``errors=``, ``report=``) and path-like strings."""

    def test_from_strings(self, embedder: Any) -> None:
        texts = [d.text for d in CORPUS]
        index = self._build(texts, embedder)
        by_id = {d.id: d.text for d in CORPUS}
        for probe in QUERIES:
            expected = by_id[probe.doc_id]
            hit = self._assert_finds(index, Probe(probe.query, content_id(expected)))
            assert hit.text == expected

    def test_from_langchain_documents_keeps_ids_and_metadata(self, embedder: Any) -> None:
        from langchain_core.documents import Document

        corpus = compliance_documents(source="lc")
        docs = [Document(page_content=d.text, id=d.id, metadata=d.metadata) for d in corpus]
        self._assert_keeps_ids_and_metadata(self._build(docs, embedder), "lc")

    def test_from_llama_index_documents_keeps_ids_and_metadata(self, embedder: Any) -> None:
        from llama_index.core import Document

        corpus = compliance_documents(source="li")
        docs = [Document(text=d.text, id_=d.id, metadata=d.metadata) for d in corpus]
        self._assert_keeps_ids_and_metadata(self._build(docs, embedder), "li")

    def _assert_keeps_ids_and_metadata(self, index: BaseIndex, source: str) -> None:
        """Every probe finds its document (by the framework's id) with its metadata."""
        titles = {d.id: d.title for d in CORPUS}
        for probe in QUERIES:
            hit = self._assert_finds(index, probe)
            assert hit.passage.metadata["title"] == titles[probe.doc_id]
            assert hit.passage.metadata["source"] == source

    # -- document-load options ----------------------------------------------------------------
    def test_undecodable_files_are_skipped_with_errors_skip(
        self, embedder: Any, tmp_path: Path
    ) -> None:
        folder = tmp_path / "docs"
        folder.mkdir()
        for d in CORPUS:
            (folder / f"{d.id}.txt").write_text(d.text, encoding="utf-8")
        (folder / "latin1.txt").write_bytes(UNDECODABLE)
        with pytest.raises(DocumentLoadError, match=r"latin1\.txt"):
            self._build([folder], embedder)
        report = LoadReport()
        index = self._build([folder], embedder, errors="skip", report=report)
        assert [Path(path).name for path, _ in report.skipped] == ["latin1.txt"]
        hits = index.retrieve(QUERIES[0].query, k=len(CORPUS))
        assert sorted(h.passage.metadata["file_name"] for h in hits) == sorted(
            f"{d.id}.txt" for d in CORPUS
        )
        by_id = {d.id: d.text for d in CORPUS}
        for probe in QUERIES:
            self._assert_finds(index, Probe(probe.query, content_id(by_id[probe.doc_id])))
        # insert takes the same options
        more = tmp_path / "more"
        more.mkdir()
        (more / "tokyo.txt").write_text(EXTRA.text, encoding="utf-8")
        (more / "latin1.txt").write_bytes(UNDECODABLE)
        report = LoadReport()
        assert index.insert([more], errors="skip", report=report) == [content_id(EXTRA.text)]
        assert report.count == 1
        self._assert_finds(index, Probe(EXTRA_QUERY.query, content_id(EXTRA.text)))

    def test_a_string_naming_a_path_is_refused_not_indexed_as_text(
        self, index: BaseIndex, embedder: Any, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        folder.mkdir()
        for d in CORPUS[:2]:
            (folder / f"{d.id}.txt").write_text(d.text, encoding="utf-8")
        names = [f"{folder}/", str(folder), str(folder / "paris.txt"), "no_such_file.txt"]
        for name in names:
            with pytest.raises(DocumentLoadError, match=re.escape(f"Path({name!r})")):
                self._build(name, embedder)
        before = index.doc_ids()
        with pytest.raises(DocumentLoadError, match=re.escape(f"Path({str(folder)!r})")):
            index.insert([str(folder)])
        assert index.doc_ids() == before
