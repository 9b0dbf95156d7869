"""Typed parameter dataclasses: one place for a method's options, their paper symbols and checks.

A method describes its options as a frozen dataclass deriving from :class:`Params`, each field
made with :func:`param` (default, paper symbol, one doc line, optional bounds).
:meth:`Params.from_options` turns a mapping of option names to values (Python values, or the
strings of a command line) into a validated instance; :meth:`Params.to_kwargs` gives the
keyword arguments of the method's constructor; :meth:`Params.describe` is the table the CLI
and the docs print.

Supported field types: ``int``, ``float``, ``bool``, ``str``, ``Literal[...]``,
``X | None``, ``tuple[str, ...]`` and ``frozenset[str]``. A string value is converted to the
field type (``"3"`` -> 3, ``"true"``/``"false"`` -> bool, ``"none"`` -> ``None`` for an
optional field, ``"a,b"`` or ``'["a", "b"]'`` -> a collection of strings).

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
>>> for bad in ({"KK": 5}, {"K": "0"}, {"mode": "slow"}):
...     try:
...         ToyParams.from_options(bad, prefix="toy.")
...     except InvalidParameterError as exc:
...         print(exc)
unknown option 'toy.KK'; valid options: K, mode
option toy.K: must be >= 1, got 0
option toy.mode: expected one of 'fast', 'exact', got 'slow'
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

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

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
_NONE = frozenset({"none", "null"})
#: The option name that selects a preset (never a field name).
PRESET_OPTION = "preset"


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
    >>> spec.default, spec.metadata["symbol"]
    (0.5, 'λ')
    """
    meta = {"doc": doc, "symbol": symbol, "ge": ge, "gt": gt, "le": le, "lt": lt, "kwarg": kwarg}
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
        lower = [f">= {self.ge:g}"] if self.ge is not None else []
        lower += [f"> {self.gt:g}"] if self.gt is not None else []
        upper = [f"<= {self.le:g}"] if self.le is not None else []
        upper += [f"< {self.lt:g}"] if self.lt is not None else []
        if self.ge is not None and self.le is not None:
            return f"[{self.ge:g}, {self.le:g}]"
        return ", ".join(lower + upper)

    def label(self) -> str:
        """``name (symbol)``, or ``name`` when the symbol is the name or empty."""
        return self.name if self.symbol in ("", self.name) else f"{self.name} ({self.symbol})"


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
    """Raise TypeError (at class definition) for a field type :func:`convert` cannot handle."""
    inner = _optional_inner(tp)
    if inner is not None:
        _check_type(inner)
        return
    origin = get_origin(tp)
    if origin is Literal:
        return
    if origin is tuple and get_args(tp) == (str, Ellipsis):
        return
    if origin is frozenset and get_args(tp) == (str,):
        return
    if tp in (int, float, bool, str):
        return
    raise TypeError(f"unsupported parameter type {tp!r}")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"invalid JSON list {value!r}") from exc
        else:
            return [part.strip() for part in text.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"expected strings (comma-separated or a list), got {value!r}")


def convert(tp: Any, value: Any) -> Any:
    """``value`` as type ``tp``; strings (command-line values) are parsed.

    Raises
    ------
    ValueError
        If the value cannot be read as ``tp``.

    Examples
    --------
    >>> convert(int, "3"), convert(bool, "off"), convert(float | None, "none")
    (3, False, None)
    >>> sorted(convert(frozenset[str], "DATE, TIME"))
    ['DATE', 'TIME']
    """
    inner = _optional_inner(tp)
    if inner is not None:
        if value is None or (isinstance(value, str) and value.strip().lower() in _NONE):
            return None
        return convert(inner, value)
    origin = get_origin(tp)
    if origin is Literal:
        for choice in get_args(tp):
            if value == choice or (isinstance(value, str) and value == str(choice)):
                return choice
        allowed = ", ".join(repr(c) for c in get_args(tp))
        raise ValueError(f"expected one of {allowed}, got {value!r}")
    if origin is tuple:
        return tuple(_strings(value))
    if origin is frozenset:
        return frozenset(_strings(value))
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError(f"expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError(f"expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                pass
            else:
                if math.isfinite(number):
                    return number
        raise ValueError(f"expected a finite number, got {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ValueError(f"expected a string, got {value!r}")
    raise TypeError(f"unsupported parameter type {tp!r}")


def _check_bounds(spec: ParamSpec, value: Any) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    if spec.ge is not None and value < spec.ge:
        raise ValueError(f"must be >= {spec.ge:g}, got {value!r}")
    if spec.gt is not None and value <= spec.gt:
        raise ValueError(f"must be > {spec.gt:g}, got {value!r}")
    if spec.le is not None and value > spec.le:
        raise ValueError(f"must be <= {spec.le:g}, got {value!r}")
    if spec.lt is not None and value >= spec.lt:
        raise ValueError(f"must be < {spec.lt:g}, got {value!r}")


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
        for spec in self.specs():
            value = getattr(self, spec.name)
            try:
                checked = convert(spec.type, value)
                _check_bounds(spec, checked)
            except ValueError as exc:
                raise InvalidParameterError(f"option {spec.name}: {exc}") from None
            if checked is not value:
                object.__setattr__(self, spec.name, checked)

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
                    doc=str(meta.get("doc", "")),
                    symbol=str(meta.get("symbol", "")),
                    ge=meta.get("ge"),
                    gt=meta.get("gt"),
                    le=meta.get("le"),
                    lt=meta.get("lt"),
                    kwarg=bool(meta.get("kwarg", True)),
                )
            )
        result = tuple(specs)
        type.__setattr__(cls, "_specs_cache", result)
        return result

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
            preset, or a value that does not convert or is out of range.
        """
        known = {s.name: s for s in cls.specs()}
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
        converted: dict[str, Any] = {}
        for name, value in values.items():
            try:
                converted[name] = convert(known[name].type, value)
                _check_bounds(known[name], converted[name])
            except ValueError as exc:
                raise InvalidParameterError(f"option {prefix}{name}: {exc}") from None
        return cls(**converted)

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
