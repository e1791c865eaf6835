"""The thread repair skips what cannot need cleaning (`thread_repair._clean_fields`, `clean_json`) and
gives exactly what the full walk gives (`tests/reference/thread_repair_walk.py`) on any value."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.model import Message, Role, Summary, ToolCall
from inspector.thread_repair import _clean_fields, _unchanged, clean_json
from tests.hypothesis_budget import examples
from tests.reference.thread_repair_walk import clean_fields as reference_fields
from tests.reference.thread_repair_walk import clean_value as reference_value

_texts = st.text(alphabet=st.sampled_from("ab \\u0\x00\ud800\udfff\U0001f600é\"\n"), max_size=8)
_scalars = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | _texts
            | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([b"x", Role.USER, frozenset()]))
_keys = _texts | st.integers(-3, 3) | st.sampled_from([None, True, 1.5, math.nan, ("t",)])
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(_keys, inner, max_size=4), max_leaves=12)
_json_values = st.recursive(  # what a tool call's arguments can hold (it encodes them as JSON)
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | _texts | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3), max_leaves=8)


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN and types alike (a tuple stays a tuple)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a.items(), b.items(), strict=True))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@settings(max_examples=examples(600), deadline=None)
@given(_values)
def test_a_json_value_is_cleaned_as_the_full_walk_cleans_it(value):
    found, expected_found = set(), set()
    got, changed = clean_json(value, found)
    expected, expected_changed = reference_value(value, expected_found)
    assert changed == expected_changed and found == expected_found and _same(got, expected)
    if not changed:
        assert got is value  # nothing copied


_maybe_text = _texts | st.none() | st.integers(0, 3)


@settings(max_examples=examples(300), deadline=None)
@given(st.builds(Message, id=_texts, role=st.sampled_from(list(Role)), content=_maybe_text, meta=_values,
                 tool_calls=st.lists(st.builds(ToolCall, id=_texts, name=_maybe_text, arguments=_json_values),
                                     max_size=2).map(tuple),
                 name=_maybe_text, relevance=st.none() | st.floats(allow_nan=True)),
       st.builds(Summary, id=_texts, first_message_id=_texts, last_message_id=_texts, summary=_maybe_text,
                 key_facts=st.lists(_maybe_text, max_size=3).map(tuple), meta=_values))
def test_a_message_and_a_summary_are_cleaned_as_the_full_walk_cleans_them(message, summary):
    for obj in (message, summary):
        found, expected_found = set(), set()
        got, changed = _clean_fields(obj, found)
        expected, expected_changed = reference_fields(obj, expected_found)
        assert changed == expected_changed and found == expected_found
        assert _same(got.meta, expected.meta) and repr(got) == repr(expected)


def test_the_values_drawn_need_cleaning_and_not():
    """The companion: both cases occur, each kind of repair."""
    found: set[str] = set()
    assert clean_json({"a": ["x\x00", {"b\ud800": math.inf}]}, found)[1]
    assert found == {"NUL characters", "lone surrogates", "non-finite numbers"}
    clean = {"a": ["x \\u0000 named", {"b": 1.5, "c": None}], "d": "é"}
    assert clean_json(clean, set()) == (clean, False)


@settings(max_examples=examples(300), deadline=None)
@given(st.builds(Message, id=_texts, role=st.sampled_from(list(Role)), content=_maybe_text, meta=_values,
                 tool_calls=st.lists(st.builds(ToolCall, id=_maybe_text, name=_maybe_text, arguments=_json_values),
                                     max_size=2).map(tuple),
                 tool_call_id=_maybe_text, name=_maybe_text, created_at=_maybe_text),
       st.builds(Summary, id=_texts, first_message_id=_texts, last_message_id=_texts, summary=_maybe_text,
                 previous_summary_id=_maybe_text, key_facts=st.lists(_maybe_text, max_size=3).map(tuple),
                 meta=_values))
def test_the_one_look_says_unchanged_only_where_the_full_walk_changes_nothing(message, summary):
    """`_unchanged` (the look at a whole object that lets `_clean_fields` return it as it is) against the
    field by field walk: where it says True, the walk changes nothing and finds nothing to say."""
    for obj in (message, summary):
        found: set[str] = set()
        expected, changed = reference_fields(obj, found)
        if _unchanged(obj):
            assert not changed and not found and expected is obj


def test_clean_real_messages_take_the_one_look_and_dirty_ones_do_not():
    """The companion: a clean message (text, tool calls, nested JSON meta) is told unchanged at once; each
    kind of repair in any field sends it to the field by field code."""
    clean = Message(id="m1", role=Role.ASSISTANT, content="héllo 😀", name=None, created_at="2026-01-01",
                    tool_calls=(ToolCall(id="c1", name="Bash", arguments={"command": "ls", "n": [1, 2.5, None]}),),
                    meta={"toolUseResult": {"stdout": "x" * 100, "nested": [{"a": True}, ("t", 3)]}, "line": 4})
    assert _unchanged(clean)
    assert _clean_fields(clean, set()) == (clean, False)
    dirty = [
        dataclasses.replace(clean, content="a\x00b"),
        dataclasses.replace(clean, name="\ud800"),
        dataclasses.replace(clean, created_at=5),
        dataclasses.replace(clean, meta={"x": {"y": [math.nan]}}),
        dataclasses.replace(clean, meta={"x": {"k\x00": 1}}),
        dataclasses.replace(clean, meta={1: "a"}),
        dataclasses.replace(clean, meta={"x": b"bytes"}),
        dataclasses.replace(clean, tool_calls=(ToolCall(id="c1", name="Bash", arguments={"c": "\udfff"}),)),
        dataclasses.replace(clean, tool_calls=(ToolCall(id=None, name="Bash"),)),  # type: ignore[arg-type]
        Summary(id="s", first_message_id="a", last_message_id="b", summary="ok", key_facts=("f", 3)),  # type: ignore[arg-type]
    ]
    for obj in dirty:
        assert not _unchanged(obj), obj
    assert _clean_fields(dirty[0], set())[1] and _clean_fields(dirty[3], set())[1]
