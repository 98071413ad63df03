"""Dataclasses to plain JSON values and back, checked against the fields' types.

The cache stores records as JSON, a format that cannot run code when read. Reading one
back checks every value against its field's type, so an entry that does not fit (a
flipped bit that still parses, an entry of an older layout) raises `ValueError` and the
caller treats it as a miss instead of returning a wrong record.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache


def to_plain(value):
    """A dataclass (nested in lists, tuples and dicts) as JSON-ready lists, dicts and scalars."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


def from_plain(kind, data):
    """`data` (from `to_plain`, through JSON) as a value of type `kind`; ValueError when it does not fit."""
    origin = typing.get_origin(kind)
    if kind is typing.Any:
        return data
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(kind):
            try:
                return from_plain(option, data)
            except ValueError:
                pass
        raise ValueError(f"{data!r:.60} is none of {kind}")
    if kind is type(None):
        return _expect(data, data is None, kind)
    if kind is bool:
        return _expect(data, isinstance(data, bool), kind)
    if kind is int:
        return _expect(data, isinstance(data, int) and not isinstance(data, bool), kind)
    if kind is float:
        return _expect(data, isinstance(data, (int, float)) and not isinstance(data, bool), kind)
    if kind is str:
        return _expect(data, isinstance(data, str), kind)
    if dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        _expect(data, isinstance(data, dict) and set(data) == set(hints), kind)
        return kind(**{name: from_plain(hint, data[name]) for name, hint in hints.items()})
    if kind is dict or kind is list:  # unparameterised: any JSON value of that shape
        return _expect(data, isinstance(data, kind), kind)
    if origin is list:
        (item,) = typing.get_args(kind)
        return [from_plain(item, x) for x in _expect(data, isinstance(data, list), kind)]
    if origin is tuple:
        args = typing.get_args(kind)
        _expect(data, isinstance(data, list), kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], x) for x in data)
        _expect(data, len(data) == len(args), kind)
        return tuple(from_plain(a, x) for a, x in zip(args, data))
    if origin is dict:
        key, item = typing.get_args(kind)
        _expect(data, isinstance(data, dict), kind)
        return {from_plain(key, k): from_plain(item, v) for k, v in data.items()}
    raise TypeError(f"from_plain cannot build {kind}")


def _expect(data, ok: bool, kind):
    if not ok:
        raise ValueError(f"{data!r:.60} is not a {kind}")
    return data


@lru_cache(maxsize=None)
def _hints(kind) -> dict:
    hints = typing.get_type_hints(kind)
    return {f.name: hints[f.name] for f in dataclasses.fields(kind) if f.init}
