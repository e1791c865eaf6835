"""The text a JSON column is written as: `json.dumps(convert.plain(value))`'s values, encoded by msgspec
where it gives the same.

msgspec writes a value several times faster than json (Claude Code's `toolUseResult` meta alone is
most of a transcript), but not always the same values: NaN and Infinity become `null`, and it encodes
types json refuses (dates, bytes, sets, Decimals, enums, dataclasses). It is used only for a value
made of exactly dict (text keys), list, str, int, bool, None and finite floats, which one walk of the
containers tells (`_encodable`); anything else, and whatever msgspec refuses (a lone surrogate, which
UTF-8 cannot hold; an integer past Python's digit limit), is json's: the same text, or the same
error, as the store wrote before. The text differs in form only (no spaces, non-ASCII written as
itself): the reader's `json.loads` gives the same values, key order included
(`tests/data/test_json_text.py` pins it against `json.dumps` round trips).

A non-UTF-8 PostgreSQL database cannot hold every character written as itself: the writer asks for
json's ASCII text there (`ascii=True`).
"""

from __future__ import annotations

import json
from typing import Any

from inspector.store.convert import plain

try:
    from msgspec.json import Encoder as _Encoder

    _encode: Any = _Encoder().encode
except ImportError:  # pragma: no cover - msgspec is a dependency; json alone gives the same values
    _encode = None

_WALK_LIMIT = 1 << 22
"""Containers and items walked at most: a value that holds itself goes to json (which says so)."""

_FLAT = frozenset({str, int, bool, type(None)})
"""Scalar types msgspec writes as json does (a float also, when finite)."""

_dumps = json.dumps


def json_text(value: Any, *, ascii: bool = False) -> str:
    """The JSON text of `value` as the store writes it (see the module docstring); json's TypeError or
    ValueError for a value json cannot write."""
    if _encode is not None and not ascii and _encodable(value):
        try:
            return _encode(value).decode("utf-8")
        except (UnicodeEncodeError, ValueError, TypeError, OverflowError):  # json decides
            pass
    return _dumps(plain(value))


def _encodable(value: Any) -> bool:
    """Whether every container of `value` is a dict with text keys or a list, and every item a str,
    int, bool, None or finite float, each of exactly that type (a subclass may encode otherwise)."""
    kind = type(value)
    if kind in _FLAT:
        return True
    stack = [value]
    pop, push = stack.pop, stack.append
    budget = _WALK_LIMIT
    while stack:
        budget -= 1
        if budget <= 0:
            return False
        item = pop()
        kind = type(item)
        if kind is dict:
            if item and set(map(type, item)) != _STR:
                return False
            items = item.values()
        elif kind is list:
            items = item
        elif kind is float:
            if item - item != 0.0:  # inf - inf and nan - nan are nan
                return False
            continue
        elif kind in _FLAT:
            continue
        else:
            return False
        if not items:
            continue
        kinds = set(map(type, items))
        if kinds <= _FLAT:  # the common leaf: texts and numbers only, told in C
            continue
        if kinds <= _FLAT_OR_FLOAT:
            if not _finite(items):
                return False
            continue
        budget -= len(items)
        for sub in items:
            if type(sub) not in _FLAT:
                push(sub)
    return True


_STR = {str}
_FLAT_OR_FLOAT = _FLAT | {float}


def _finite(items: Any) -> bool:
    """Whether every float among `items` (texts, numbers, None) is finite."""
    return not any(type(item) is float and item - item != 0.0 for item in items)


__all__ = ["json_text"]
