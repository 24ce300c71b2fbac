"""The dataclasses of lockstudy.model as JSON, for results.json and
floor.json: a float that is not finite is written as the string "nan",
"inf" or "-inf" (JSON has no such numbers); tuples are lists.  Reading
builds the dataclass from its type hints.

Calls no other module of the package.
"""

import dataclasses
import json
import math
import typing
from typing import Any


def encode(x: Any) -> Any:
    """A value as results.json holds it."""
    if dataclasses.is_dataclass(x):
        return {f.name: encode(getattr(x, f.name))
                for f in dataclasses.fields(x)}
    if isinstance(x, (tuple, list)):
        return [encode(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def decode(kind: Any, x: Any) -> Any:
    """The value of type kind that _encode wrote as x."""
    if x is None:
        return None
    origin = typing.get_origin(kind)
    if origin is typing.Union:
        return decode([a for a in typing.get_args(kind)
                        if a is not type(None)][0], x)
    if origin is tuple:
        return tuple(decode(typing.get_args(kind)[0], v) for v in x)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: decode(hints[f.name], x[f.name])
                       for f in dataclasses.fields(kind) if f.name in x})
    if kind is float:
        return float(x)
    return x


def encode_json(x: Any) -> str:
    """The JSON text of a dataclass of lockstudy.model, as results.json
    holds it (floor.json too)."""
    return json.dumps(encode(x), indent=1, allow_nan=False) + "\n"


def decode_json(kind: Any, text: str) -> Any:
    """The dataclass kind that encode_json wrote as text."""
    return decode(kind, json.loads(text))
