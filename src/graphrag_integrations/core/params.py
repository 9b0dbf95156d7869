"""Typed parameter dataclasses: one place for a method's options, their paper symbols and checks.

A method describes its options as a frozen dataclass deriving from :class:`Params`, each field
made with :func:`param` (default, paper symbol, one doc line, optional bounds).
:meth:`Params.from_options` turns a mapping of option names to values (Python values, or the
strings of a command line) into a validated instance; :meth:`Params.to_kwargs` gives the
keyword arguments of the method's constructor; :meth:`Params.describe` is the table the CLI
and the docs print.

Supported field types: ``int``, ``float``, ``bool``, ``str``, ``Literal[...]``,
``X | None``, ``tuple[str, ...]`` and ``frozenset[str]``. Validation is pydantic's, in lax
mode (``"3"`` -> 3, ``"off"`` -> False, ``Literal`` choices, bounds; no bool as a number, no
nan or infinity); this module adds the command-line syntax pydantic does not read (``"none"``
-> ``None`` for an optional field, ``"a,b"`` or ``'["a", "b"]'`` -> a collection of strings)
and turns pydantic's errors into one line. :func:`param` puts the doc line, symbol and bounds
in the field's metadata under the names of :func:`pydantic.Field`.

A class may define named presets (:attr:`Params.PRESETS`): the option ``preset=NAME`` applies
the preset's values, and explicit options override them.

What every index shares (issue 19, "one API contract"): :func:`resolve_params` turns an
index's ``index_params=`` / ``query_params=`` / ``preset=`` arguments into one pair of
instances (``preset`` together with a params object is refused), and
:meth:`Params.with_overrides` applies the validated ``**overrides`` of ``as_retriever``.

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class ToyParams(Params):
...     K: int = param(3, symbol="K", doc="neighbours per node", ge=1)
...     mode: Literal["fast", "exact"] = param("fast", doc="search mode")
>>> ToyParams.from_options({"K": "5"}).to_kwargs()
{'K': 5, 'mode': 'fast'}
>>> for bad in ({"KK": 5}, {"K": "0"}, {"mode": "slow"}, {"K": "x", "mode": 1}):
...     try:
...         ToyParams.from_options(bad, prefix="toy.")
...     except InvalidParameterError as exc:
...         print(exc)
unknown option 'toy.KK'; valid options: K, mode
option toy.K: must be >= 1, got 0
option toy.mode: expected one of 'fast', 'exact', got 'slow'
option toy.K: expected an integer, got 'x'; option toy.mode: expected one of 'fast', 'exact', got 1
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

import pydantic
from pydantic_core import ErrorDetails, PydanticCustomError
from typing_extensions import TypedDict

from graphrag_integrations.errors import (
    GraphRAGError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)

__all__ = [
    "InvalidParameterError",
    "NoParams",
    "ParamSpec",
    "Params",
    "bind_query_params",
    "key_values",
    "param",
    "resolve_params",
]

P = TypeVar("P", bound="Params")
Q = TypeVar("Q", bound="Params")

_NONE = frozenset({"none", "null"})
#: The option name that selects a preset (never a field name).
PRESET_OPTION = "preset"
#: The bounds :func:`param` takes: pydantic's constraint name -> (error type, operator).
_BOUNDS = {
    "ge": ("greater_than_equal", ">="),
    "gt": ("greater_than", ">"),
    "le": ("less_than_equal", "<="),
    "lt": ("less_than", "<"),
}
#: What a value of a field type is expected to be (in an error message).
_EXPECTED = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}


class InvalidParameterError(GraphRAGError, ValueError):
    """An option name a method does not have, or a value of the wrong type or out of range."""


def param(
    default: Any,
    *,
    doc: str,
    symbol: str = "",
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    kwarg: bool = True,
) -> Any:
    """A :class:`Params` field: its default, paper symbol, doc line and optional bounds.

    The metadata uses the argument names of :func:`pydantic.Field` (``description``, the
    bounds, ``json_schema_extra`` holding the symbol), which pydantic reads from a dataclass
    field; ``kwarg`` is this module's.

    Parameters
    ----------
    default : Any
        Default value (immutable: use a tuple or frozenset for collections).
    doc : str
        One line describing the option.
    symbol : str
        The paper's symbol for it (``"α"``, ``"K"``); empty for engineering options.
    ge, gt, le, lt : float, optional
        Inclusive / exclusive bounds checked for numbers.
    kwarg : bool
        Whether :meth:`Params.to_kwargs` passes the field on.

    Examples
    --------
    >>> spec = param(0.5, doc="mixing weight", symbol="λ", ge=0, le=1)
    >>> spec.default, spec.metadata["json_schema_extra"]["symbol"], spec.metadata["le"]
    (0.5, 'λ', 1)
    """
    bounds = {"ge": ge, "gt": gt, "le": le, "lt": lt}
    meta = {"description": doc, "json_schema_extra": {"symbol": symbol}, "kwarg": kwarg}
    meta.update((name, bound) for name, bound in bounds.items() if bound is not None)
    return dataclasses.field(default=default, metadata=meta)


@dataclass(frozen=True)
class ParamSpec:
    """What :func:`param` declared for one field, with the field's resolved type."""

    name: str
    type: Any
    default: Any
    doc: str
    symbol: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    kwarg: bool = True

    @property
    def type_name(self) -> str:
        """Readable type (``int``, ``'bleu' | 'cosine'``, ``str | None``...)."""
        return _type_name(self.type)

    @property
    def bounds(self) -> str:
        """The declared range, e.g. ``[0, 1]`` or ``>= 1`` (empty when unbounded)."""
        if self.ge is not None and self.le is not None:
            return f"[{self.ge:g}, {self.le:g}]"
        declared = ((op, getattr(self, name)) for name, (_, op) in _BOUNDS.items())
        return ", ".join(f"{op} {bound:g}" for op, bound in declared if bound is not None)

    def label(self) -> str:
        """``name (symbol)``, or ``name`` when the symbol is the name or empty."""
        return self.name if self.symbol in ("", self.name) else f"{self.name} ({self.symbol})"

    def annotation(self, *, bounded: bool = True) -> Any:
        """The type pydantic validates the option with (bounds on numbers if ``bounded``)."""
        return _pydantic_type(self.type, {n: getattr(self, n) for n in _BOUNDS} if bounded else {})

    def problem(self, error: ErrorDetails, given: Any) -> str:
        """One pydantic error about this option (whose value was ``given``) as one line."""
        kind, shown = error["type"], error["input"]
        base = _optional_inner(self.type) or self.type
        if kind == "value_error":
            return str(error.get("ctx", {}).get("error", error["msg"]))
        if get_origin(base) in (tuple, frozenset):
            return f"expected strings (comma-separated or a list), got {given!r}"
        for name, (bound_kind, op) in _BOUNDS.items():
            if kind == bound_kind:  # shown as the field type, as it was compared
                try:
                    shown = pydantic.TypeAdapter(self.annotation(bounded=False)).validate_python(
                        shown
                    )
                except pydantic.ValidationError as exc:  # nan: out of every bound, not finite
                    return self.problem(exc.errors()[0], given)
                return f"must be {op} {getattr(self, name):g}, got {shown!r}"
        if get_origin(base) is Literal:
            choices = ", ".join(repr(c) for c in get_args(base))
            return f"expected one of {choices}, got {shown!r}"
        return f"expected {_EXPECTED.get(base, base)}, got {shown!r}"


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join("None" if a is type(None) else _type_name(a) for a in get_args(tp))
    if origin is tuple:
        return "tuple of str"
    if origin is frozenset:
        return "set of str"
    return getattr(tp, "__name__", str(tp))


