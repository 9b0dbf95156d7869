"""The Ray executor: batches prepared by Ray actors, on this machine or a cluster.

``RayExecutor().map(prepare, batches)`` starts (or joins) Ray, creates ``num_workers`` actors
that each receive the preparer once (its models load on the first batch, once per worker),
hands each actor its next batch as soon as it returns one (at most two in flight per actor)
and returns the results in input order.

* **Where.** ``address=`` or else the ``RAY_ADDRESS`` environment variable names a running
  cluster (``ray start --head`` ...); without either a local Ray is started with
  ``num_workers`` CPUs (default: all) and shut down after the build. A Ray already
  initialised in the process (``ray.init`` by the caller) is used as it is and left running.
* **Failures.** A killed worker (its process dies) is restarted by Ray (``max_restarts``) and
  the batches it held are run again (``max_task_retries``); an exception raised by the
  preparer itself is raised again here, as it would be by a local build.
* **Workers.** :attr:`RayExecutor.worker_batches` counts the batches each worker (node id,
  process id) prepared in the last :meth:`map` (logged at the end: which nodes did the work).

Ray is imported lazily (the ``distributed`` extra); without it the constructor raises a
one-line ``ImportError`` saying how to install it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from graphrag_integrations.core.index.executors.protocol import BatchDone
from graphrag_integrations.core.progress import LLMProgress
from graphrag_integrations.errors import GraphRAGError

T = TypeVar("T")
R = TypeVar("R")

logger = logging.getLogger(__name__)

#: Passages per batch sent to a worker.
DEFAULT_BATCH_SIZE = 64
#: Batches in flight per worker (one running, one queued: no idle gap between batches).
IN_FLIGHT = 2
INSTALL_HINT = "pip install 'graphrag-integrations[distributed]'"


def _check_int(name: str, value: Any, low: int, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


class _PrepareWorker:
    """A Ray actor: holds the preparer (models load on its first batch) and prepares batches."""

    def __init__(self, prepare: Callable[[Sequence[Any]], Any]) -> None:
        self.prepare = prepare

    def run(self, batch: Sequence[Any]) -> tuple[Any, tuple[str, int]]:
        import ray

        node = ray.get_runtime_context().get_node_id()
        return self.prepare(batch), (str(node), os.getpid())

    def where(self) -> tuple[str, int]:
        """(node id, process id) of this worker."""
        import ray

        return str(ray.get_runtime_context().get_node_id()), os.getpid()


class RayExecutor:
    """Prepare batches on Ray actors (see the module notes).

    Parameters
    ----------
    num_workers : int, optional
        Actors (one CPU each); ``None``: the CPUs of the cluster (or of this machine).
    address : str, optional
        A running cluster (``"127.0.0.1:6379"``, ``"auto"``, ``"ray://..."``); ``None``:
        ``RAY_ADDRESS`` if set, else a local Ray started for the build.
    batch_size : int
        Passages per batch.
    max_restarts : int
        Restarts of a killed worker.
    max_task_retries : int
        Re-runs of a batch whose worker died.
    init_options : dict, optional
        More ``ray.init`` keyword arguments (e.g. ``runtime_env``).

    Raises
    ------
    ImportError
        Ray is not installed (the message says how to install it).
    ValueError
        A count out of range.

    Examples
    --------
    >>> RayExecutor(num_workers=2, batch_size=16)  # doctest: +SKIP
    RayExecutor(num_workers=2, address=None, batch_size=16)
    """

    name = "ray"

    def __init__(
        self,
        num_workers: int | None = None,
        *,
        address: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_restarts: int = 3,
        max_task_retries: int = 3,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if importlib.util.find_spec("ray") is None:
            raise ImportError(f"executor='ray' needs Ray: {INSTALL_HINT}")
        _check_int("num_workers", num_workers, 1, optional=True)
        _check_int("batch_size", batch_size, 1)
        _check_int("max_restarts", max_restarts, 0)
        _check_int("max_task_retries", max_task_retries, 0)
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ValueError(f"address must be a non-empty string, got {address!r}")
        self.num_workers = num_workers
        self.address = address
        self.batch_size = batch_size
        self.max_restarts = max_restarts
        self.max_task_retries = max_task_retries
        self.init_options = dict(init_options or {})
        self.worker_batches: Counter[tuple[str, int]] = Counter()

    def __repr__(self) -> str:
        return (
            f"RayExecutor(num_workers={self.num_workers}, address={self.address!r}, "
            f"batch_size={self.batch_size})"
        )

    def _start(self) -> bool:
        """Initialise Ray unless it is; True when this call started it (and must stop it)."""
        import ray

        if ray.is_initialized():
            return False
        address = self.address or os.environ.get("RAY_ADDRESS") or None
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        options.update(self.init_options)
        if address is None:
            options.setdefault("num_cpus", self.num_workers or os.cpu_count() or 1)
        try:
            ray.init(address=address, **options)
        except ConnectionError as exc:
            raise GraphRAGError(
                f"cannot reach the Ray cluster at {address}: {str(exc).splitlines()[0]}"
            ) from None
        return True

    def _workers(self) -> int:
        import ray

        if self.num_workers is not None:
            return self.num_workers
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        return max(1, int(resources.get("CPU", 1)))

    def map(
        self,
        prepare: Callable[[Sequence[T]], R],
        batches: Sequence[Sequence[T]],
        *,
        done: BatchDone | None = None,
        desc: str = "Preparing",
        show_progress: bool = True,
    ) -> list[R]:
        """Prepare ``batches`` on Ray actors; results in input order (see the module notes)."""
        import ray

        self.worker_batches = Counter()
        if not batches:
            return []
        started = self._start()
        try:
            return self._run(ray, prepare, batches, done, desc, show_progress)
        finally:
            if started:
                ray.shutdown()

    def _run(
        self,
        ray: Any,
        prepare: Callable[[Sequence[T]], R],
        batches: Sequence[Sequence[T]],
        done: BatchDone | None,
        desc: str,
        show_progress: bool,
    ) -> list[R]:
        n_workers = min(self._workers(), len(batches))
        actor_class = ray.remote(
            num_cpus=1, max_restarts=self.max_restarts, max_task_retries=self.max_task_retries
        )(_PrepareWorker)
        # the preparer travels with each actor (a restarted actor gets it again)
        actors = [actor_class.remote(prepare) for _ in range(n_workers)]
        results: list[Any] = [None] * len(batches)
        pending: dict[Any, tuple[int, int]] = {}
        queue = iter(range(len(batches)))

        def submit(worker: int) -> None:
            position = next(queue, None)
            if position is not None:
                ref = actors[worker].run.remote(batches[position])
                pending[ref] = (position, worker)

        start = time.monotonic()
        total = sum(len(b) for b in batches)
        label = f"{desc} (ray, {n_workers} worker{'s' if n_workers > 1 else ''})"
        try:
            with LLMProgress(total, label, unit="passage", enabled=show_progress) as bar:
                for _ in range(IN_FLIGHT):  # one batch per worker first, then a second
                    for worker in range(n_workers):
                        submit(worker)
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    position, worker = pending.pop(ready[0])
                    result, where = self._get(ray, ready[0], position)
                    results[position] = result
                    self.worker_batches[where] += 1
                    if done is not None:
                        done(position, result)
                    bar.update(len(batches[position]))
                    submit(worker)
        finally:
            for actor in actors:
                ray.kill(actor)
        seconds = time.monotonic() - start
        nodes = Counter(node for node, _ in self.worker_batches.elements())
        logger.info(
            "ray: %d passages in %d batches by %d workers on %d node(s) in %.1fs (%.1f "
            "passages/s); batches per node: %s",
            total,
            len(batches),
            len(self.worker_batches),
            len(nodes),
            seconds,
            total / seconds if seconds else 0.0,
            dict(nodes),
        )
        return results

    @staticmethod
    def _get(ray: Any, ref: Any, position: int) -> tuple[Any, tuple[str, int]]:
        """The result of one batch; a preparer's own exception is raised as itself."""
        try:
            value: tuple[Any, tuple[str, int]] = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise GraphRAGError(f"batch {position} failed on Ray: {_first_line(exc)}") from None
        except ray.exceptions.RayError as exc:
            raise GraphRAGError(f"batch {position} failed on Ray: {_first_line(exc)}") from None
        return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
