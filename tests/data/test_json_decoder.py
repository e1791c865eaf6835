"""The importers' decoder (`_common.loads`: msgspec, json deciding what msgspec refuses) gives exactly
what `json.loads` gives, value for value and error for error, on any text."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.importers import _common
from tests.hypothesis_budget import examples

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**40, 10**40) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None), max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)
_documents = st.builds(lambda v, ascii_only: json.dumps(v, ensure_ascii=ascii_only), _values, st.booleans())
_noise = st.lists(st.sampled_from(['{', '}', '[', ']', '"', ':', ',', ' ', '\n', '\t', '\x0c', 'NaN', 'Infinity', '-',
                                   '1e400', '1.', '.5', '01', '0', '7', 'true', 'nul', '"\\ud800"', '"\\udc00\\ud800"',
                                   '"\\u00e9"', '"\\x"', '\ufeff', 'é', '\x00', '"a"', '1e5', '-0', '"\ud800"']),  # the last: a lone surrogate
                 max_size=12).map("".join)


def _outcome(decode, text):
    try:
        return "value", _typed(decode(text))
    except RecursionError:
        return "error", "RecursionError"
    except json.JSONDecodeError as exc:
        return "error", (exc.msg, exc.pos)


def _typed(value):
    """The value with every type spelt out, NaN as a word (NaN != NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


@settings(max_examples=examples(900), deadline=None)
@given(_documents | _noise | st.builds(lambda d, n: d[: len(d) // 2] + n, _documents, _noise))
def test_the_importers_decoder_is_json_loads(text):
    assert _outcome(_common.loads, text) == _outcome(json.loads, text)


def test_both_decoders_are_used():
    """The companion: msgspec answers the plain documents, json what msgspec refuses."""
    assert _common._fast_loads is not None and _common._fast_loads('{"a": [1, 2.5, "é"]}') == {"a": [1, 2.5, "é"]}
    for refused in ('{"a": NaN}', '"\\ud800"', '[1e400]'):
        assert _outcome(_common.loads, refused) == _outcome(json.loads, refused)
        try:
            _common._fast_loads(refused)
        except ValueError:
            continue
        raise AssertionError(f"msgspec now decodes {refused!r}: the fallback is no longer exercised by it")


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                 "\u2028", "\u2029", "{}"]), max_size=40).map("".join), st.integers(0, 12))
def test_detection_s_first_lines_are_the_texts_first_lines(text, count):
    """`first_lines` (detection's sample, cut at the newline after them) against `splitlines` of the whole
    text, with every line break `splitlines` knows."""
    assert _common.first_lines(text, count) == text.splitlines()[:count]