def _optional_inner(tp: Any) -> Any | None:
    """``X`` for ``X | None`` / ``Optional[X]``, else ``None``."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0]
        raise TypeError(f"unsupported parameter type {tp!r} (only X | None unions)")
    return None


def _check_type(tp: Any) -> None:
    """Raise TypeError (at first use of the class) for a field type outside the supported
    ones (those with a command-line syntax)."""
    inner = _optional_inner(tp)
    if inner is not None:
        _check_type(inner)
    elif not (
        get_origin(tp) is Literal
        or (get_origin(tp) is tuple and get_args(tp) == (str, Ellipsis))
        or (get_origin(tp) is frozenset and get_args(tp) == (str,))
        or tp in (int, float, bool, str)
    ):
        raise TypeError(f"unsupported parameter type {tp!r}")


def _none_from_text(value: Any) -> Any:
    """``"none"`` / ``"null"`` (any case) -> ``None``, for an optional field."""
    return None if isinstance(value, str) and value.strip().lower() in _NONE else value


def _strings_from_text(value: Any) -> Any:
    """``"a, b"`` or ``'["a", "b"]'`` -> a list of strings; other values as given."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text.startswith("["):
        return [part.strip() for part in text.split(",") if part.strip()]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON list {value!r}") from exc


def _not_a_bool(value: Any) -> Any:
    """Refuse ``True`` / ``False`` as a number (pydantic's lax mode reads them as 1 / 0)."""
    if isinstance(value, bool):
        raise PydanticCustomError("bool_as_number", "a bool is not a number")
    return value


def _pydantic_type(tp: Any, bounds: Mapping[str, float | None]) -> Any:
    """``tp`` as pydantic validates it: the command-line syntax, ``bounds`` on numbers."""
    inner = _optional_inner(tp)
    if inner is not None:
        optional: Any = Union[_pydantic_type(inner, bounds), None]  # noqa: UP007 (a value)
        return Annotated[optional, pydantic.BeforeValidator(_none_from_text)]
    if get_origin(tp) in (tuple, frozenset):
        return Annotated[tp, pydantic.BeforeValidator(_strings_from_text)]
    if tp in (int, float):
        ge, gt, le, lt = (bounds.get(name) for name in _BOUNDS)
        checks = pydantic.Field(allow_inf_nan=False, ge=ge, gt=gt, le=le, lt=lt)
        return Annotated[tp, pydantic.BeforeValidator(_not_a_bool), checks]
    return tp


@dataclass(frozen=True)
class Params:
    """Base of the typed parameter dataclasses (subclass with ``@dataclass(frozen=True)``).

    Every instance is validated on construction (types, Literal choices and declared bounds),
    whether it comes from :meth:`from_options` or is built directly.

    Examples
    --------
    >>> NoParams.from_options({}).to_kwargs()
    {}
    >>> NoParams.option_list()
    '(none)'
    """

    #: Named presets: preset name -> option values (``{}`` for the defaults).
    PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    def __post_init__(self) -> None:
        for name, value in self._validated(self.values()).items():
            if value is not getattr(self, name):
                object.__setattr__(self, name, value)

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        """One :class:`ParamSpec` per field, in declaration order."""
        cached: tuple[ParamSpec, ...] | None = cls.__dict__.get("_specs_cache")
        if cached is not None:
            return cached
        hints = typing.get_type_hints(cls)
        specs = []
        for f in dataclasses.fields(cls):
            if f.name == PRESET_OPTION:
                raise TypeError(f"{cls.__name__}: {PRESET_OPTION!r} is reserved for presets")
            _check_type(hints[f.name])
            meta = f.metadata
            specs.append(
                ParamSpec(
                    name=f.name,
                    type=hints[f.name],
                    default=f.default,
                    doc=str(meta.get("description", "")),
                    symbol=str(meta.get("json_schema_extra", {}).get("symbol", "")),
                    **{name: meta[name] for name in _BOUNDS if name in meta},
                    kwarg=bool(meta.get("kwarg", True)),
                )
            )
        result = tuple(specs)
        type.__setattr__(cls, "_specs_cache", result)
        return result

    @classmethod
    def _validated(cls, values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        """``values`` (field names) validated by pydantic: converted to the field types.

        Raises
        ------
        InvalidParameterError
            One line naming every bad option and what is wrong with it.
        """
        adapter: pydantic.TypeAdapter[Any] | None = cls.__dict__.get("_adapter")
        if adapter is None:
            fields = {s.name: s.annotation() for s in cls.specs()}
            options = TypedDict(f"{cls.__name__}Options", fields, total=False)  # type: ignore[misc]
            adapter = pydantic.TypeAdapter(options)
            type.__setattr__(cls, "_adapter", adapter)
        try:
            return adapter.validate_python(values)
        except pydantic.ValidationError as exc:
            specs = {s.name: s for s in cls.specs()}
            problems: dict[str, str] = {}  # each bad option's first error
            for error in exc.errors():
                name = str(error["loc"][0])
                problems.setdefault(name, specs[name].problem(error, values[name]))
            raise InvalidParameterError(
                "; ".join(f"option {prefix}{name}: {text}" for name, text in problems.items())
            ) from None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (``preset`` too when the class has presets)."""
        fields = tuple(s.name for s in cls.specs())
        return (*fields, PRESET_OPTION) if cls.PRESETS else fields

    @classmethod
    def option_list(cls) -> str:
        """``K (K), alpha (α), ..., preset (default | paper)`` for error messages."""
        labels = [s.label() for s in cls.specs()]
        if cls.PRESETS:
            labels.append(f"{PRESET_OPTION} ({' | '.join(cls.PRESETS)})")
        return ", ".join(labels) if labels else "(none)"

    @classmethod
    def preset(cls: type[P], name: str, **overrides: Any) -> P:
        """The preset ``name`` with ``overrides`` applied (validated like
        :meth:`from_options`), e.g. ``XQueryParams.preset("paper", h=0)``."""
        return cls.from_options({PRESET_OPTION: name, **overrides})

    @classmethod
    def from_options(cls: type[P], options: Mapping[str, Any], *, prefix: str = "") -> P:
        """A validated instance from ``{name: value}``; strings are converted to field types.

        Parameters
        ----------
        options : mapping of str to Any
            Option values (missing ones keep their default); ``preset`` selects a preset.
        prefix : str
            Put before option names in error messages (``"clue."``).

        Raises
        ------
        InvalidParameterError
            One line: an unknown option (naming the valid ones with their symbols), an unknown
            preset, or the values that do not convert or are out of range.
        """
        known = {s.name for s in cls.specs()}
        values = dict(options)
        for name in values:
            if name not in known and not (cls.PRESETS and name == PRESET_OPTION):
                raise InvalidParameterError(
                    f"unknown option {prefix + name!r}; valid options: {cls.option_list()}"
                )
        if PRESET_OPTION in values:
            preset = values.pop(PRESET_OPTION)
            if preset not in cls.PRESETS:
                raise InvalidParameterError(
                    f"option {prefix}{PRESET_OPTION}: unknown preset {preset!r}; "
                    f"valid presets: {', '.join(cls.PRESETS)}"
                )
            values = {**cls.PRESETS[preset], **values}
        return cls(**cls._validated(values, prefix))

    def to_kwargs(self) -> dict[str, Any]:
        """The constructor keyword arguments (fields declared with ``kwarg=False`` left out)."""
        return {s.name: getattr(self, s.name) for s in self.specs() if s.kwarg}

    def values(self) -> dict[str, Any]:
        """Every field's value (``kwarg=False`` fields included), by name."""
        return {s.name: getattr(self, s.name) for s in self.specs()}

    def with_overrides(self: P, overrides: Mapping[str, Any], *, prefix: str = "") -> P:
        """A copy with ``overrides`` (field names; strings converted as in :meth:`from_options`).

        Raises
        ------
        InvalidParameterError
            One line: a name that is not a field (``preset`` included: pick a preset with
            ``from_options({"preset": ...})``), or a value that does not convert or is out
            of range.

        Examples
        --------
        >>> NoParams().with_overrides({})
        NoParams()
        >>> try:
        ...     NoParams().with_overrides({"D": 2})
        ... except InvalidParameterError as exc:
        ...     print(exc)
        unknown option 'D'; valid options: (none)
        """
        if not overrides:
            return self
        known = {s.name for s in self.specs()}
        for name in overrides:
            if name not in known:
                raise InvalidParameterError(
                    f"unknown option {prefix + name!r}; valid options: "
                    f"{', '.join(s.label() for s in self.specs()) or '(none)'}"
                )
        return type(self).from_options({**self.values(), **overrides}, prefix=prefix)

    @classmethod
    def describe(cls) -> str:
        """A plain-text table: option, paper symbol, type, default, range, description.

        Examples
        --------
        >>> print(NoParams.describe())
        (no options)
        """
        specs = cls.specs()
        if not specs:
            return "(no options)"
        header = ("option", "symbol", "type", "default", "range", "description")
        rows = [(s.name, s.symbol, s.type_name, _show(s.default), s.bounds, s.doc) for s in specs]
        if cls.PRESETS:
            names = " | ".join(repr(p) for p in cls.PRESETS)
            rows.append((PRESET_OPTION, "", names, "-", "", "named preset (explicit options win)"))
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header) - 1)]
        lines = []
        for row in (header, *rows):
            cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
        return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, (frozenset, tuple)):
        return ",".join(sorted(value) if isinstance(value, frozenset) else value) or "(empty)"
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class NoParams(Params):
    """The parameters of a method phase that has none."""


