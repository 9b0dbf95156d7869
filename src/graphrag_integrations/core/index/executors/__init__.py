"""Executors: where the per-document work of a build runs (this process, or Ray workers).

Every method splits its build into a picklable per-batch *preparer* (chunk parses, knowledge
units, embeddings, LLM calls: :class:`~.protocol.Preparer`) and a *merge* into the graph and
vectors, run once, in input order, in the calling process (:class:`~.protocol.SplitBuild`).
``X.from_documents(docs, executor=...)`` chooses who runs the preparer:

* ``None`` or ``"local"`` (the default): this process, exactly as before;
* ``"ray"``: a :class:`~.ray_executor.RayExecutor` with its defaults (``RAY_ADDRESS`` or a
  local Ray); or any :class:`~.protocol.Executor` object, e.g.
  ``RayExecutor(num_workers=2, address="127.0.0.1:6379")``.

The build through an executor (:mod:`~.build`) loads and cuts the documents here, hands
batches of passages to the executor, and merges the results in input order, so the index is
the one of the single-process build. With ``checkpoint_dir`` each prepared batch is saved as it
arrives (:class:`~graphrag_integrations.core.index.checkpoint.PreparedBatches`), so a re-run after a
killed driver prepares only the missing batches.

Examples
--------
>>> resolve_executor(None).name, resolve_executor("local").name
('local', 'local')
>>> resolve_executor("dask")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
graphrag_integrations.errors.InvalidArgumentError: executor must be 'local', 'ray' or ...
"""

from __future__ import annotations

from typing import Any, TypeAlias

from graphrag_integrations.core.index.executors.local import LocalExecutor
from graphrag_integrations.core.index.executors.protocol import Executor, Preparer, SplitBuild
from graphrag_integrations.core.index.executors.ray_executor import RayExecutor
from graphrag_integrations.errors import InvalidArgumentError

__all__ = [
    "EXECUTOR_NAMES",
    "Executor",
    "ExecutorSpec",
    "LocalExecutor",
    "Preparer",
    "RayExecutor",
    "SplitBuild",
    "is_local",
    "resolve_executor",
]

#: ``executor=`` of ``from_documents``: a name of :data:`EXECUTOR_NAMES`, an Executor, or None.
ExecutorSpec: TypeAlias = "str | Executor | None"
#: The executors ``executor=`` (and the CLI's ``--executor``) name.
EXECUTOR_NAMES: tuple[str, ...] = ("local", "ray")


def resolve_executor(value: Any) -> Executor:
    """The executor ``value`` names (see the package notes).

    Raises
    ------
    InvalidArgumentError
        Anything but ``None``, a name of :data:`EXECUTOR_NAMES` or an Executor.
    ImportError
        ``"ray"`` without Ray installed.
    """
    if value is None or value == "local":
        return LocalExecutor()
    if value == "ray":
        return RayExecutor()
    if isinstance(value, Executor) and not isinstance(value, (str, type)):
        return value
    raise InvalidArgumentError(
        f"executor must be 'local', 'ray' or an Executor object, got {value!r}"
    )


def is_local(value: Any) -> bool:
    """Whether ``executor=value`` means today's single-process build (no batches).

    Examples
    --------
    >>> is_local(None), is_local("local"), is_local("ray")
    (True, True, False)
    """
    return value is None or (isinstance(value, str) and value == "local")
