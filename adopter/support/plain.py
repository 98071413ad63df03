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
from typing import Callable


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
    return _decoder(kind)(data)


@lru_cache(maxsize=None)
def _decoder(kind) -> Callable:
    """The checking decoder of one type, built once: a cache hit decodes thousands of values,
    and walking the type's annotations for each of them cost more than the checks."""
    origin = typing.get_origin(kind)
    if kind is typing.Any:
        return lambda data: data
    if origin in (typing.Union, types.UnionType):
        options = [_decoder(option) for option in typing.get_args(kind)]

        def union(data):
            for option in options:
                try:
                    return option(data)
                except ValueError:
                    pass
            raise ValueError(f"{data!r:.60} is none of {kind}")
        return union
    if kind is type(None):
        return lambda data: _expect(data, data is None, kind)
    if kind is bool:
        return lambda data: _expect(data, isinstance(data, bool), kind)
    if kind is int:
        return lambda data: _expect(data, isinstance(data, int) and not isinstance(data, bool), kind)
    if kind is float:
        return lambda data: _expect(data, isinstance(data, (int, float)) and not isinstance(data, bool), kind)
    if kind is str:
        return lambda data: _expect(data, isinstance(data, str), kind)
    if dataclasses.is_dataclass(kind):
        fields = {name: _decoder(hint) for name, hint in _hints(kind).items()}
        names = set(fields)

        def record(data):
            _expect(data, isinstance(data, dict) and data.keys() == names, kind)
            return kind(**{name: decode(data[name]) for name, decode in fields.items()})
        return record
    if kind is dict or kind is list:  # unparameterised: any JSON value of that shape
        return lambda data: _expect(data, isinstance(data, kind), kind)
    if origin is list:
        (item,) = typing.get_args(kind)
        decode_item = _decoder(item)
        return lambda data: [decode_item(x) for x in _expect(data, isinstance(data, list), kind)]
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            decode_item = _decoder(args[0])
            return lambda data: tuple(decode_item(x) for x in _expect(data, isinstance(data, list), kind))
        decoders = [_decoder(a) for a in args]

        def fixed(data):
            _expect(data, isinstance(data, list) and len(data) == len(decoders), kind)
            return tuple(decode(x) for decode, x in zip(decoders, data))
        return fixed
    if origin is dict:
        key, item = typing.get_args(kind)
        decode_key, decode_value = _decoder(key), _decoder(item)
        return lambda data: {decode_key(k): decode_value(v) for k, v in _expect(data, isinstance(data, dict), kind).items()}
    raise TypeError(f"from_plain cannot build {kind}")


def _expect(data, ok: bool, kind):
    if not ok:
        raise ValueError(f"{data!r:.60} is not a {kind}")
    return data


@lru_cache(maxsize=None)
def _hints(kind) -> dict:
    hints = typing.get_type_hints(kind)
    return {f.name: hints[f.name] for f in dataclasses.fields(kind) if f.init}
