"""`_common.iter_jsonl` decodes a line msgspec takes inline (its depth checked by `_deeper`, the braces
counted first) and hands every other line to `decode_json`: the same records and the same warnings as
the general path (every line through `decode_json`, the depth check counting both brackets), on lines of
every shape: objects, other values, too deep by either bracket, NaN, lone surrogates, invalid text,
blank lines and other white space."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.importers import _common
from inspector.importers._common import MAX_DEPTH, iter_jsonl, too_deep
from tests.hypothesis_budget import examples


def _general_decode(text: str):
    """`decode_json` as it was written before the inline path: both brackets counted, then the walk."""
    try:
        value = _common.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and too_deep(value):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _general(text: str, name: str, skipped: list[str]):
    """The general path: every line through the decoder above (the loop iter_jsonl had)."""
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.isspace():
            continue
        try:
            try:
                value = _general_decode(line)
            except json.JSONDecodeError:
                value = _general_decode(line.strip())
        except json.JSONDecodeError as exc:
            skipped.append(f"{name}:{number}: invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        except ValueError as exc:
            skipped.append(f"{name}:{number}: {exc}")
            continue
        if not isinstance(value, dict):
            skipped.append(f"{name}:{number}: not a JSON object")
            continue
        yield number, value


def _typed(value):
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.sampled_from("a{[]}\"\\ é\x00\ud800\U0001f600\u2028"), max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="ab{[", max_size=3), inner,
                                                                max_size=3),
    max_leaves=10)


def _nested(depth: int, braces: bool, inner: str) -> str:
    if braces:
        return '{"k":' * depth + inner + "}" * depth
    return "[" * depth + inner + "]" * depth


_deep = st.builds(lambda depth, braces, wrap, inner: (
    '{"x": ' + _nested(depth, braces, inner) + "}") if wrap else _nested(depth, braces, inner),
    st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3), st.booleans(), st.booleans(), st.sampled_from(["1", "[]", "{}", '"{["']))
_brackets_in_text = st.builds(lambda n, m: json.dumps({"code": "{" * n + "[" * m}), st.integers(0, 120),
                              st.integers(0, 120))
_line = (st.builds(lambda v, ascii_only: json.dumps(v, ensure_ascii=ascii_only), _values, st.booleans())
         | st.builds(lambda d: json.dumps({"record": d}), _values)
         | _deep | _brackets_in_text
         | st.sampled_from(['{"a": NaN}', '{"a": "\\ud800"}', '{"a": 1e400}', "[1, 2]", '"text"', "3", "{",
                            '{"a": 1} x', "", "   ", "\x0c", '\x0c{"a": 1}\x0c', '{"a": 1}\x0b', "\ufeff{}", "{}",
                            '{"a": "\x00"}', '  {"a": [1]}  ']))
_text = st.lists(st.tuples(_line, st.sampled_from(["\n", "\r\n", "\r", "\x85", "\u2028", ""])), max_size=8).map(
    lambda parts: "".join(line + end for line, end in parts))


@settings(max_examples=examples(700), deadline=None)
@given(_text)
def test_the_inline_decode_gives_the_general_path_s_records_and_warnings(text):
    got_skipped: list[str] = []
    expected_skipped: list[str] = []
    got = [(n, _typed(v)) for n, v in iter_jsonl(text, "f.jsonl", got_skipped)]
    expected = [(n, _typed(v)) for n, v in _general(text, "f.jsonl", expected_skipped)]
    assert got == expected
    assert got_skipped == expected_skipped


def test_the_lines_drawn_take_both_paths_and_every_depth_outcome():
    """The companion: msgspec's inline path and the general one both decide lines, and the depth check
    refuses a line too deep by braces alone, by brackets alone and by both together (never one that only
    holds brackets in its texts)."""
    calls: list[str] = []
    inline = _common._fast_loads

    def counted(text):
        calls.append(text)
        return inline(text)

    mixed = _nested(MAX_DEPTH - 60, True, _nested(61, False, "1"))  # 101 deep: neither bracket alone says so
    lines = [_nested(MAX_DEPTH + 1, True, "1"), _nested(MAX_DEPTH + 1, False, "1"), '{"a": ' + mixed + "}",
             _nested(MAX_DEPTH, True, "1"), json.dumps({"code": "{" * 150 + "[" * 150}), '{"a": NaN}', "[1]"]
    skipped: list[str] = []
    original = _common._fast_loads
    _common._fast_loads = counted
    try:
        records = list(iter_jsonl("\n".join(lines), "f.jsonl", skipped))
    finally:
        _common._fast_loads = original
    assert [n for n, _ in records] == [4, 5, 6]
    assert skipped == [f"f.jsonl:{n}: JSON nested deeper than {MAX_DEPTH} levels" for n in (1, 2, 3)] + [
        "f.jsonl:7: not a JSON object"]
    assert records[2][1]["a"] != records[2][1]["a"]  # NaN: json decided it (msgspec refused it)
    assert len(calls) == len(lines) + 1  # every line inline, NaN's once more through `loads`
