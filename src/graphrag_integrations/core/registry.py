"""Method registrations: what the evaluation harness and the CLI need to know about a method.

A :class:`MethodRegistration` names a method and holds, as lazy ``"module:attr"`` strings, its
:class:`~graphrag_integrations.core.index.base.BaseIndex` class (``index`` / ``query``
commands) and its builder; plus its typed index-time and query-time parameter classes
(:class:`~graphrag_integrations.core.params.Params`), the dataset inputs it consumes and the
Python objects (LLMs, re-rankers, store factories) it accepts. Building a registration imports
nothing heavy: the builder and the index class are imported on first use.

The builder contract::

    build(embedder, *, <declared inputs>, index_params, query_params, show_progress,
          **objects) -> Retriever

``<declared inputs>`` are keyword arguments named after :attr:`MethodRegistration.inputs`
(``passages``: list of Passage; ``triples``: list of Triple; ``questions``: the dataset's
questions); a builder receives only those. ``objects`` are the options listed in
:attr:`MethodRegistration.objects` that the caller set.

A method with a learned component also names a trainer (``graphrag-integrations train``)::

    train(dataset: Path, out: Path, *, params: <train_params>, show_progress: bool)
        -> Mapping[str, Any]   # a JSON-serialisable report (data sizes, time, scores)

which writes what it trained into ``out`` (a directory the method's index or builder loads).

Examples
--------
>>> from graphrag_integrations.core.params import NoParams
>>> reg = MethodRegistration(
...     name="toy",
...     index_class="graphrag_integrations.baselines.bm25:BM25Retriever",
...     builder="graphrag_integrations.baselines.registration:build_bm25",
... )
>>> reg.inputs, reg.option_names()
(frozenset({'passages'}), ())
>>> try:
...     reg.parse_options({"k": 3})
... except InvalidParameterError as exc:
...     print(exc)
unknown option 'toy.k'; valid options: (none)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.params import PRESET_OPTION, InvalidParameterError, NoParams, Params
from graphrag_integrations.errors import GraphRAGError

__all__ = [
    "INPUTS",
    "STORE_OBJECTS",
    "MethodOptions",
    "MethodRegistration",
    "MethodUnavailableError",
    "UnknownMethodError",
]

#: Dataset inputs a method may consume.
INPUTS = frozenset({"passages", "triples", "questions"})
#: Doc lines of the object options every graph method's builder takes (``objects=`` of its
#: registration): where its vectors and its graph live.
STORE_OBJECTS: Mapping[str, str] = {
    "vector_index": "factory(layer, dimension, model_name) of the vector stores",
    "graph_store": "where the graph lives: falkordb://HOST:PORT/GRAPH, or a GraphBackend class "
    "or instance (default: networkx GraphStore in the process)",
}
#: Builder keywords that are not options.
_RESERVED = frozenset({"embedder", "index_params", "query_params", "show_progress"}) | INPUTS


class UnknownMethodError(GraphRAGError, LookupError):
    """Raised for a method name no registration provides."""


class MethodUnavailableError(GraphRAGError, ImportError):
    """Raised when a registered method cannot be imported (module missing, import error)."""


@dataclass(frozen=True)
class MethodOptions:
    """A method's validated options, split by phase."""

    index_params: Params
    query_params: Params
    objects: Mapping[str, Any] = field(default_factory=dict)


def _check_target(name: str, target: str, what: str) -> None:
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"method {name!r}: {what} must be 'module:attr', got {target!r}")


def import_target(target: str, method: str) -> Any:
    """Import ``"module:attr"`` (dotted attributes allowed).

    Raises
    ------
    MethodUnavailableError
        "method 'x' is not available: <reason>" when the import or the attribute fails.
    """
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise MethodUnavailableError(f"method {method!r} is not available: {exc}") from exc
    return obj


