"""The extractive summarizer: offline, deterministic, and faithful to planted facts."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config, ConfigError
from inspector.model import Message, Role, Summary, ToolCall
from inspector.summarizers import get_summarizer
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.summarizers.extractive_scan import (
    _FRAMING,
    _LISTING_RE,
    _PATH_RE,
    _SPACE_RE,
    _URL_RE,
    MAX_ERROR_SCAN_CHARS,
    MAX_FACTS,
    MAX_FILES,
    _clip,
    _first_error_line,
    _sentences,
    find_paths,
    opening,
)


def _m(mid: str, role: str, content: str, **kw) -> Message:
    return Message(id=mid, role=Role(role), content=content, **kw)


CODING_SPAN = (
    _m("m1", "user", "Please fix the crash in src/app.py when the config is empty. Keep the CLI flags as they are."),
    _m(
        "m2",
        "assistant",
        "I will read the config loader first.",
        tool_calls=(ToolCall(id="c1", name="read_file", arguments={"path": "/etc/inspector/x.conf"}),),
    ),
    _m("m3", "tool", "[settings]\nnever = true\nSee docs/setup.md for details.", tool_call_id="c1"),
    _m("m4", "user", "Correction: never touch tests/fixtures/data.json. Always run pytest before reporting."),
    _m(
        "m5",
        "assistant",
        "I fixed the empty-config crash in src/app.py. I added a regression test. "
        "I decided to keep the loader instead of rewriting it.",
    ),
    _m("m6", "user", "Now update README.md with the new behaviour."),
)


def _summarize(messages, previous=None, summary_id="s1", before_request_id="r9") -> Summary:
    return ExtractiveSummarizer().summarize(
        messages, previous, summary_id=summary_id, before_request_id=before_request_id
    )


def test_fields_are_extracted_from_the_span():
    summary = _summarize(CODING_SPAN)
    assert (summary.id, summary.first_message_id, summary.last_message_id) == ("s1", "m1", "m6")
    assert summary.before_request_id == "r9" and summary.previous_summary_id is None
    assert summary.source == "extractive"
    assert summary.relevant_files == (
        "src/app.py",
        "/etc/inspector/x.conf",
        "tests/fixtures/data.json",
        "README.md",
        "docs/setup.md",  # seen only in tool output: after the conversation's own paths
    )
    assert summary.key_facts == (
        "Keep the CLI flags as they are.",
        "Correction: never touch tests/fixtures/data.json.",
        "Always run pytest before reporting.",
    )
    assert summary.active_goals == (
        "Please fix the crash in src/app.py when the config is empty.",
        "Correction: never touch tests/fixtures/data.json.",
        "Now update README.md with the new behaviour.",
    )
    assert summary.accomplishments == (
        "I fixed the empty-config crash in src/app.py.",
        "I added a regression test.",
    )
    assert summary.key_decisions == (
        "I will read the config loader first.",
        "I decided to keep the loader instead of rewriting it.",
    )
    assert summary.unresolved_threads == ()  # no tool output reported an error
    # Left empty: nothing here can infer them.
    assert summary.emotional_thread == "" and summary.emotional_markers == ()
    assert summary.resolved_threads == () and summary.evolving_themes == () and summary.relationship_dynamics == ""


def test_tool_output_is_scanned_for_paths_only():
    summary = _summarize(CODING_SPAN)
    assert not any("never = true" in fact for fact in summary.key_facts)
    assert "docs/setup.md" in summary.relevant_files


def test_narrative_carries_the_corrections_and_files():
    narrative = _summarize(CODING_SPAN).summary
    assert "never touch tests/fixtures/data.json" in narrative
    assert "Always run pytest before reporting." in narrative
    assert "README.md" in narrative
    assert narrative.startswith("This summary covers 6 messages (3 user, 2 assistant, 1 tool).")


def test_narrative_is_150_to_300_words_on_a_long_span():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    messages = []
    for i in range(120):
        role = "user" if i % 2 == 0 else "assistant"
        text = " ".join(words[(i + k) % len(words)] for k in range(18)) + f" item{i}. Second sentence {i} here."
        messages.append(_m(f"m{i}", role, text))
    summary = _summarize(messages)
    count = len(summary.summary.split())
    assert 150 <= count <= 300


def test_narrative_is_capped_at_300_words_even_with_many_facts():
    messages = [
        _m(
            f"m{i}",
            "user",
            f"Rule {i}: you must always quote the full path of file{i} in every single reply, "
            "and name the function, the class and the module it belongs to, with the line numbers, "
            "and say which test covers it and whether that test passed.",
        )
        for i in range(60)
    ]
    summary = _summarize(messages)
    assert len(summary.summary.split()) == 300 and summary.summary.endswith("…")
    assert len(summary.key_facts) == MAX_FACTS
    # The most recent rules are kept.
    assert summary.key_facts[-1].startswith("Rule 59:")


def test_short_span_is_not_padded():
    summary = _summarize([_m("m1", "user", "Hi there.")])
    assert summary.summary == "This summary covers 1 message (1 user, 0 assistant, 0 tool). The user asked: Hi there."
    assert summary.first_message_id == summary.last_message_id == "m1"


def test_previous_summary_bridges_and_carries_facts_and_files():
    first = _summarize(CODING_SPAN[:4], summary_id="s1")
    later = (
        _m("m7", "assistant", "I updated README.md with the new behaviour."),
        _m("m8", "user", "Thanks, now look at lib/io.py."),
    )
    second = _summarize(later, previous=first, summary_id="s2")
    assert second.previous_summary_id == "s1"
    assert second.summary.startswith(
        "Continuing from the previous summary (m1 to m4: The user asked: Please fix the crash in src/app.py "
        "when the config is empty), the next 2 messages (1 user, 1 assistant, 0 tool) followed."
    )
    assert "Correction: never touch tests/fixtures/data.json." in second.key_facts
    assert second.relevant_files[:1] == ("src/app.py",) and second.relevant_files[-1] == "lib/io.py"
    assert second.accomplishments == ("I updated README.md with the new behaviour.",)
    assert second.active_goals == ("Thanks, now look at lib/io.py.",)


def test_active_goals_fall_back_to_the_previous_ones_without_user_messages():
    first = _summarize(CODING_SPAN, summary_id="s1")
    second = _summarize([_m("m9", "assistant", "Working on it.")], previous=first, summary_id="s2")
    assert second.active_goals == first.active_goals


def test_is_deterministic():
    assert _summarize(CODING_SPAN) == _summarize(CODING_SPAN)


def test_context_summary_messages_are_not_mined_for_goals():
    span = (
        _m("m1", "user", "[Context Summary]\nThe user asked: something old."),
        _m("m2", "user", "Fix lib/a.py."),
    )
    assert _summarize(span).active_goals == ("Fix lib/a.py.",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("edit src/app.py now", ["src/app.py"]),
        ("read /etc/x.conf and /usr/bin/python3", ["/etc/x.conf", "/usr/bin/python3"]),
        ("see README.md.", ["README.md"]),
        ("run ./scripts/build.sh and ~/notes/todo.txt", ["./scripts/build.sh", "~/notes/todo.txt"]),
        ("failing: test_parser.py::test_fixture", ["test_parser.py"]),
        ("see https://example.com/docs/page.html and and/or e.g. version 1.2", []),
        ("user@example.com wrote it", []),
    ],
)
def test_find_paths(text, expected):
    assert find_paths(text) == expected


def test_huge_span_is_capped():
    blob = "x" * 50_000 + " src/hidden.py"
    messages = [
        _m(f"m{i}", "tool" if i % 3 else "user", blob if i % 3 else f"Open pkg/mod{i}.py.") for i in range(3000)
    ]
    summary = _summarize(messages)
    assert "src/hidden.py" not in summary.relevant_files  # beyond the per-message cap
    assert len(summary.relevant_files) == MAX_FILES
    assert summary.relevant_files[-1] == "pkg/mod2997.py"  # the most recent ones are kept
    assert len(summary.summary.split()) <= 300
    assert (summary.first_message_id, summary.last_message_id) == ("m0", "m2999")


def test_empty_span_is_an_error():
    with pytest.raises(ValueError, match="empty span"):
        _summarize([])


def test_get_summarizer_by_name():
    summarizer = get_summarizer("extractive", config=Config.for_profile("harness"))
    assert isinstance(summarizer, ExtractiveSummarizer) and summarizer.name == "extractive"
    from inspector.summarizers.anthropic import AnthropicSummarizer

    assert isinstance(get_summarizer("anthropic", config=Config.for_profile("iris")), AnthropicSummarizer)
    with pytest.raises(ConfigError, match=r"^summarization\.summarizer must be one of extractive, anthropic"):
        get_summarizer("gpt")


def test_tool_output_errors_become_unresolved_threads_and_reach_the_narrative():
    span = (
        _m("m1", "user", "Run the tests."),
        _m("m2", "tool", "collected 12 items\nFAILED tests/test_io.py::test_read - KeyError: 'x'", tool_call_id="c1"),
        _m("m3", "tool", "all good, 12 passed", tool_call_id="c2"),
        _m("m4", "tool", "   133→  error?: string; // set on error\n} catch (error) {", tool_call_id="c3"),
    )
    summary = _summarize(span)
    assert summary.unresolved_threads == ("FAILED tests/test_io.py::test_read - KeyError: 'x'",)
    assert "Errors seen: FAILED tests/test_io.py::test_read" in summary.summary
    assert summary.relevant_files == ("tests/test_io.py",)


def test_harness_wrappers_and_meta_messages_are_not_the_users_words():
    span = (
        _m("m1", "user", "Caveat: DO NOT respond to these messages.", meta={"isMeta": True}),
        _m("m2", "user", "<command-name>/clear</command-name>", meta={"command": True}),
        _m("m3", "user", "<system-reminder>Always be brief.</system-reminder>@src/notes/PLAN.md review the plan."),
    )
    summary = _summarize(span)
    assert summary.active_goals == ("@src/notes/PLAN.md review the plan.",)
    assert summary.key_facts == ()
    assert summary.relevant_files == ("src/notes/PLAN.md",)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Traceback (most recent call last):\n  File x", "Traceback (most recent call last):"),
        ("ls: cannot access 'x': No such file or directory", "ls: cannot access 'x': No such file or directory"),
        ("x = 1\nValueError: bad value", "ValueError: bad value"),
        ("error[E0308]: mismatched types", "error[E0308]: mismatched types"),
        ("  12→ raise ValueError: nope", None),
        ("if error: handle(error)", None),
        ("pytest: 1 failed", "pytest: 1 failed"),
        ("===== 0 failed, 3 passed =====", None),
        ("ok\n" + "x" * 5000 + "\n1 failed: tests/test_a.py", "1 failed: tests/test_a.py"),
    ],
)
def test_error_lines_in_tool_output(output, expected):
    summary = _summarize([_m("m1", "tool", output, tool_call_id="c1")])
    assert summary.unresolved_threads == (() if expected is None else (expected,))


def _opening_by_definition(narrative: str) -> str:
    """What `_opening` must return: the first non-framing sentence of `_sentences`, quoted."""
    content = [s for s in _sentences(narrative) if not s.startswith(_FRAMING)]
    return f": {_clip(content[0], 160).rstrip('.')}" if content else ""


_sentence_text = st.lists(
    st.one_of(st.sampled_from(["This summary covers 3 messages.", "Continuing from the previous summary (a to b).",
                               "Done.", "ok", "\n", "  ", "- item", "Fixed app.py! Then", "?", "x" * 300]),
              st.text(alphabet=st.characters(codec="utf-8"), max_size=40)),
    max_size=40,
).map(" ".join)


@settings(max_examples=300)
@given(_sentence_text)
def test_opening_quotes_the_same_sentence_as_the_sentence_splitter(narrative):
    opening.cache_clear()
    assert opening(narrative) == _opening_by_definition(narrative)


def test_chained_summaries_quote_the_previous_narrative():
    summarizer = ExtractiveSummarizer()
    msgs = [Message(f"m{i}", Role.USER if i % 2 == 0 else Role.ASSISTANT, f"Fixed file{i}.py. Then step {i}.")
            for i in range(6)]
    first = summarizer.summarize(msgs[:3], None, summary_id="s1")
    second = summarizer.summarize(msgs[3:], first, summary_id="s2")
    assert opening(first.summary) == _opening_by_definition(first.summary) != ""
    assert second.summary.startswith(f"Continuing from the previous summary (m0 to m2{opening(first.summary)})")


def test_sharing_features_reuses_the_scan_but_writes_summaries_afresh():
    first = ExtractiveSummarizer()
    msgs = [Message(f"m{i}", Role.USER, f"Please fix file{i}.py now.") for i in range(3)]
    made = first.summarize(msgs, None, summary_id="s1")
    second = first.sharing_features()
    assert second._by_object is first._by_object and second._cache is first._cache
    again = second.summarize(msgs, None, summary_id="s2")
    assert second._spans is not first._spans and again == replace(made, id="s2")


_ERROR_RE_AS_WRITTEN = re.compile(
    r"^(?:FAILED|ERROR|E {2,}|Traceback|fatal:|panic:|error(?:\[\w+\])?:)"
    r"|\b\w*(?:Error|Exception):\s"
    r"|\b(?:failed:|No such file or directory|Permission denied|command not found|exited with code [1-9])"
    r"|\b[1-9]\d* (?:failed|errors?)\b",
)


def _first_error_line_by_definition(output: str) -> str | None:
    """Every line of the head and tail, in order, against the pattern as first written (no shortcut)."""
    head = output[:MAX_ERROR_SCAN_CHARS]
    tail = output[-MAX_ERROR_SCAN_CHARS:] if len(output) > MAX_ERROR_SCAN_CHARS else ""
    for line in (head + "\n" + tail).splitlines():
        line = line.strip()
        if line and not _LISTING_RE.match(line) and _ERROR_RE_AS_WRITTEN.search(line):
            return _clip(line, 160)
    return None


_output_text = st.lists(
    st.one_of(st.sampled_from(["FAILED tests/x.py", "E   assert 1", "ValueError: bad", "ValueError:", "2 failed",
                               "12: error: x", "  Traceback (most recent call last):", "\n", "\r\n", "\x1c", "\u2028",
                               "ok", "xValueError: y", "é_Exception:\tz", "http://x.py/a.md", "/usr/bin/python3", "~/.config/x.toml",
                               "../a/b.c", "README.md:", "a/b/", ".", "/", "x.y.z", "\u00a0src/é.py", "see src/app.py.", " ", "error[E0425]: x", "\t"]),
              st.text(max_size=12)),
    max_size=60,
).map("".join)


@settings(max_examples=600)
@given(_output_text)
def test_error_line_shortcut_and_whitespace_and_url_fast_paths_change_nothing(text):
    assert _first_error_line(text) == _first_error_line_by_definition(text)
    assert _first_error_line(text * 80) == _first_error_line_by_definition(text * 80)  # head and tail
    assert _clip(text, 10_000) == _SPACE_RE.sub(" ", text).strip()
    assert find_paths(text) == [m.rstrip(".") for m in _PATH_RE.findall(_URL_RE.sub(" ", text))]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([f"s{i}" for i in range(12)]), max_size=30), st.integers(0, 14), st.booleans())
def test_recent_built_from_items_equals_adding_them_one_by_one(items, limit, as_tuple):
    from inspector.summarizers.extractive_scan import Recent

    by_one = Recent(limit)
    for item in items:
        by_one.add(item)
    built = Recent(limit, tuple(items) if as_tuple else iter(items))
    assert built.tuple() == by_one.tuple()
    distinct = list(dict.fromkeys(items))  # a previous summary's field: no repeats (the fast path)
    fast, slow = Recent(limit, tuple(distinct)), Recent(limit)
    for item in distinct:
        slow.add(item)
    assert fast.tuple() == slow.tuple() and len(fast) == min(limit, len(distinct))
