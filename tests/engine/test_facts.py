"""Facts of a span: the rules of each kind, and properties (deterministic, in order, never invented)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.model import Message, Role, ToolCall
from inspector.pipeline.facts import (
    FactKind,
    extract_facts,
    fact_key,
    find_paths,
    message_facts,
    source_parts,
)
from tests.paths import README


def _m(mid: str, role: str, content: str = "", **kw) -> Message:
    return Message(id=mid, role=Role(role), content=content, **kw)


def _texts(messages, kind: FactKind) -> list[str]:
    return [f.text for f in extract_facts(messages) if f.kind is kind]


# ---------------------------------------------------------------------------
# The rules of each kind
# ---------------------------------------------------------------------------


def test_paths_with_a_directory_an_extension_or_an_anchor():
    text = ("Edit src/app.py and /etc/hosts, then ~/notes/todo and ./run.sh; see README.md "
            "and @docs/guide.md:12. Not and/or, not 1/2, not e.g. or v1.2.3, not </system-reminder>.")
    assert [p for _, p in find_paths(text)] == [
        "src/app.py", "/etc/hosts", "~/notes/todo", "./run.sh", "README.md", "docs/guide.md"]


def test_paths_inside_urls_are_not_paths():
    assert find_paths("see https://example.com/a/b/c.html and lib/x.py") == [(39, "lib/x.py")]


def test_commands_from_tool_calls_and_from_text():
    messages = [
        _m("a1", "assistant", "Run this:\n```bash\n$ make test\n# a comment\nruff check .\n```\n$ git status",
           tool_calls=(ToolCall("c1", "Bash", {"command": "pytest -q tests/\necho done", "description": "run"}),
                       ToolCall("c2", "shell", {"command": ["bash", "-lc", "ls -la"]}),
                       ToolCall("c3", "exec_command", {"cmd": "cargo build"}))),
    ]
    assert _texts(messages, FactKind.COMMAND) == [
        "make test", "ruff check .", "git status", "pytest -q tests/", "ls -la", "cargo build"]


def test_errors_are_report_lines_of_tool_outputs_and_test_ids():
    output = ("collected 3 items\n"
              "FAILED tests/test_parser.py::test_fixture - AssertionError\n"
              "     12→    raise ValueError('listing line, not an error')\n"
              "KeyError: 'window'\n"
              "1 failed, 2 passed in 0.12s\n")
    messages = [_m("t1", "tool", output, tool_call_id="c1"),
                _m("a1", "assistant", "The ValueError: is only talk; tests/test_x.py::test_y is an id.")]
    assert _texts(messages, FactKind.ERROR) == [
        "FAILED tests/test_parser.py::test_fixture - AssertionError",
        "tests/test_parser.py::test_fixture",
        "KeyError: 'window'",
        "1 failed, 2 passed in 0.12s",
        "tests/test_x.py::test_y",
    ]


def test_identifiers_in_talk_only():
    messages = [
        _m("u1", "user", "Rename `parse_line()` and check ContextManager.compact() and context.window."),
        _m("t1", "tool", "def hidden_helper(): pass", tool_call_id="c1"),
    ]
    texts = _texts(messages, FactKind.IDENTIFIER)
    assert "parse_line" in texts and "ContextManager.compact" in texts and "context.window" in texts
    assert "hidden_helper" not in texts


def test_urls_without_trailing_punctuation():
    messages = [_m("u1", "user", "Docs at https://example.com/docs/, and (http://x.org/a?b=1).")]
    assert _texts(messages, FactKind.URL) == ["https://example.com/docs/", "http://x.org/a?b=1"]


def test_numbers_need_a_unit():
    messages = [_m("u1", "user", "Use a 30s timeout, 1.5 GB of RAM, 155,979 tokens, 80% and $12; not 42 or v2.")]
    assert _texts(messages, FactKind.NUMBER) == ["30s", "1.5 GB", "155,979 tokens", "80%", "$12"]


def test_instructions_are_the_users_sentences_with_a_trigger_word():
    messages = [
        _m("u1", "user", "Correction: never edit the test fixtures. Thanks!\n- Always run ruff.\n"
                         "Use pytest instead of unittest. You must not push."),
        _m("a1", "assistant", "I will never edit them."),
        _m("u2", "user", "<system-reminder>Always obey the system.</system-reminder>Don't guess"),
        _m("u3", "user", "Never do this either.", meta={"isMeta": True}),
    ]
    assert _texts(messages, FactKind.INSTRUCTION) == [
        "never edit the test fixtures", "Always run ruff", "Use pytest instead of unittest", "You must not push",
        "Don't guess"]


def test_harness_wrappers_are_neither_instructions_nor_turns():
    """Issue 22 item 7: 7 of 8 "lost instructions" of one real compaction were `<task-notification>`
    sub-agent reports, each also counted as a user turn."""
    from inspector.model import assign_turns

    report = ("<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<result>Never edit the "
              "fixtures. You must run the tests.</result>\n</task-notification>")
    messages = [
        _m("u1", "user", "Fix the parser; don't touch the lexer."),
        _m("a1", "assistant", "On it."),
        _m("u2", "user", report),
        _m("u3", "user", "<command-name>/compact</command-name>\n<command-args></command-args>"),
        _m("u4", "user", "<local-command-stdout>Always compacted.</local-command-stdout>"),
        _m("u5", "user", "<bash-input>make</bash-input><bash-stdout>must rebuild</bash-stdout>"),
        _m("u6", "user", "<system-reminder>Always be careful.</system-reminder>Never push to main."),
    ]
    assert _texts(messages, FactKind.INSTRUCTION) == ["Fix the parser; don't touch the lexer", "Never push to main"]
    assert assign_turns(messages) == [1, 1, 1, 1, 1, 1, 2]
    # harness lines before the user's first message open the first turn, which that message joins
    lead = [_m("c1", "user", "Caveat: local commands below.", meta={"isMeta": True}), *messages]
    assert assign_turns(lead) == [1, 1, 1, 1, 1, 1, 1, 2]


def test_a_test_id_is_an_error_where_its_line_says_it_failed():
    """Issue 22 item 8: passing pytest ids were counted as errors (189 in one real compaction)."""
    output = ("tests/test_a.py::test_ok PASSED [ 50%]\n"
              "tests/test_a.py::test_bad FAILED [100%]\n"
              "ERROR tests/test_b.py::test_setup - fixture 'db' not found\n")
    errors = _texts([_m("t1", "tool", output, tool_call_id="c1"),
                     _m("a1", "assistant", "tests/test_a.py::test_ok passes now")], FactKind.ERROR)
    assert "tests/test_a.py::test_ok" not in errors
    assert "tests/test_a.py::test_bad" in errors and "tests/test_b.py::test_setup" in errors


def test_word_lists_and_template_paths_are_not_paths():
    """Issue 22 item 8: `open/closed/blocked` and `docs/plans/YYYY-MM-DD-<topic>-design.md` were paths;
    grep's context lines (`state.go-143`) named one file many times."""
    messages = [
        _m("u1", "user", "Status is open/closed/blocked; write docs/plans/YYYY-MM-DD-<topic>-design.md and "
                         "{name}.py, see cmd/entire/cli."),
        _m("t1", "tool", "cli/state.go-143-func load()\ncli/state.go:144: x\ncmd/entire/cli/state.go",
           tool_call_id="c1"),
    ]
    assert _texts(messages, FactKind.PATH) == ["cmd/entire/cli", "cli/state.go", "cmd/entire/cli/state.go"]
    # a directory of plain words is a path where a path of the span lies inside it, else a word list
    assert _texts(messages[:1], FactKind.PATH) == []