@dataclass(frozen=True)
class MethodRegistration:
    """Everything the harness and the CLI need about one method.

    Parameters
    ----------
    name : str
        Registry name (``"clue"``); no ``.``, ``,`` or ``=``.
    index_class : str
        ``"module:Class"`` of its :class:`~graphrag_integrations.core.index.base.BaseIndex`.
    builder : str
        ``"module:function"`` of its builder (contract in the module docstring).
    index_params, query_params : type of Params
        Index-time and query-time parameter classes; option names must not overlap, except
        ``preset`` when both classes have presets (the paper's settings often span both
        phases): it is then given to both, and each must know the preset name.
    inputs : frozenset of str
        Dataset inputs the builder takes, a subset of :data:`INPUTS`.
    objects : mapping of str to str
        Python-object options (name -> doc line) passed to the builder as they are; from the
        command line only those in ``named_objects`` can be set.
    named_objects : frozenset of str
        Object options that also take a model name or path string (e.g. a cross-encoder or
        LLM name the builder resolves with ``as_reranker`` / ``as_llm``), so the command line
        can set them.
    description : str
        One line for listings.
    trainer : str, optional
        ``"module:function"`` of the method's trainer (contract in the module docstring);
        ``None``: nothing to train.
    train_params : type of Params
        The trainer's parameter class (``train --option``).
    """

    name: str
    index_class: str
    builder: str
    index_params: type[Params] = NoParams
    query_params: type[Params] = NoParams
    inputs: frozenset[str] = frozenset({"passages"})
    objects: Mapping[str, str] = field(default_factory=dict)
    named_objects: frozenset[str] = frozenset()
    description: str = ""
    trainer: str | None = None
    train_params: type[Params] = NoParams

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in ".,= "):
            raise ValueError(f"invalid method name {self.name!r}")
        _check_target(self.name, self.index_class, "index_class")
        _check_target(self.name, self.builder, "builder")
        if self.trainer is not None:
            _check_target(self.name, self.trainer, "trainer")
        object.__setattr__(self, "inputs", frozenset(self.inputs))
        object.__setattr__(self, "named_objects", frozenset(self.named_objects))
        if not self.named_objects <= set(self.objects):
            raise ValueError(
                f"method {self.name!r}: named_objects {sorted(self.named_objects)} must be "
                "object options"
            )
        if not self.inputs or not self.inputs <= INPUTS:
            raise ValueError(
                f"method {self.name!r}: inputs must be a non-empty subset of {sorted(INPUTS)}, "
                f"got {sorted(self.inputs)}"
            )
        seen: dict[str, str] = {}
        groups = (
            ("index", self.index_params.names()),
            ("query", self.query_params.names()),
            ("objects", tuple(self.objects)),
        )
        for group, names in groups:
            for opt in names:
                if opt in _RESERVED:
                    raise ValueError(f"method {self.name!r}: option name {opt!r} is reserved")
                if opt in seen and not (opt == PRESET_OPTION and seen[opt] == "index"):
                    raise ValueError(
                        f"method {self.name!r}: option {opt!r} is in both {seen[opt]} and {group}"
                    )
                seen[opt] = group

    # -- options --------------------------------------------------------------------------
    def option_names(self) -> tuple[str, ...]:
        """Every option name: index, query, then objects."""
        names = (*self.index_params.names(), *self.query_params.names(), *self.objects)
        return tuple(dict.fromkeys(names))

    def option_list(self) -> str:
        """Valid options with their paper symbols, for one-line error messages."""
        parts = [
            p.option_list()
            for p in (self.index_params, self.query_params)
            if p.option_list() != "(none)"
        ]
        if self.objects:
            parts.append(
                ", ".join(
                    f"{o} (object or name)" if o in self.named_objects else f"{o} (object)"
                    for o in self.objects
                )
            )
        return "; ".join(parts) if parts else "(none)"

    def parse_options(self, options: Mapping[str, Any], *, cli: bool = False) -> MethodOptions:
        """Split and validate ``{name: value}`` into index params, query params and objects.

        Parameters
        ----------
        options : mapping of str to Any
            Option values; strings are converted to the parameter types.
        cli : bool
            The values come from the command line: object options are refused, except
            ``named_objects`` given as a name or path string.

        Raises
        ------
        InvalidParameterError
            One line naming the offending option and, for an unknown name, the valid ones.
        """
        prefix = f"{self.name}."
        index_names = set(self.index_params.names())
        query_names = set(self.query_params.names())
        index_opts: dict[str, Any] = {}
        query_opts: dict[str, Any] = {}
        objects: dict[str, Any] = {}
        for opt, value in options.items():
            if opt == PRESET_OPTION and opt in index_names and opt in query_names:
                index_opts[opt] = query_opts[opt] = value  # a preset spanning both phases
            elif opt in index_names:
                index_opts[opt] = value
            elif opt in query_names:
                query_opts[opt] = value
            elif opt in self.objects:
                if cli and not (opt in self.named_objects and isinstance(value, str)):
                    raise InvalidParameterError(
                        f"option {prefix}{opt} takes a Python object ({self.objects[opt]}); "
                        "set it through the Python API"
                    )
                objects[opt] = value
            else:
                raise InvalidParameterError(
                    f"unknown option {prefix + opt!r}; valid options: {self.option_list()}"
                )
        return MethodOptions(
            self.index_params.from_options(index_opts, prefix=prefix),
            self.query_params.from_options(query_opts, prefix=prefix),
            objects,
        )

    @property
    def presets(self) -> tuple[str, ...]:
        """Preset names of the index and query parameter classes."""
        return tuple(dict.fromkeys((*self.index_params.PRESETS, *self.query_params.PRESETS)))

    def describe(self) -> str:
        """Plain-text help: description, inputs, index and query option tables, objects."""
        lines = [f"{self.name}: {self.description}".rstrip(": ")]
        lines.append(f"inputs: {', '.join(sorted(self.inputs))}")
        lines += ["", "index options:", self.index_params.describe()]
        lines += ["", "query options:", self.query_params.describe()]
        if self.trainer is not None:
            lines += ["", "train options (`train --option`):", self.train_params.describe()]
        if self.objects:
            lines += ["", "Python objects (API; those marked * also take a name or path):"]
            lines += [
                f"  {name}{'*' if name in self.named_objects else ''}: {doc}"
                for name, doc in self.objects.items()
            ]
        return "\n".join(lines)

    # -- lazy targets -----------------------------------------------------------------------
    def resolve_builder(self) -> Callable[..., Any]:
        """The builder function (imported now; :class:`MethodUnavailableError` if it fails)."""
        builder: Callable[..., Any] = import_target(self.builder, self.name)
        return builder

    def resolve_trainer(self) -> Callable[..., Any]:
        """The trainer function.

        Raises
        ------
        GraphRAGError
            If the method has no trainer.
        MethodUnavailableError
            If its import fails.
        """
        if self.trainer is None:
            raise GraphRAGError(f"method {self.name!r} has nothing to train")
        trainer: Callable[..., Any] = import_target(self.trainer, self.name)
        return trainer

    def resolve_index_class(self) -> type[Any]:
        """The index class (imported now; :class:`MethodUnavailableError` if it fails)."""
        cls: type[Any] = import_target(self.index_class, self.name)
        return cls

    def build(
        self,
        embedder: Any,
        inputs: Mapping[str, Any],
        options: MethodOptions | Mapping[str, Any] | None = None,
        *,
        show_progress: bool = False,
    ) -> Any:
        """Call the builder with the declared ``inputs`` only and the validated options.

        Raises
        ------
        ValueError
            If a declared input is missing from ``inputs``.
        """
        missing = sorted(self.inputs - set(inputs))
        if missing:
            raise ValueError(f"method {self.name!r} needs {', '.join(missing)}")
        opts = options if isinstance(options, MethodOptions) else self.parse_options(options or {})
        builder = self.resolve_builder()
        return builder(
            embedder,
            **{name: inputs[name] for name in sorted(self.inputs)},
            index_params=opts.index_params,
            query_params=opts.query_params,
            show_progress=show_progress,
            **opts.objects,
        )
