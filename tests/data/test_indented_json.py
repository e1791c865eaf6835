"""msgspec's indented JSON is used only where it is json's text, character for character."""

from __future__ import annotations

import json
import math
from enum import StrEnum

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.indented_json import indented, sorted_line
from inspector.model import ToolCall
from inspector.terminal_safety import JSON_UNSAFE, json_dumps


def reference(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


class Colour(StrEnum):
    RED = "red"


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.text(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-4, 9.999e-5, 1e16, 9999999999999998.0, 1e15, 0.1, 5e-324, 1.7976931348623157e308]),
)
plain_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=25,
)


text_without_surrogates = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)  # UTF-8 holds them


@settings(max_examples=300)
@given(plain_values)
def test_where_msgspec_writes_it_the_text_is_json_s(value):
    text = indented(value)
    if text is not None:
        assert text == reference(value)


@settings(max_examples=200)
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), text_without_surrogates,
              st.floats(min_value=1e-4, max_value=1e15), st.just(0.0)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(text_without_surrogates, inner, max_size=4)),
    max_leaves=25,
))
def test_values_without_an_exponent_take_the_fast_path(value):
    assert indented(value) == reference(value)


def test_what_only_json_can_write_is_left_to_it():
    for value in ({"t": 1e-07}, [1e16], {"n": math.nan}, {"i": math.inf}, {"e": Colour.RED}, {1: "int key"},
                  {"s": {1, 2}}, "\ud800"):
        assert indented(value) is None, value
    looped: list = []
    looped.append(looped)
    assert indented(looped) is None


def test_json_dumps_keeps_its_escapes_and_nulls_on_either_path():
    fast = {"c1": "\x9b[31m", "bidi": "\u202e", "cost": 0.25, "tokens": [1, 2]}
    assert json_dumps(fast) == reference(fast).translate(JSON_UNSAFE)
    assert "\\u009b" in json_dumps(fast) and "\\u202e" in json_dumps(fast)
    slow = {"price": math.inf, "small": 1e-07}
    assert json.loads(json_dumps(slow)) == {"price": None, "small": 1e-07}


def sorted_reference(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


_any_keys = st.text(st.sampled_from("aAzZ_ é\x00\x1f\x7f\u2028😀\uffff"), max_size=4)


@settings(max_examples=400)
@given(st.recursive(
    scalars | st.sampled_from(["\x00\x1f\x7f\u2028\u2029\"\\/", "\ud800"]),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(_any_keys, inner, max_size=5)),
    max_leaves=25))
def test_a_sorted_line_is_json_s_sorted_text_where_msgspec_writes_it(value):
    """`sorted_line` (a tool call's arguments text, `ToolCall.arguments_json`) against json's sorted text:
    the same characters, key order included, wherever it gives one."""
    text = sorted_line(value)
    if text is not None:
        assert text == sorted_reference(value)


@settings(max_examples=200)
@given(st.dictionaries(_any_keys.filter(lambda k: "\ud800" not in k), st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), text_without_surrogates,
              st.floats(min_value=1e-4, max_value=1e15), st.just(0.0)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text_without_surrogates, inner, max_size=3),
    max_leaves=12), max_size=6))
def test_tool_call_arguments_take_the_fast_path_and_keep_json_s_text(arguments):
    assert sorted_line(arguments) == sorted_reference(arguments)
    assert ToolCall(id="c", name="n", arguments=arguments).arguments_json() == sorted_reference(arguments)


def test_what_only_json_can_sort_is_left_to_it():
    for value in ({"t": 1e-07}, [1e16], {"n": math.nan}, {1: "int key"}, {"e": Colour.RED}, {"k": "\ud800"}):
        assert sorted_line(value) is None, value
    assert ToolCall(id="c", name="n", arguments={"n": math.nan, "t": 1e-07}).arguments_json() == \
        '{"n": NaN, "t": 1e-07}'
