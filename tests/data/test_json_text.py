"""`json_text` (the JSON columns' text, msgspec where it gives the same) against the text the store wrote
before (`json.dumps(convert.plain(value))`, tests/reference/store_rows.py): decoded by the reader's
`json.loads`, the same values with the same types and key order, or the same error, on any value."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
from collections import OrderedDict
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store.json_text import json_text
from tests.helpers import typed_value
from tests.hypothesis_budget import examples
from tests.reference.store_rows import json_text as reference_text


class Colour(enum.IntEnum):
    RED = 1


class Shade(enum.StrEnum):
    DARK = "dark"


class Text(str):
    pass


class Number(int):
    pass


class Real(float):
    pass


def _huge() -> int:
    """An integer past Python's digit limit (json and msgspec both refuse to write it)."""
    return 10**5000


_texts = st.text(max_size=4) | st.text(st.characters(codec=None), max_size=4)  # lone surrogates too
_odd = st.sampled_from([datetime.date(2026, 1, 2), datetime.datetime(2026, 1, 2, 3, 4), b"x", bytearray(b"y"),
                        decimal.Decimal("1.5"), {1, 2}, frozenset({"a"}), Colour.RED, Shade.DARK, Text("t"),
                        Number(3), Real(2.5), complex(1, 2)]) | st.builds(_huge)
_leaves = (st.none() | st.booleans() | st.integers() | st.integers(-(2**70), 2**70) | st.floats() | _texts
           | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 2**64, -(2**63) - 1, 1e16, 5e-324]))
_keys = _texts | st.integers(-2, 2) | st.none() | st.booleans() | st.floats(allow_nan=False) | st.just(Text("k"))


def _values(odd: bool):
    leaves = _leaves | _odd if odd else _leaves
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
        | st.dictionaries(_texts, inner, max_size=4)
        | st.dictionaries(_keys, inner, max_size=3)
        | st.dictionaries(_texts, inner, max_size=2).map(MappingProxyType)
        | st.dictionaries(_texts, inner, max_size=2).map(OrderedDict),
        max_leaves=12)


_typed = typed_value


def _outcome(encode, value):
    try:
        text = encode(value)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return ("error", type(exc), str(exc))
    assert type(text) is str
    return ("value", _typed(json.loads(text)))


@settings(max_examples=examples(1500), deadline=None)
@given(_values(odd=False))
def test_json_values_read_back_as_the_reference_text(value):
    assert _outcome(json_text, value) == _outcome(reference_text, value)


@settings(max_examples=examples(900), deadline=None)
@given(_values(odd=True))
def test_any_value_reads_back_or_fails_as_the_reference_text(value):
    assert _outcome(json_text, value) == _outcome(reference_text, value)


@settings(max_examples=examples(300), deadline=None)
@given(_values(odd=True))
def test_ascii_text_is_the_reference_text_itself(value):
    assert _outcome(lambda v: json_text(v, ascii=True), value)[0] == _outcome(reference_text, value)[0]
    try:
        expected = reference_text(value)
    except Exception:  # noqa: BLE001 - the same failure, compared above
        return
    assert json_text(value, ascii=True) == expected


def test_both_paths_are_taken():
    """The companion: msgspec's compact text for a JSON value, json's where msgspec would differ."""
    assert json_text({"a": [1, 2.5, "é", None, True], "b": {}}) == '{"a":[1,2.5,"é",null,true],"b":{}}'
    assert json_text({"a": math.nan}) == '{"a": NaN}'  # msgspec would write null
    assert json_text(["\ud800"]) == '["\\ud800"]'  # UTF-8 cannot hold it
    assert json_text((1, {2: "x"})) == '[1, {"2": "x"}]'  # a copy first, as convert.plain makes
    for refused in (datetime.date(2026, 1, 2), b"x", {1, 2}, Text("t")):
        assert _outcome(json_text, [refused]) == _outcome(reference_text, [refused])
    assert _outcome(json_text, [b"x"])[0] == "error"  # msgspec would write base64
    assert json_text([Colour.RED, Text("t")]) == "[1, \"t\"]"  # json's text for what it takes