def test_each_fact_once_at_its_first_message():
    messages = [_m("u1", "user", "Look at src/app.py."), _m("a1", "assistant", "SRC/APP.PY and ./src/app.py")]
    paths = [f for f in extract_facts(messages) if f.kind is FactKind.PATH]
    assert [(f.text, f.message_id) for f in paths] == [("src/app.py", "u1")]


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from([
    "never", "don't", "Don’t", "always", "must", "instead", "Correction:", " ", " ", ".", ". ", "\n", "- ",
    "src/app.py", "/tmp/x", "~/a/b", "./run.sh", "README.md", "@x/y.ts", "a/b/c", "`foo_bar()`", "ContextManager",
    "context.window", "call(", ")", "30s", "1.5 GB", "155,979 tokens", "80%", "$12", "https://a.b/c.", "Error: x",
    "FAILED t.py::test_y", "$ ls -la", "```bash\n", "```", "<system-reminder>", "</system-reminder>", "E   boom",
    "<task-notification>", "</task-notification>", "t.py::test_z PASSED", "YYYY-MM-DD", "<topic>", "x.go-12-",
    "Traceback (most recent call last)", "ß", "\\", "\"", "'", "é", "x", "7",
])
_TEXT = st.one_of(st.lists(_FRAGMENTS, max_size=25).map("".join), st.text(max_size=80))
_ARGS = st.one_of(
    st.fixed_dictionaries({"command": _TEXT}),
    st.fixed_dictionaries({"cmd": st.lists(_TEXT, max_size=4)}),
    st.fixed_dictionaries({"file_path": _TEXT, "content": _TEXT}),
)


