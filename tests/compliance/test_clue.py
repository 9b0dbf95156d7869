"""ClueIndex (Q-Iter retrieval) passes the index compliance suite."""

from __future__ import annotations

from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing import IndexComplianceTests


class TestClueCompliance(IndexComplianceTests):
    index_class = ClueIndex
