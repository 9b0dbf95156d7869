"""Every graph method's compliance suite with its graph in a real FalkorDB server.

The classes of the method modules are reached through their modules (``test_clue.X``), so
pytest does not collect the networkx variants a second time here.
"""

from __future__ import annotations

from graphrag_integrations.testing.graph_store_compliance import FalkorDBComplianceTests
from tests.compliance import test_clue, test_kgt, test_qcg, test_reg


class TestClueFalkorDBCompliance(FalkorDBComplianceTests, test_clue.TestClueCompliance):
    pass


class TestQCGFalkorDBCompliance(
    FalkorDBComplianceTests, test_qcg.TestQueryCentricGraphIndexCompliance
):
    pass


class TestKGTFalkorDBCompliance(FalkorDBComplianceTests, test_kgt.TestKGTranslatorCompliance):
    pass


class TestRegFalkorDBCompliance(FalkorDBComplianceTests, test_reg.TestRegCompliance):
    pass
