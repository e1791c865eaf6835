"""The messages' fact extraction, tuned for the sweep (issue 28 item 3: `inspector/pipeline/facts.py`'s
path runs found by `str.find`, error markers as substrings, the number regex starting with its first
character, the prompt and fence regexes only where their literal occurs), finds exactly what the
extraction as it was finds (`tests/reference/facts.py`): on drawn texts and messages, on the bench
thread, on real transcripts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.model import Message, Role, ToolCall
from inspector.pipeline import facts as fast
from tests.hypothesis_budget import examples
from tests.paths import REAL
from tests.reference import facts as ref

_pieces = st.one_of(
    st.sampled_from([
        # paths and URLs
        "src/app.py", "/etc/hosts", "~/.config/x.toml", "../a/b.c", "./x.js", "README.md", "a/b/", "x.y.z", ".", "/",
        "//", "e.g.", "a.b", "a.b_c", "@src/x.ts", "</tag>", "{name}.py", "docs/YYYY-MM-DD-x.md", "cli/state.go-143",
        "http://x.py/a.md", "https://example.com/a/b", " ", "  ", "\n", "\t", "\r\n",
        # error lines and test ids
        "FAILED tests/x.py::t - assert 1", "E   assert 1", "E  ", "E ", "ValueError: bad", "ValueError:", "Error:\n",
        "Error:x", "Exception:\t", "Exception:", "2 failed", "12 failed", "0 failed", "10 failed", "1٣ failed", "٣ failed",
        " failed", "failed", "error:", "error", "error[E0425]: x", "error[", "error[]:", "fatal: x", "panic: x", "ERROR",
        "Traceback (most recent call last)", "Traceback", "No such file or directory", "Permission denied",
        "command not found", "tests/a.py::test_b", "::", "  12→x", "3\tfoo", "7: bar", ":",
        # numbers
        "7", "12", "1,234", "155,979 tokens", "1.5 GB", "30s", "80%", "$12", "$1,200.50", "$", "$x", "٣", "٣s", "٣٣%",
        "x30s", ".5s", ",5s", "$$3", "3.", "1,23 ms", "12,345,678%", "5 Files", "2k", "10 MB", "é5s",
        # commands
        "$ ls -la", "$ ", "  $ make", "$", "```bash\nls\n# c\n$ make\n```", "```sh\n", "```", "```console\n$ x\n```",
        # identifiers, instructions
        "`parse_line`", "`x()`", "fooBar", "FooBar", "x_y", "call(", "f(x)", "context.window", "never do that",
        "Don't. ", "Correction: always run it", "must", "- instead use x", "Why? ", "Stop! ",
        # other characters
        "A", "Z", "a", "é", "ß", "İ", "K", "中文", "🙂", "\u2028", "\x85", "<system-reminder>x</system-reminder>",
    ]),
    st.text(max_size=8),
)
_texts = st.lists(_pieces, max_size=40).map("".join)


@settings(max_examples=examples(1500), deadline=None)
@given(_texts)
def test_each_tuned_scan_finds_what_the_scan_as_it_was_finds(text):
    for piece in (text, text * 30):  # and long: the remembered next "." and "/" far ahead
        assert [(m.span(), m.group(0)) for m in fast.path_runs(piece)] == \
            [(m.span(), m.group(0)) for m in ref.path_runs(piece)]
        assert fast.find_paths(piece) == ref.find_paths(piece)
        assert fast.may_hold_error_line(piece) == ref.may_hold_error_line(piece)
        assert fast.may_hold_error_line(piece) == (ref._ERROR_ANYWHERE_RE.search(piece) is not None)
        assert fast.find_errors(piece, output=True) == ref.find_errors(piece, output=True)
        assert fast.find_numbers(piece) == ref.find_numbers(piece)
        assert fast.find_text_commands(piece) == ref.find_text_commands(piece)


@st.composite
def _messages(draw) -> Message:
    role = draw(st.sampled_from(list(Role)))
    content = draw(_texts)
    calls = tuple(ToolCall(f"c{k}", "shell", {draw(st.sampled_from(["command", "path", "cmd"])): draw(_texts)})
                  for k in range(draw(st.integers(0, 2))))
    tool_call_id = "c0" if role is not Role.TOOL and draw(st.integers(0, 8)) == 0 else None
    meta = {"isMeta": True} if draw(st.integers(0, 8)) == 0 else {}
    return Message("m", role, content, tool_calls=calls, tool_call_id=tool_call_id, meta=meta)


@settings(max_examples=examples(1500), deadline=None)
@given(_messages())
def test_the_facts_of_a_message_are_those_the_extraction_as_it_was_finds(message):
    assert fast.message_facts(message) == ref.message_facts(message)


def test_every_number_form_and_error_marker_is_found_as_before():
    """The companion: the texts drawn hold what each scan finds (and what it must not)."""
    text = ("took 30s and $12 for 155,979 tokens at 80% (x30s, ٣٣%)\n$ make test\nE   assert 1\n3 failed\n"
            "ValueError: bad\nsee src/app.py and ./a/b")
    assert [t for _, t in fast.find_numbers(text)] == [t for _, t in ref.find_numbers(text)] == \
        ["30s", "$12", "155,979 tokens", "80%", "٣٣%"]
    assert [t for _, t in fast.find_errors(text, output=True)] == [t for _, t in ref.find_errors(text, output=True)] \
        == ["E   assert 1", "3 failed", "ValueError: bad"]
    assert fast.find_text_commands(text) == ref.find_text_commands(text) != []
    assert [t for _, t in fast.find_paths(text)] == ["src/app.py", "./a/b"]
    for marker in ("0 failed", "Error:x", "error[]:", "E x"):
        assert not fast.may_hold_error_line(marker) and not ref.may_hold_error_line(marker)


def _assert_same_facts(messages) -> int:
    found = 0
    for message, keyed in zip(messages, fast.keyed_facts(messages), strict=True):
        expected = ref.message_facts(message)
        assert [f for f, _ in keyed] == expected, message.id
        assert [k for _, k in keyed] == [ref.fact_key(f) for f in expected], message.id
        found += len(expected)
    return found


def test_the_bench_thread_s_facts_are_those_of_the_extraction_as_it_was():
    from bench.generate import generate_thread

    fast.forget()
    try:
        assert _assert_same_facts(generate_thread(10_000).messages) > 1_000
    finally:
        fast.forget()


@pytest.mark.parametrize("name", ["claude-code-2.1.7-parallel-tools-3-compactions.jsonl", "codex-0.142.4-rollout.jsonl",
                                  "tau-bench-gpt-4o-airline.json", "swe-agent-trajectory.traj"])
def test_real_transcripts_facts_are_those_of_the_extraction_as_it_was(name):
    from inspector.importers import parse_text

    _, result = parse_text((REAL / name).read_text(encoding="utf-8"), name)
    messages = [m for thread in result.threads for m in thread.messages]
    fast.forget()
    try:
        assert _assert_same_facts(messages) > 0
    finally:
        fast.forget()
    kinds = {f.kind for m in messages for f in ref.message_facts(m)}
    assert len(kinds) >= 2  # so that the comparison compares something
