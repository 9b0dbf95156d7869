"""How many CPU threads one process's numeric libraries (torch, BLAS, OpenMP) may use.

torch and the BLAS under numpy start one intra-op thread per core. On a machine where other
processes compete for those cores (an evaluation beside a build, parallel CI jobs), every
process then spins that many threads, and they wait for each other: on 2 cores, as soon as
one other CPU-bound process ran, a second thread made a MiniLM query and a short SmolLM2
generation 2-5x slower, while on a near-idle machine it gained at most 7 % for those and
1.4x for KG-Translator's batched beam search (``docs/lab/threads.md``). The default is
therefore the cores no other process keeps busy: :func:`free_cores`, the core count less the
1-minute load average (rounded), at least 1: every core on an idle machine, one thread as
soon as the others are taken.

:func:`apply_thread_limit` applies the policy in one place (the CLI and the benchmarks call
it at start): an explicit count wins; otherwise a count the user already set in the
environment (``OMP_NUM_THREADS``) is kept; otherwise :func:`free_cores`. It sets the
environment variables the libraries read when they load and, for those already loaded, torch's
intra-op thread count and (with ``threadpoolctl`` installed) numpy's BLAS / OpenMP pools; it
imports nothing heavy itself.

**Library users get the same default.** :func:`default_thread_limit` runs right before the
package loads a model (a sentence-transformers embedder or cross-encoder, a transformers LM),
once per process, unless the process applied a limit already (the CLI, or the user calling
:func:`apply_thread_limit`). One switch, the environment variable :data:`THREADS_VARIABLE`
(``GRAPHRAG_INTEGRATIONS_THREADS``): unset or ``auto``, the policy above; a number, that many
threads; ``off``, the libraries keep their own counts (torch: one thread per core). Measured:
``benchmarks/bench_library_threads.py`` (``docs/reference/failures.md``).

Examples
--------
>>> env = {}
>>> apply_thread_limit(1, environ=env)
1
>>> env["OMP_NUM_THREADS"], env["MKL_NUM_THREADS"]
('1', '1')
>>> free_cores(cores=2, load=0.2), free_cores(cores=2, load=3.1), free_cores(cores=8, load=2.6)
(2, 1, 5)
>>> apply_thread_limit(None, environ={"OMP_NUM_THREADS": "3"})  # the user's setting stays
3
>>> apply_thread_limit(2, environ={"OMP_NUM_THREADS": "3"})  # an explicit count wins
2
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

from graphrag_integrations.errors import InvalidArgumentError

__all__ = [
    "DEFAULT_THREADS",
    "THREADS_VARIABLE",
    "THREAD_VARIABLES",
    "apply_thread_limit",
    "default_thread_limit",
    "free_cores",
]

#: Intra-op threads where the load cannot be read (measured: docs/lab/threads.md).
DEFAULT_THREADS = 1
#: Environment variables of the thread pools that torch, numpy's BLAS and tokenizers read.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
#: The library default's switch (:func:`default_thread_limit`): ``auto`` (or unset), a
#: thread count, or ``off``.
THREADS_VARIABLE = "GRAPHRAG_INTEGRATIONS_THREADS"


class _Applied:
    """Whether this process has settled its thread counts (and to what: ``None`` for the
    libraries' own, ``GRAPHRAG_INTEGRATIONS_THREADS=off``)."""

    done = False
    threads: int | None = None


_APPLIED = _Applied()


def _env_threads(environ: MutableMapping[str, str]) -> int | None:
    raw = environ.get("OMP_NUM_THREADS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= 1 else None


def free_cores(*, cores: int | None = None, load: float | None = None) -> int:
    """The cores no other process keeps busy: ``cores - round(load)``, at least 1.

    Parameters
    ----------
    cores : int, optional
        Core count (default: the cores this process may run on).
    load : float, optional
        Runnable processes (default: the 1-minute load average; where the platform has
        none, :data:`DEFAULT_THREADS` is returned).
    """
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cores = os.cpu_count() or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            return DEFAULT_THREADS
    return max(1, cores - round(load))


def apply_thread_limit(
    threads: int | None = None, *, environ: MutableMapping[str, str] | None = None
) -> int:
    """Limit this process's numeric libraries to ``threads`` intra-op threads.

    Parameters
    ----------
    threads : int, optional
        Thread count (>= 1). ``None``: ``OMP_NUM_THREADS`` if the environment sets it, else
        :func:`free_cores`.
    environ : mutable mapping, optional
        The environment to update (default ``os.environ``; the libraries read it when they
        load). torch's count is set too when ``environ`` is ``os.environ`` and torch is loaded.

    Returns
    -------
    int
        The thread count applied.

    Raises
    ------
    InvalidArgumentError
        If ``threads`` is not an integer >= 1.
    """
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise InvalidArgumentError(f"threads must be an integer >= 1, got {threads!r}")
    env = os.environ if environ is None else environ
    n = threads if threads is not None else (_env_threads(env) or free_cores())
    if env is os.environ:
        _APPLIED.done, _APPLIED.threads = True, n
    for name in THREAD_VARIABLES:
        env[name] = str(n)
    if env is os.environ:  # libraries already loaded read the variables too late
        torch = sys.modules.get("torch")
        if torch is not None and hasattr(torch, "set_num_threads"):
            torch.set_num_threads(n)
        if "numpy" in sys.modules:  # its BLAS / OpenMP pools, through threadpoolctl if present
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                pass
            else:
                threadpool_limits(n)
    return n


def default_thread_limit(*, environ: MutableMapping[str, str] | None = None) -> int | None:
    """The library default: apply the thread policy once, before the package's first model
    load (module notes); later calls do nothing.

    Parameters
    ----------
    environ : mutable mapping, optional
        Where to read :data:`THREADS_VARIABLE` and write the thread variables (default
        ``os.environ``; another mapping is for tests: the process is not marked as settled).

    Returns
    -------
    int or None
        The thread count in force (``None``: the libraries' own,
        ``GRAPHRAG_INTEGRATIONS_THREADS=off``).

    Raises
    ------
    InvalidArgumentError
        If :data:`THREADS_VARIABLE` is neither ``auto``, ``off`` nor an integer >= 1.

    Examples
    --------
    >>> default_thread_limit(environ={"GRAPHRAG_INTEGRATIONS_THREADS": "off"}) is None
    True
    >>> env = {"GRAPHRAG_INTEGRATIONS_THREADS": "3"}
    >>> default_thread_limit(environ=env), env["OMP_NUM_THREADS"]
    (3, '3')
    """
    real = environ is None
    if real and _APPLIED.done:
        return _APPLIED.threads
    env = os.environ if environ is None else environ
    raw = env.get(THREADS_VARIABLE, "").strip().lower()
    if raw == "off":
        if real:
            _APPLIED.done, _APPLIED.threads = True, None
        return None
    if raw not in ("", "auto") and not (raw.isdigit() and int(raw) >= 1):
        raise InvalidArgumentError(
            f"{THREADS_VARIABLE} must be 'auto', 'off' or an integer >= 1, got {raw!r}"
        )
    return apply_thread_limit(int(raw) if raw.isdigit() else None, environ=env)
