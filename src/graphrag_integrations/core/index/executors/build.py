"""A build through an executor: load and cut here, prepare in batches there, merge here.

:func:`distributable` wraps every ``from_documents`` (``BaseIndex.__init_subclass__`` does it,
with the checkpoint wrapper inside), so ``executor=`` works for every index:

* ``executor=None`` / ``"local"``: the call goes on unchanged (today's single-process build);
* anything else (``"ray"``, an :class:`~.protocol.Executor`): :func:`build_with_executor`.
  The documents are loaded and cut into passages in this process (the same passages and ids
  as a local build), cut into batches of ``executor.batch_size`` passages in input order,
  prepared by the executor with the index's :meth:`~.protocol.SplitBuild.preparer`, and
  merged once, in input order, with :meth:`~.protocol.SplitBuild.merge`.

Three optional hooks of the index class: ``cls.for_build(**constructor)`` makes the empty
index (default ``cls(**constructor)``); ``cls.executor_sources(documents) -> (documents,
setup)`` keeps the documents that are not text for the driver (``setup(index)`` adds them to
the new index before the merge: ReG's ``.tsv`` / ``.csv`` triple files), and
``index.check_built()`` refuses, after the merge of a fresh build, an index with nothing to
query (ReG without a triple: ``EmptyCorpusError``, as its local build).

With ``checkpoint_dir=DIR``, ``DIR/checkpoint.json`` records the method and settings (as the
local checkpointed build does: :mod:`~graphrag_integrations.core.index.checkpoint`) and each
prepared batch is saved in ``DIR/prepared/`` the moment it arrives; a re-run with the same
arguments after a killed driver loads the saved batches and prepares only the others. Once
merged, the index is saved in ``DIR/index`` and the checkpoint lists every document, so a
further re-run loads it. With the graph in a database (FalkorDB), the checkpoint lists the
documents as ``pending`` before the merge writes that graph; a re-run after a driver killed
between the merge and the save removes their provenance from it first
(:func:`~graphrag_integrations.core.index.rollback.roll_back_graph`), then merges again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from graphrag_integrations.core import batching
from graphrag_integrations.core.index.building import DEFAULT_SPLITTER, pop_splitter
from graphrag_integrations.core.index.checkpoint import (
    CHECKPOINT_FILE,
    EMPTY_GRAPH_KEY,
    INDEX_FOLDER,
    PENDING_KEY,
    PreparedBatches,
    checkpoint_settings,
    prepared_state,
    read_checkpoint,
    resume_state,
    write_checkpoint,
)
from graphrag_integrations.core.index.executors import Executor, is_local, resolve_executor
from graphrag_integrations.core.index.rollback import database_location, roll_back_graph
from graphrag_integrations.core.persistence import MANIFEST_NAME
from graphrag_integrations.core.progress import ProgressSetting, auto_progress
from graphrag_integrations.core.text.chunking import split_documents
from graphrag_integrations.core.text.documents import (
    load_documents,
    pop_load_options,
    require_nonempty,
)
from graphrag_integrations.errors import (
    EmptyCorpusError,
    IndexExistsError,
    InvalidArgumentError,
)

logger = logging.getLogger(__name__)

__all__ = ["build_with_executor", "distributable"]


def check_split_build(cls: Any, executor: Executor) -> None:
    """Refuse (one line) an index class whose build is not split into prepare / merge."""
    if not (callable(getattr(cls, "preparer", None)) and callable(getattr(cls, "merge", None))):
        raise InvalidArgumentError(
            f"{cls.__name__} cannot build with executor={executor.name!r}: its build is not "
            "split into preparer() / merge(); use executor='local'"
        )


def build_with_executor(cls: Any, documents: Iterable[Any], executor: Any, **kwargs: Any) -> Any:
    """Build ``cls`` from ``documents`` with ``executor`` (see the module notes).

    Parameters
    ----------
    cls : type of BaseIndex
        An index class with ``preparer()`` and ``merge(prepared)``.
    documents : iterable
        Anything ``load_documents`` accepts.
    executor : str or Executor
        See :func:`~graphrag_integrations.core.index.executors.resolve_executor`.
    **kwargs
        The load options, ``splitter`` / ``chunking``, ``checkpoint_dir`` and the
        constructor arguments, as for ``from_documents``.

    Raises
    ------
    InvalidArgumentError
        A bad ``executor``, an index without a split build, or ``checkpoint_every`` (an
        executor build saves every prepared batch).
    EmptyCorpusError
        No passage to index.
    IndexExistsError, IndexMismatchError
        ``checkpoint_dir`` is not a checkpoint, or one of another build.
    """
    runner = resolve_executor(executor)
    check_split_build(cls, runner)
    checkpoint_dir = kwargs.pop("checkpoint_dir", None)
    if kwargs.pop("checkpoint_every", None) is not None:
        raise InvalidArgumentError(
            f"checkpoint_every does not apply with executor={runner.name!r}: every prepared "
            "batch is saved (set the executor's batch_size instead)"
        )
    load_options = pop_load_options(kwargs)
    chosen = pop_splitter(kwargs)
    target = None if checkpoint_dir is None else Path(checkpoint_dir)
    settings = checkpoint_settings(cls, kwargs) if target is not None else {}
    state_of = functools.partial(prepared_state, cls.method, settings, executor=runner.name)
    database = None
    if target is not None:
        finished = _open_checkpoint(cls, target, state_of([], 0), kwargs, chosen)
        if finished is not None:
            return finished
        database = database_location(kwargs.get("graph_store"))
        state = read_checkpoint(target)
        if database is not None and state.get(PENDING_KEY) and state.get(EMPTY_GRAPH_KEY):
            roll_back_graph(database, state[PENDING_KEY])  # a merge killed before the save
    documents, setup = _sources(cls, documents)
    if setup is not None and not documents:  # nothing for the executor: the driver does it all
        index = _new_index(cls, kwargs)
        setup(index)
        return index
    docs = require_nonempty(load_documents(documents, **load_options))
    splitter = cls.default_splitter() if chosen is DEFAULT_SPLITTER else chosen
    passages = split_documents(docs, splitter)
    if not passages:
        raise EmptyCorpusError("no non-empty passages to index")
    index = _new_index(cls, kwargs)
    if chosen is not DEFAULT_SPLITTER:
        index.splitter = chosen
    if setup is not None:
        setup(index)
    batches = list(batching.batches(passages, runner.batch_size))
    saved = PreparedBatches(target) if target is not None else None
    prepared: list[Any] = [None] * len(batches)
    if saved is not None:
        prepared = [saved.get(i, batch) for i, batch in enumerate(batches)]
        reused = sum(p is not None for p in prepared)
        if reused:
            logger.info(
                "checkpoint %s: %d of %d batch(es) already prepared", target, reused, len(batches)
            )
    todo = [i for i, p in enumerate(prepared) if p is None]

    def keep(position: int, result: Any) -> None:
        if saved is not None:
            saved.put(todo[position], batches[todo[position]], result)

    setting = ProgressSetting.setting_of(index)
    results = runner.map(
        index.preparer(),
        [batches[i] for i in todo],
        done=keep,
        desc=f"Preparing {cls.method}",
        show_progress=auto_progress(setting, len(passages)),
    )
    for position, result in zip(todo, results, strict=True):
        prepared[position] = result
    done = list(dict.fromkeys(p.doc_id for p in passages))
    if target is not None and database is not None:  # the merge writes the database graph,
        # made empty above (the index refuses one holding data): a re-run rolls it back
        running = {**state_of([], len(batches)), PENDING_KEY: done, EMPTY_GRAPH_KEY: True}
        write_checkpoint(target, running)
    index.merge(prepared)
    if setup is None and callable(getattr(index, "check_built", None)):
        index.check_built()
    if target is not None:
        index.persist(target / INDEX_FOLDER, overwrite=True)
        write_checkpoint(target, state_of(done, len(batches)))
    return index


def _new_index(cls: Any, kwargs: dict[str, Any]) -> Any:
    """The empty index the prepared batches merge into: ``cls.for_build(**kwargs)`` if the
    class has it (an index made of parts, e.g. Hybrid), else ``cls(**kwargs)``."""
    make = getattr(cls, "for_build", None)
    return make(**kwargs) if callable(make) else cls(**kwargs)


def _sources(cls: Any, documents: Iterable[Any]) -> tuple[Any, Callable[[Any], None] | None]:
    """``cls.executor_sources(documents)`` if the class has it: the documents for the
    executor and a setup the driver runs on the new index first (e.g. ReG's triple files);
    else ``(documents, None)``."""
    sources = getattr(cls, "executor_sources", None)
    if callable(sources):
        texts, setup = sources(documents)
        return texts, setup
    return documents, None


def _open_checkpoint(
    cls: Any, target: Path, fresh: dict[str, Any], kwargs: dict[str, Any], chosen: Any
) -> Any:
    """Check or start (with the state ``fresh``) the checkpoint of ``target``; the finished
    index if it holds one."""
    if target.is_dir() and (target / CHECKPOINT_FILE).is_file():
        state = resume_state(target, cls.method, fresh["settings"], prepared=True)
        if state.get("done") and (target / INDEX_FOLDER / MANIFEST_NAME).is_file():
            logger.info("checkpoint %s: the build is complete, loading it", target)
            index = cls.load(target / INDEX_FOLDER, **kwargs)
            if chosen is not DEFAULT_SPLITTER:
                index.splitter = chosen
            return index
        return None
    if target.is_dir() and any(target.iterdir()):
        raise IndexExistsError(
            f"{target} is a non-empty folder without a {CHECKPOINT_FILE}: not a checkpoint; "
            "use an empty or new folder as checkpoint_dir"
        )
    target.mkdir(parents=True, exist_ok=True)
    write_checkpoint(target, fresh)
    return None


def distributable(from_documents: Any) -> Any:
    """Wrap a ``from_documents`` classmethod so a non-local ``executor=`` routes through
    :func:`build_with_executor` (without it, or with ``"local"``, the call is unchanged).

    Returns the ``classmethod`` to set on the class; wrapping twice is a no-op.
    """
    func = from_documents.__func__
    if getattr(func, "__distributable__", False):
        return from_documents

    @functools.wraps(func)
    def wrapped(cls: Any, documents: Iterable[Any], **kwargs: Any) -> Any:
        executor = kwargs.pop("executor", None)
        if is_local(executor):
            return func(cls, documents, **kwargs)
        return build_with_executor(cls, documents, executor, **kwargs)

    wrapped.__distributable__ = True  # type: ignore[attr-defined]
    wrapped.__checkpointable__ = getattr(func, "__checkpointable__", False)  # type: ignore[attr-defined]
    return classmethod(cast(Any, wrapped))