def _as_params(cls: type[P], value: Any, argument: str) -> P:
    """``value`` as a ``cls`` instance: ``None`` -> defaults, a mapping -> ``from_options``."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        return cls.from_options(value)
    raise InvalidArgumentTypeError(
        f"{argument} must be a {cls.__name__} (or a mapping of its options), "
        f"got {type(value).__name__}"
    )


def resolve_params(
    index_class: type[P],
    query_class: type[Q],
    *,
    index_params: Any = None,
    query_params: Any = None,
    preset: str | None = None,
) -> tuple[P, Q]:
    """The ``(index params, query params)`` an index is built with.

    ``preset="NAME"`` is ``index_params=index_class.from_options({"preset": "NAME"})`` and
    ``query_params=query_class.from_options({"preset": "NAME"})`` (a class without presets,
    such as :class:`NoParams`, keeps its defaults); otherwise each params object (or a
    mapping of its options) is taken as given, ``None`` giving the defaults.

    Raises
    ------
    InvalidArgumentError
        ``preset`` together with ``index_params`` or ``query_params`` (one line).
    InvalidArgumentTypeError
        A params object of another class.
    InvalidParameterError
        An unknown preset name (naming the valid ones).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class ToyQuery(Params):
    ...     PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {"n": 1}}
    ...     n: int = param(3, doc="results", ge=1)
    >>> resolve_params(NoParams, ToyQuery, preset="paper")
    (NoParams(), ToyQuery(n=1))
    >>> try:
    ...     resolve_params(NoParams, ToyQuery, preset="paper", query_params=ToyQuery())
    ... except InvalidArgumentError as exc:
    ...     print(exc)
    pass either preset='paper' or index_params= / query_params=, not both
    """
    if preset is not None:
        if index_params is not None or query_params is not None:
            raise InvalidArgumentError(
                f"pass either preset={preset!r} or index_params= / query_params=, not both"
            )
        if not isinstance(preset, str):
            raise InvalidArgumentTypeError(f"preset must be a str, got {type(preset).__name__}")
        having = [cls for cls in (index_class, query_class) if cls.PRESETS]
        known = list(dict.fromkeys(name for cls in having for name in cls.PRESETS))
        if preset not in known:
            raise InvalidParameterError(
                f"unknown preset {preset!r}; valid presets: {', '.join(known) or '(none)'}"
            )
        index = index_class.from_options({PRESET_OPTION: preset} if index_class.PRESETS else {})
        query = query_class.from_options({PRESET_OPTION: preset} if query_class.PRESETS else {})
        return index, query
    return (
        _as_params(index_class, index_params, "index_params"),
        _as_params(query_class, query_params, "query_params"),
    )


def bind_query_params(
    current: Q, query_params: Any = None, overrides: Mapping[str, Any] | None = None
) -> Q:
    """The query params of ``as_retriever(query_params=..., **overrides)``: ``query_params``
    (a ``type(current)`` instance or a mapping of its options; ``None``: ``current``) with the
    validated ``overrides``.

    Raises
    ------
    InvalidParameterError
        An override that is not a field of ``type(current)``, or a bad value.
    InvalidArgumentTypeError
        ``query_params`` of another class.
    """
    base = (
        current if query_params is None else _as_params(type(current), query_params, "query_params")
    )
    return base.with_overrides(overrides or {})


def key_values(items: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` items (command-line options) as a dict of strings, for
    :meth:`Params.from_options`.

    Examples
    --------
    >>> key_values(["choice_scoring=permuted", "choice_ratio=0.3"])
    {'choice_scoring': 'permuted', 'choice_ratio': '0.3'}
    >>> key_values(["k"])
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.GraphRAGError: option 'k' is not KEY=VALUE

    Raises
    ------
    GraphRAGError
        An item without ``=`` or key, or a key given twice.
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise GraphRAGError(f"option {item!r} is not KEY=VALUE")
        if key in out:
            raise GraphRAGError(f"option {key} is given twice")
        out[key] = raw
    return out
