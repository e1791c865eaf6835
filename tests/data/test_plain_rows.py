"""`convert.plain` gives the value itself where it is JSON-ready already, else the copy it always made
(tuples as lists, Mappings as dicts with text keys), on any value."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store import convert
from tests.hypothesis_budget import examples


def _copy_by_definition(value):
    if isinstance(value, (dict, OrderedDict, MappingProxyType)):
        return {str(k): _copy_by_definition(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_by_definition(v) for v in value]
    return value


_keys = st.text(max_size=3) | st.integers(-2, 2) | st.none() | st.booleans()
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
    | st.dictionaries(_keys, inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=2).map(MappingProxyType),
    max_leaves=10)


def _typed(value):
    """The value with its container types spelt out (== alone says a tuple equals nothing, a list a list)."""
    if isinstance(value, dict):
        return ("dict", [(type(k).__name__, k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


@settings(max_examples=examples(600), deadline=None)
@given(_values)
def test_plain_is_the_copy_by_definition(value):
    got = convert.plain(value)
    assert _typed(got) == _typed(_copy_by_definition(value))


def test_a_json_ready_value_is_not_copied_and_others_are():
    """The companion: both paths are taken."""
    ready = {"a": [1, {"b": None}], "c": "x"}
    assert convert.plain(ready) is ready
    for other in ({"a": (1, 2)}, {1: "x"}, MappingProxyType({"a": 1}), [{"a": {True: 1}}]):
        copied = convert.plain(other)
        assert copied is not other and _typed(copied) == _typed(_copy_by_definition(other))
