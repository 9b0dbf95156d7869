"""Checkpointed builds: a killed ``from_documents`` restarts where it stopped.

``X.from_documents(docs, checkpoint_dir=DIR, checkpoint_every=N)`` works for every index
(``BaseIndex.from_documents`` and each subclass's own ``from_documents`` are wrapped with
:func:`checkpointable`). The build then goes through the incremental ``insert`` path:

1. the documents are loaded once (:func:`~graphrag_integrations.core.text.documents.load_documents`,
   with the load options given) and cut into batches of ``N`` documents, in input order;
2. before each batch, ``DIR/checkpoint.json`` lists its documents as ``pending``; the first
   batch is built with ``from_documents``, each next one added with ``insert``;
3. after each batch the index is persisted to ``DIR/index`` (atomically, see
   :func:`~graphrag_integrations.core.persistence.atomic_directory`) and then
   ``DIR/checkpoint.json`` is replaced (atomically) with the ids of the documents done;
4. run again with the same ``DIR``, the build loads the index from ``DIR/index``, rolled back
   to before the pending documents, skips the documents already done (by document id) and
   goes on with the rest.

**A graph in a database** (``graph_store="falkordb://..."``) keeps what a killed batch wrote
before the process died, while that batch's vectors are lost. The resume therefore removes the
pending documents from the loaded index first, through the method's own ``delete``, so its
derived state follows (:mod:`~graphrag_integrations.core.index.rollback`; a warning names the
documents rolled back). A first batch killed before its save leaves a graph and no index:
when the checkpoint saw that graph empty before the batch (``graph_was_empty``), the pending
documents' provenance is removed from it; a graph that held data before is never touched.
Only the pending documents' contributions are removed.

Killed between steps 3 and 4, the last batch is in the index but not yet listed: it is rolled
back and inserted again, giving the same index. The finished index stays in
``DIR/index`` (``X.load(DIR / "index")`` reads it; ``checkpoint.json`` is kept so a re-run is a
no-op). The index has its own folder so that its persist stays atomic (a folder holding files
the index did not write is updated entry by entry).

``checkpoint.json`` records the method and the build settings (the constructor keyword
arguments: values, or the type and ``model_name`` of objects such as the embedder); resuming with
another method or other settings raises :class:`~graphrag_integrations.errors.IndexMismatchError`
naming what differs, and ``X.load`` itself checks the embedding model and dimension. A
non-empty ``DIR`` without ``checkpoint.json`` is refused
(:class:`~graphrag_integrations.errors.IndexExistsError`): it is not a checkpoint.

Examples
--------
>>> import tempfile
>>> from graphrag_integrations.baselines.dense import DenseRetriever
>>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
>>> tmp = tempfile.TemporaryDirectory()
>>> docs = [f"Town {i} lies on river {i}." for i in range(5)]
>>> index = DenseRetriever.from_documents(
...     docs, embedding=FakeEmbedder(), checkpoint_dir=tmp.name, checkpoint_every=2
... )
>>> read_checkpoint(tmp.name)["batches"], len(read_checkpoint(tmp.name)["done"])
(3, 5)
>>> again = DenseRetriever.from_documents(  # a re-run finds everything done
...     docs, embedding=FakeEmbedder(), checkpoint_dir=tmp.name, checkpoint_every=2
... )
>>> len(again.passages)
5
>>> tmp.cleanup()
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from graphrag_integrations.core import batching
from graphrag_integrations.core.graph.falkordb_connection import is_falkordb_url, parse_falkordb_url
from graphrag_integrations.core.index.rollback import (
    database_location,
    holds_data,
    roll_back_graph,
    rolling_back,
)
from graphrag_integrations.core.params import resolve_params
from graphrag_integrations.core.persistence import MANIFEST_NAME, atomic_write_bytes
from graphrag_integrations.core.text.documents import (
    SourceDocument,
    load_documents,
    pop_load_options,
)
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError

logger = logging.getLogger(__name__)

T = TypeVar("T")

CHECKPOINT_FILE = "checkpoint.json"
#: The sub-folder of the checkpoint directory holding the partial (finally the whole) index.
INDEX_FOLDER = "index"
CHECKPOINT_FORMAT = 1
#: In ``checkpoint.json`` of an executor build: ``true`` (prepared batches in ``prepared/``).
PREPARED_KEY = "prepared"
#: In ``checkpoint.json`` while a batch runs: the ids of its documents (rolled back on resume).
PENDING_KEY = "pending"
#: In ``checkpoint.json`` while the first batch runs on a database graph: whether that graph
#: was empty before it (then the resume may roll the batch back from it).
EMPTY_GRAPH_KEY = "graph_was_empty"
#: Documents per batch when ``checkpoint_every`` is not given.
DEFAULT_CHECKPOINT_EVERY = 500
#: Constructor arguments that do not change what is built (not compared on resume).
IGNORED_SETTINGS = frozenset({"show_progress"})


def describe_setting(value: Any) -> Any:
    """A JSON-able description of one build setting, compared on resume.

    Values JSON can hold are kept (tuples and sets as lists); other objects are described by
    their type and, when they have one, their ``model_name`` (embedders, LLMs), so the same
    model in a new process compares equal.

    Examples
    --------
    >>> describe_setting({"alpha": 0.0, "labels": ("DATE", "CARDINAL")})
    {'alpha': 0.0, 'labels': ['DATE', 'CARDINAL']}
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> describe_setting(FakeEmbedder(8))
    {'type': 'FakeEmbedder', 'model_name': 'fake-hashing-bow-8'}
    >>> describe_setting("falkordb://bob:secret@db:6379/papers")  # no credentials on disk
    'falkordb://bob@db:6379/papers'
    """
    if isinstance(value, str) and is_falkordb_url(value):
        return parse_falkordb_url(value).url  # never the password
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a Params object
        return {"type": type(value).__name__, **describe_setting(dataclasses.asdict(value))}
    if isinstance(value, Mapping):
        return {str(k): describe_setting(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe_setting(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((describe_setting(v) for v in value), key=repr)
    out: dict[str, Any] = {"type": type(value).__name__}
    model = getattr(value, "model_name", None)
    if isinstance(model, str):
        out["model_name"] = model
    return out


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The content of ``path/checkpoint.json`` (``method``, ``settings``, ``done``, ``batches``;
    ``pending`` while a batch runs).

    Raises
    ------
    FileNotFoundError
        If ``path`` holds no checkpoint.
    IndexMismatchError
        If the file is not a checkpoint this version reads.
    """
    file = Path(path) / CHECKPOINT_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise IndexMismatchError(f"{file}: not a readable checkpoint ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise IndexMismatchError(f"{file}: not a checkpoint of format {CHECKPOINT_FORMAT}")
    return data


def write_checkpoint(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path/checkpoint.json`` atomically (temporary file + ``os.replace``)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{CHECKPOINT_FILE}.tmp-", dir=path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path / CHECKPOINT_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _state(method: str, settings: Any, done: list[str], batches: int) -> dict[str, Any]:
    return {
        "format": CHECKPOINT_FORMAT,
        "method": method,
        "settings": settings,
        "done": done,
        "batches": batches,
    }


def prepared_state(
    method: str, settings: Any, done: list[str], batches: int, executor: str
) -> dict[str, Any]:
    """The ``checkpoint.json`` of an executor build: ``done`` is filled once the index is
    merged and saved (``batches`` counts the prepared batches of the whole build)."""
    return {**_state(method, settings, done, batches), PREPARED_KEY: True, "executor": executor}


def checkpoint_settings(cls: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The build settings a checkpoint records and compares on resume (the constructor
    arguments of ``kwargs``, described by :func:`describe_setting`).

    A ``preset`` in ``kwargs`` is replaced (in ``kwargs`` too) by the params it names, so the
    checkpoint records what was built.
    """
    if kwargs.get("preset") is not None:  # recorded (and resumed) as the params it names
        kwargs["index_params"], kwargs["query_params"] = resolve_params(
            cls.index_params_class,
            cls.query_params_class(),
            index_params=kwargs.pop("index_params", None),
            query_params=kwargs.pop("query_params", None),
            preset=kwargs.pop("preset"),
        )
    return {k: describe_setting(v) for k, v in sorted(kwargs.items()) if k not in IGNORED_SETTINGS}


def resume_state(
    target: Path, method: str, settings: Mapping[str, Any], *, prepared: bool
) -> dict[str, Any]:
    """The checkpoint of ``target``, checked against what resumes it.

    Parameters
    ----------
    target : Path
        A folder holding ``checkpoint.json``.
    method, settings
        The method and the :func:`checkpoint_settings` of the resuming build.
    prepared : bool
        Whether the resuming build goes through an executor (prepared batches, see
        :class:`PreparedBatches`) rather than the batch-by-batch ``insert`` path.

    Raises
    ------
    IndexMismatchError
        Another method, other settings, or the other kind of build.
    """
    state = read_checkpoint(target)
    if state.get("method") != method:
        raise IndexMismatchError(
            f"{target} holds a checkpoint of method {state.get('method')!r}, not "
            f"{method!r}; use another checkpoint_dir or delete it"
        )
    if state.get("settings") != settings:
        old = state.get("settings") or {}
        diff = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
        raise IndexMismatchError(
            f"{target} holds a checkpoint built with other settings ({', '.join(diff)} "
            "differ); resume with the same arguments, or use another checkpoint_dir"
        )
    if bool(state.get(PREPARED_KEY)) != prepared:
        kind = "an executor ('ray'...)" if state.get(PREPARED_KEY) else "the local executor"
        raise IndexMismatchError(
            f"{target} holds a checkpoint of a build with {kind}; resume it with the same "
            "executor, or use another checkpoint_dir"
        )
    return state


class PreparedBatches:
    """The prepared batches of an executor build, saved in ``DIR/prepared/`` as they arrive.

    One pickle file per batch, named by its position and a hash of its passages (ids and
    texts), written atomically; :meth:`get` returns a saved batch only when both match, so a
    re-run over the same documents prepares only the batches that are missing. The files are
    pickles this package wrote: load checkpoints you made only.

    Examples
    --------
    >>> import tempfile
    >>> from graphrag_integrations.core.types import Passage
    >>> tmp = tempfile.TemporaryDirectory()
    >>> saved = PreparedBatches(Path(tmp.name))
    >>> batch = [Passage("p1", "Paris is in France.", "d1")]
    >>> saved.put(0, batch, {"vectors": [1.0]})
    >>> saved.get(0, batch), saved.get(1, batch)
    ({'vectors': [1.0]}, None)
    >>> tmp.cleanup()
    """

    FOLDER = "prepared"

    def __init__(self, root: Path) -> None:
        self.folder = Path(root) / self.FOLDER

    @staticmethod
    def key(batch: Sequence[Any]) -> str:
        """A hash of the batch's passages (ids, document ids and texts)."""
        digest = hashlib.sha256()
        for passage in batch:
            for part in (passage.id, passage.doc_id, passage.text):
                digest.update(part.encode("utf-8"))
                digest.update(b"\0")
        return digest.hexdigest()[:20]

    def _file(self, position: int, batch: Sequence[Any]) -> Path:
        return self.folder / f"{position:06d}-{self.key(batch)}.pkl"

    def get(self, position: int, batch: Sequence[Any]) -> Any:
        """The saved result of ``batch`` at ``position``, or ``None``."""
        file = self._file(position, batch)
        if not file.is_file():
            return None
        try:
            return pickle.loads(file.read_bytes())
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
            logger.warning("checkpoint: %s unreadable (%s); preparing it again", file, exc)
            return None

    def put(self, position: int, batch: Sequence[Any], result: Any) -> None:
        """Save the result of ``batch`` at ``position`` (atomically)."""
        atomic_write_bytes(
            self._file(position, batch), pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        )


def build_with_checkpoint(
    cls: Any,
    build: Callable[..., Any],
    documents: Iterable[Any],
    *,
    checkpoint_dir: str | Path,
    checkpoint_every: int | None = None,
    **kwargs: Any,
) -> Any:
    """Build ``cls`` from ``documents`` in batches, persisting to ``checkpoint_dir`` after each.

    Parameters
    ----------
    cls : type of BaseIndex
        The index class (its ``load``, ``insert`` and ``persist`` are used).
    build : callable
        ``build(documents, **kwargs)``: the class's own ``from_documents`` (first batch).
    documents : iterable
        Anything ``load_documents`` accepts; loaded once, with the load options in ``kwargs``.
    checkpoint_dir : str or Path
        Where the partial index and ``checkpoint.json`` live (see the module notes).
    checkpoint_every : int, optional
        Documents per batch (default :data:`DEFAULT_CHECKPOINT_EVERY`).
    **kwargs
        Load options and constructor arguments, as for ``from_documents``.

    Returns
    -------
    BaseIndex
        The index of all the documents (also persisted in ``checkpoint_dir``).

    Raises
    ------
    IndexExistsError
        If ``checkpoint_dir`` is a non-empty folder without a checkpoint.
    IndexMismatchError
        If the checkpoint was written by another method or with other settings.
    """
    every = DEFAULT_CHECKPOINT_EVERY if checkpoint_every is None else checkpoint_every
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"checkpoint_every must be an int >= 1, got {checkpoint_every!r}")
    target = Path(checkpoint_dir)
    load_options = pop_load_options(kwargs)
    settings = checkpoint_settings(cls, kwargs)
    docs: list[SourceDocument] = list(
        {d.id: d for d in load_documents(documents, **load_options)}.values()
    )
    index: Any = None
    done: list[str] = []
    pending: list[str] = []
    state: dict[str, Any] = {}
    batches = 0
    state_of = functools.partial(_state, cls.method, settings)
    if target.is_dir() and (target / CHECKPOINT_FILE).is_file():
        state = resume_state(target, cls.method, settings, prepared=False)
        done, batches = list(state["done"]), int(state.get("batches", 0))
        pending = [d for d in state.get(PENDING_KEY, []) if d not in set(done)]
        if (target / INDEX_FOLDER / MANIFEST_NAME).is_file():
            chunking = ("splitter", "chunking", "chunker")  # from_documents options, not load's
            with rolling_back(pending):  # what the unfinished batch left in a database graph
                index = cls.load(
                    target / INDEX_FOLDER, **{k: v for k, v in kwargs.items() if k not in chunking}
                )
            logger.info("checkpoint %s: resuming after %d document(s)", target, len(done))
    elif target.is_dir() and any(target.iterdir()):
        raise IndexExistsError(
            f"{target} is a non-empty folder without a {CHECKPOINT_FILE}: not a checkpoint; "
            "use an empty or new folder as checkpoint_dir"
        )
    else:
        target.mkdir(parents=True, exist_ok=True)
        write_checkpoint(target, state_of(done, batches))
    finished = set(done)
    todo = [d for d in docs if d.id not in finished]
    database = None if index is not None else database_location(kwargs.get("graph_store"))
    if database is not None and pending and state.get(EMPTY_GRAPH_KEY):
        roll_back_graph(database, pending)  # a first batch killed before its save
    for batch in batching.batches(todo, every):
        # a database graph keeps what a killed batch wrote: the resume rolls these back
        running = {**state_of(done, batches), PENDING_KEY: [d.id for d in batch]}
        if index is None and database is not None:  # may the resume empty the graph?
            running[EMPTY_GRAPH_KEY] = not holds_data(database)
        write_checkpoint(target, running)
        if index is None:
            index = build(batch, **kwargs)
        else:
            index.insert(batch)
        index.persist(target / INDEX_FOLDER)
        done.extend(d.id for d in batch)
        batches += 1
        write_checkpoint(target, state_of(done, batches))
        logger.info("checkpoint %s: %d of %d document(s) done", target, len(done), len(docs))
    if index is None:  # nothing to do and nothing done: let the method raise its own error
        index = build(docs, **kwargs)
    return index


def checkpointable(from_documents: Any) -> Any:
    """Wrap a ``from_documents`` classmethod so ``checkpoint_dir=`` routes through
    :func:`build_with_checkpoint` (without it, the call is unchanged).

    Returns the ``classmethod`` to set on the class; wrapping twice is a no-op.
    """
    func = from_documents.__func__
    if getattr(func, "__checkpointable__", False):
        return from_documents

    @functools.wraps(func)
    def wrapped(cls: Any, documents: Iterable[Any], **kwargs: Any) -> Any:
        if kwargs.get("checkpoint_dir") is None:
            kwargs.pop("checkpoint_dir", None)
            if kwargs.get("checkpoint_every", 0) is None:
                kwargs.pop("checkpoint_every")
            if "checkpoint_every" in kwargs:
                raise TypeError("checkpoint_every needs checkpoint_dir")
            return func(cls, documents, **kwargs)
        return build_with_checkpoint(cls, functools.partial(func, cls), documents, **kwargs)

    wrapped.__checkpointable__ = True  # type: ignore[attr-defined]
    return classmethod(cast(Any, wrapped))