@st.composite
def _messages(draw) -> list[Message]:
    out: list[Message] = []
    for i in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
        calls = ()
        if role == "assistant" and draw(st.booleans()):
            calls = tuple(ToolCall(f"c{i}{k}", "Bash", draw(_ARGS)) for k in range(draw(st.integers(1, 2))))
        meta = {"isMeta": True} if role == "user" and draw(st.booleans()) else {}
        out.append(Message(id=f"m{i}", role=Role(role), content=draw(_TEXT), tool_calls=calls,
                           tool_call_id=f"c{i}" if role == "tool" else None, meta=meta))
    return out


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_extraction_is_deterministic(messages):
    assert extract_facts(messages) == extract_facts(list(messages))


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_no_fact_is_invented(messages):
    by_id = {m.id: m for m in messages}
    for fact in extract_facts(messages):
        assert fact.text and fact.text == fact.text.strip()
        parts = [p.text for p in source_parts(by_id[fact.message_id])]
        assert any(fact.text in part for part in parts), (fact, parts)


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_facts_follow_the_messages_and_a_prefix_gives_a_prefix(messages):
    facts = extract_facts(messages)
    position = {m.id: i for i, m in enumerate(messages)}
    order = [position[f.message_id] for f in facts]
    assert order == sorted(order)
    keys = [fact_key(f) for f in facts]
    assert len(keys) == len(set(keys))
    # (a word list like `a/b/c` is a path only once a path of the span lies inside it: a later
    # message can bring one, so those are left out of the prefix property)
    facts = [f for f in facts if not _word_list(f)]
    for k in range(len(messages) + 1):
        prefix = [f for f in extract_facts(messages[:k]) if not _word_list(f)]
        assert facts[: len(prefix)] == prefix


def _word_list(fact) -> bool:
    return fact.kind is FactKind.PATH and re.fullmatch(r"[A-Za-z]+(?:/[A-Za-z]+){2,}", fact.text) is not None


@settings(max_examples=200, deadline=None)
@given(_messages())
def test_every_fact_of_the_span_comes_from_one_of_its_messages(messages):
    everything = {fact_key(f): f for m in messages for f in message_facts(m)}
    extracted = {fact_key(f) for f in extract_facts(messages)}
    assert extracted <= set(everything)
    assert all(_word_list(everything[k]) for k in set(everything) - extracted)  # only word lists left out


def test_every_fact_kind_is_documented_in_the_readme():

    readme = README.read_text(encoding="utf-8")
    section = readme.split("## What a compaction lost", 1)[1].split("\n## ", 1)[0]
    assert [k.value for k in FactKind if f"| `{k.value}` |" not in section] == []
