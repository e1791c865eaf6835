"""`json.dumps(value, indent=2, ensure_ascii=False)`'s exact text (and `sort_keys=True` on one line:
`sorted_line`), written by msgspec where it is the same.

Python's json writes indented JSON with its pure-Python encoder (its C encoder is used only without
an indent): a 50,000-request timeline took 12 s of a 13 s `simulate --timeline --json`. msgspec's
encoder and `format` give the same characters (`tests/data/test_indented_json.py`, hypothesis
against json) for a value made of exactly dict (text keys), list, tuple, str, int, bool and None,
and floats json writes without an exponent: 0 and 1e-4 <= |x| < 1e16 (outside that, json writes
`1e-07` and `1e+16` where msgspec writes `1e-7` and `1e16`). One walk of the containers tells;
anything else (NaN, subclasses such as enums, a value that holds itself) is json's, as before.
"""

from __future__ import annotations

from typing import Any

from msgspec.json import Encoder, format

_encode = Encoder().encode
_encode_sorted = Encoder(order="sorted").encode

_WALK_LIMIT = 1 << 24
"""Containers and items walked at most (a value that holds itself goes to json, which says so)."""

_SCALARS = frozenset({str, int, bool, type(None)})


def indented(value: Any) -> str | None:
    """The text of `json.dumps(value, indent=2, ensure_ascii=False)`, or None where only json can say."""
    if not _plain(value):
        return None
    try:
        return format(_encode(value), indent=2).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError, ValueError, TypeError, OverflowError):
        return None  # a lone surrogate, an integer msgspec cannot write: json decides


def sorted_line(value: Any) -> str | None:
    """The text of `json.dumps(value, ensure_ascii=False, sort_keys=True)` (one line, `", "` and `": "`
    between items: a tool call's arguments as the model counts them), or None where only json can say.
    msgspec sorts text keys by their UTF-8 bytes, which is code point order, json's."""
    if type(value) is dict and not value:
        return "{}"
    if not _plain(value):
        return None
    try:
        return format(_encode_sorted(value), indent=0).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError, ValueError, TypeError, OverflowError):
        return None  # a lone surrogate, an integer msgspec cannot write: json decides


def _plain(value: Any) -> bool:
    stack = [value]
    pop, push = stack.pop, stack.append
    budget = _WALK_LIMIT
    scalars = _SCALARS
    while stack:
        budget -= 1
        if budget <= 0:
            return False
        item = pop()
        kind = type(item)
        if kind in scalars:
            continue
        if kind is float:
            if not (item == 0.0 or 1e-4 <= abs(item) < 1e16):
                return False  # an exponent, NaN or an infinity
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            budget -= len(item)
            for v in item.values():
                kv = type(v)
                if kv in scalars:
                    continue
                push(v)
        elif kind is list or kind is tuple:
            budget -= len(item)
            for v in item:
                if type(v) in scalars:
                    continue
                push(v)
        else:
            return False
    return True
