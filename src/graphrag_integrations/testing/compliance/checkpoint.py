"""The compliance case of checkpointed builds
(:mod:`~graphrag_integrations.core.index.checkpoint`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.checkpoint import INDEX_FOLDER, read_checkpoint
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import CORPUS


class CheckpointCases(ComplianceBase):
    """A checkpointed build killed in its second batch resumes from the first."""

    def test_an_interrupted_checkpointed_build_resumes(
        self, documents: list[SourceDocument], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        every = 4
        whole = self._build(
            documents,
            self.make_embedder(),
            checkpoint_dir=tmp_path / "whole",
            checkpoint_every=every,
        )

        class Killed(Exception):
            pass

        persist = self.index_class.persist
        calls: list[Path] = []

        def killed(index: BaseIndex, path: Path, **kwargs: Any) -> None:
            calls.append(path)
            if len(calls) > 1:  # the second batch is built, the process dies before saving it
                raise Killed("killed during the second batch")
            persist(index, path, **kwargs)

        monkeypatch.setattr(self.index_class, "persist", killed)
        with pytest.raises(Killed):
            self._build(
                documents,
                self.make_embedder(),
                checkpoint_dir=tmp_path / "ckpt",
                checkpoint_every=every,
            )
        monkeypatch.undo()
        assert read_checkpoint(tmp_path / "ckpt")["done"] == [d.id for d in documents[:every]]
        resumed = self._build(
            documents,
            self.make_embedder(),
            checkpoint_dir=tmp_path / "ckpt",
            checkpoint_every=every,
        )
        assert read_checkpoint(tmp_path / "ckpt")["done"] == [d.id for d in documents]
        self._assert_same_answers(
            self._answers(resumed, k=len(CORPUS)), self._answers(whole, k=len(CORPUS))
        )
        loaded = self.load_index(tmp_path / "ckpt" / INDEX_FOLDER, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(whole))
