"""Evaluation: benchmark loaders, metrics, the method registry, the harness and reports.

Submodules are imported on first attribute access, so importing this package is cheap.

Examples
--------
>>> from graphrag_integrations import evaluation
>>> "dense" in evaluation.method_names()
True
"""

from __future__ import annotations

from typing import Any

from graphrag_integrations._lazy import resolve_lazy

_LAZY: dict[str, str] = {
    "Dataset": "graphrag_integrations.evaluation.datasets",
    "Question": "graphrag_integrations.evaluation.datasets",
    "KGDataset": "graphrag_integrations.evaluation.datasets",
    "KGQuestion": "graphrag_integrations.evaluation.datasets",
    "load_dataset": "graphrag_integrations.evaluation.datasets",
    "load_corpus": "graphrag_integrations.evaluation.datasets",
    "load_lihuaworld": "graphrag_integrations.evaluation.datasets",
    "load_metaqa": "graphrag_integrations.evaluation.datasets",
    "get_registration": "graphrag_integrations.evaluation.registry",
    "method_names": "graphrag_integrations.evaluation.registry",
    "register": "graphrag_integrations.evaluation.registry",
    "resolve_method": "graphrag_integrations.evaluation.registry",
    "run_eval": "graphrag_integrations.evaluation.harness",
    "evaluate_retriever": "graphrag_integrations.evaluation.harness",
    "EvalReport": "graphrag_integrations.evaluation.harness",
    "AnswerRanker": "graphrag_integrations.evaluation.harness",
    "EvidenceRanker": "graphrag_integrations.evaluation.harness",
    "format_report": "graphrag_integrations.evaluation.report",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    return resolve_lazy(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted(__all__)
