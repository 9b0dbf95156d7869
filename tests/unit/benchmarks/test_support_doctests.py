"""The examples in the benchmarks' support modules hold (pytest collects doctests from the
package only, not from ``benchmarks/``)."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest
from benchmarks import kgt_records, process_memory, seed_statistics


@pytest.mark.parametrize("module", [kgt_records, process_memory, seed_statistics])
def test_the_module_examples_hold(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
