"""The fact scans that skip text (`facts.path_runs`, `may_hold_error_line`, the identifier regexes run
only where their character occurs) find exactly what the plain scans of every position find."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.pipeline import facts
from tests.hypothesis_budget import examples

_pieces = st.sampled_from(["a", "Z", "x_y", "7", "12 ", ".", "/", "./", "~", "-", "@", "+", " ", "\n", "\t", "(", ")",
                           "()", "`", ":", "::", "src/app.py", "fooBar", "Foo", "e.g", "a.b", "error", "error:",
                           "error[E1]:", "Error: ", "E  x", "FAILED", "ERROR", "fatal:", "panic:", "3 failed",
                           "10 failed", "0 failed", "Traceback (most recent call last)", "No such file or directory",
                           "Permission denied", "command not found", "Exception:\n", "é", "ß", "<", ">", "{", "}"])
_texts = st.lists(_pieces, max_size=30).map("".join)


def _identifiers_by_definition(text: str) -> list[tuple[int, str]]:
    """`find_identifiers` with every regex run over the whole text."""
    out: list[tuple[int, str]] = []
    for m in facts._BACKTICK_RE.finditer(text):
        inner = m.group(1).strip()
        if facts._NAME_IN_TICKS_RE.fullmatch(inner) and facts._path_of_run(inner) is None and not inner.isdigit():
            name = inner[:-2] if inner.endswith("()") else inner
            if len(name) >= 2:
                out.append((m.start(1) + m.group(1).find(name), name))
    for m in facts._CALL_RE.finditer(text):
        if len(m.group(1)) >= 3:
            out.append((m.start(1), m.group(1)))
    for regex in (facts._SNAKE_RE, facts._CAMEL_RE):
        out.extend((m.start(1), m.group(1)) for m in regex.finditer(text))
    for m in facts._KEY_RE.finditer(text):
        key = m.group(1)
        if key not in facts._COMMON_DOTTED and facts._path_of_run(key) is None and text[m.end(1):m.end(1) + 1] != "(":
            out.append((m.start(1), key))
    return out


@settings(max_examples=examples(900), deadline=None)
@given(_texts)
def test_the_scans_find_what_a_scan_of_every_position_finds(text):
    assert [(m.span(), m.group(0)) for m in facts.path_runs(text)] == \
        [(m.span(), m.group(0)) for m in facts._PATH_RUN_RE.finditer(text)]
    assert facts.may_hold_error_line(text) == (facts._ERROR_ANYWHERE_RE.search(text) is not None)
    assert facts.find_identifiers(text) == _identifiers_by_definition(text)


def test_the_scans_find_something():
    """The companion: each scan has something to find in the texts drawn, and skips where it must."""
    text = "see src/app.py and ./a/b, fooBar() e.g. a.b_c x_y(1)\n3 failed"
    assert [m.group(0) for m in facts.path_runs(text)] == ["src/app.py", "./a/b,"[:-1], "e.g.", "a.b_c"]
    assert facts.may_hold_error_line(text) and not facts.may_hold_error_line("all 0 failed? no: fine")
    assert {name for _, name in facts.find_identifiers(text)} >= {"fooBar", "x_y", "a.b_c"}
