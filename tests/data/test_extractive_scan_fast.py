"""The extractive summarizer's per-message scan, tuned for speed (`inspector/summarizers/extractive_scan.py`:
the path, error and sentence scans skipped where the characters they need are missing, the rule and
decision words looked for in the lower-cased text first), finds exactly what the scan as first written
finds (`tests/reference/extractive_scan.py`): on drawn texts and messages, on the bench thread, on real
transcripts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.model import Message, Role, ToolCall
from inspector.summarizers import extractive_scan as fast
from tests.hypothesis_budget import examples
from tests.paths import REAL
from tests.reference import extractive_scan as ref

# Every word of the rule, done and decision regexes' alternatives, as a sentence holds them.
_WORDS = ["correction", "corrections", "correct", "corrected", "correcting", "never", "always", "must", "mustn't",
          "don't", "do not", "doesn't", "should", "shouldn't", "should not", "important", "remember", "rule",
          "make sure", "avoid", "only", "instead of", "not allowed", "prefer", "keep", "preserve",
          "fixed", "added", "created", "updated", "passed", "passes", "implemented", "wrote", "written", "removed",
          "refactored", "resolved", "completed", "finished", "renamed", "installed", "merged", "moved", "deleted",
          "changed", "replaced", "configured", "succeeded",
          "decided", "decide", "decision", "will", "instead", "chose", "choose", "going to", "plan to", "opted",
          "let's", "we'll", "i'll", "go with", "switch to"]
# The characters IGNORECASE matches to an ASCII letter besides its two cases (İ ı: i, ſ: s, K: k)
_EXTRAS = {"i": ("\u0130", "\u0131"), "s": ("\u017f",), "k": ("\u212a",)}


@st.composite
def _word(draw) -> str:
    """A rule or decision word, each letter in either case or (sometimes) one of its other matches,
    the spaces of a phrase as any whitespace, sometimes cut short or run on into a longer word."""
    word = draw(st.sampled_from(_WORDS))
    out = []
    for ch in word:
        if ch == " ":
            out.append(draw(st.sampled_from([" ", "\n", "\t ", "  "])))
        elif ch in _EXTRAS and draw(st.integers(0, 5)) == 0:
            out.append(draw(st.sampled_from(_EXTRAS[ch])))
        else:
            out.append(ch.upper() if draw(st.booleans()) else ch)
    text = "".join(out)
    cut = draw(st.sampled_from(["", "", "", "cut", "more"]))
    if cut == "cut":
        text = text[: draw(st.integers(1, max(1, len(text) - 1)))]
    elif cut == "more":
        text += draw(st.sampled_from(["s", "ed", "x", "_y", "'", "-z", "é"]))
    return text


_pieces = st.one_of(
    _word(),
    st.sampled_from([
        # paths and URLs
        "src/app.py", "/etc/hosts", "/usr/bin/python3", "~/.config/x.toml", "../a/b.c", "./x.js", "README.md",
        "README.md:", "a/b/", "x.y.z", "see src/app.py.", "\u00a0src/é.py", "http://x.py/a.md",
        "https://example.com/a/b/c.html", "file:///tmp/x.txt", ".", "/", "//", "e.g.", "a.b", "Makefile.mk",
        # error lines
        "FAILED tests/x.py::t - assert 1", "E   assert 1", "E  ", "ValueError: bad", "ValueError:", "xValueError: y",
        "é_Exception:\tz", "Exception:\n", "2 failed", "12 failed, 3 passed", "0 failed", "1 error", "3 errors",
        "1٣ failed", "٣ error", "12: error: x", "error[E0425]: x", "error[", "error", "failed", "failed:",
        "  Traceback (most recent call last):", "fatal: not a git repository", "panic: oops", "ERROR",
        "No such file or directory", "Permission denied", "command not found", "exited with code 2",
        "exited with code 0", "  12→x", "3\tfoo", "7: bar",
        # sentences and their splitting
        "I fixed it.", "We will go with plan B!", "Why?", " ", "  ", "\n", "\n\n", "\r\n", "\t", "\x1c", "\u2028",
        "\x85", "- ", "* ", "• ", "> ", "# ", "…", "ok", "the", "value", "a" * 250, "word " * 60,
        # harness wrappers, summaries
        "<system-reminder>x</system-reminder>", "<command-name>/x</command-name>", "<", ">",
        fast.CONTEXT_SUMMARY_MARKER,
        # other unicode
        "é", "ß", "Σ", "ﬁ", "\u0307", "中文", "🙂",
    ]),
    st.text(max_size=12),
)
_texts = st.lists(_pieces, max_size=40).map("".join)
# Few kinds of characters: the sentence splitting's cases (a stop with or without a space after it,
# none at all) without the paths and error lines that hold a "." or a capital
_plain_texts = st.lists(st.one_of(_word(), st.sampled_from(["?", "!", ".", " ", "  ", "\n", "\t", "\r", "ok",
                                                           "value", "x" * 250, "…", "é", "-", "#", ">"])),
                        max_size=30).map("".join)


@st.composite
def _messages(draw) -> Message:
    role = draw(st.sampled_from(list(Role)))
    content = draw(st.one_of(_texts, _plain_texts))
    if draw(st.integers(0, 6)) == 0:
        content = content * draw(st.integers(2, 200))  # long: past every cap (scan, head and tail)
    calls = tuple(ToolCall(f"c{k}", "read_file", {"path": draw(_texts)}) for k in range(draw(st.integers(0, 2))))
    tool_call_id = "c0" if role is not Role.TOOL and draw(st.integers(0, 8)) == 0 else None
    meta = {"isMeta": True} if draw(st.integers(0, 8)) == 0 else {}
    return Message("m", role, content, tool_calls=calls, tool_call_id=tool_call_id, meta=meta)


@settings(max_examples=examples(1500), deadline=None)
@given(st.one_of(_texts, _plain_texts))
def test_the_scans_of_a_text_find_what_the_scans_as_written_find(text):
    for piece in (text, text * 40):  # and long: the error scan's head and tail
        assert fast.find_paths(piece) == ref.find_paths(piece)
        assert fast._first_error_line(piece) == ref._first_error_line(piece)
        assert fast._sentences(piece) == ref._sentences(piece)
        assert fast._may_report(piece) or ref._ERROR_ANYWHERE_RE.search(piece) is None


@settings(max_examples=examples(1500), deadline=None)
@given(_messages())
def test_the_features_of_a_message_are_those_the_scan_as_written_finds(message):
    assert fast.extract_features(message) == ref.extract_features(message)


@pytest.mark.parametrize("word", _WORDS)
def test_every_word_is_found_in_either_case_and_with_its_other_letters(word):
    """The companion of the gates: each word of the regexes' alternatives makes a fact or a decision (for
    some role) where the scan as written finds one, in upper case, and with İ, ı, ſ or the Kelvin sign in it."""
    variants = {word, word.upper(), word.title()}
    for letter, extras in _EXTRAS.items():
        for extra in extras:
            variants.add(word.replace(letter, extra))
    found = []
    for role in (Role.USER, Role.ASSISTANT, Role.SYSTEM):
        for variant in sorted(variants):
            message = Message("m", role, f"Hello there. Then {variant} it.\nA line with nothing.")
            expected = ref.extract_features(message)
            assert fast.extract_features(message) == expected
            found.extend((*expected.facts, *expected.done, *expected.decisions))
    assert f"Then {word} it." in found


def test_every_error_marker_reports_where_the_scan_as_written_reports():
    for line in ["FAILED x", "ERROR x", "E   x", "Traceback x", "fatal: x", "panic: x", "error: x", "error[E1]: x",
                 "KeyError: x", "Exception: x", "a failed: x", "No such file or directory", "Permission denied",
                 "sh: command not found", "exited with code 3", "2 failed", "1 error", "10 errors", "1٣ failed", "2٣ errors"]:
        for output in (line, "ok\n" * 5 + line, "x" * 3000 + "\n" + line, line + "\n" + "x" * 3000):
            assert fast._may_report(output[:1000] + "\n" + output[-1000:])
            assert fast._first_error_line(output) == ref._first_error_line(output) is not None


def test_sentences_split_at_each_stop_where_the_scan_as_written_splits():
    for text in ("Why? Because it is.", "Why?\tBecause", "Stop! Now", "a. b", "a.b", "no stop\n\nat all", "why?", ""):
        assert fast._sentences(text) == ref._sentences(text)
    assert len(ref._sentences("Why? Because")) == 2


def test_harness_wrappers_are_cut_where_the_scan_as_written_cuts_them():
    for content in ("<system-reminder>x</system-reminder> Hello there. It is <command-name>/x</command-name> src/a.py",
                    "a < b, b > c: keep it", "<command-name>/x</command-name>", "no wrapper at all"):
        message = Message("m", Role.USER, content)
        assert fast.extract_features(message) == ref.extract_features(message)
    assert ref.extract_features(Message("m", Role.USER, "<system-reminder>x</system-reminder> Hi there")).goal == "Hi there"


def _assert_same_features(messages) -> int:
    scanned = 0
    for message in messages:
        assert fast.extract_features(message) == ref.extract_features(message), message.id
        scanned += 1
    return scanned


def test_the_bench_thread_scans_as_written():
    from bench.generate import generate_thread

    assert _assert_same_features(generate_thread(10_000).messages) == 10_003


@pytest.mark.parametrize("name", ["claude-code-2.1.7-parallel-tools-3-compactions.jsonl", "codex-0.142.4-rollout.jsonl",
                                  "tau-bench-gpt-4o-airline.json", "swe-agent-trajectory.traj"])
def test_real_transcripts_scan_as_written(name):
    from inspector.importers import parse_text

    _, result = parse_text((REAL / name).read_text(encoding="utf-8"), name)
    messages = [m for thread in result.threads for m in thread.messages]
    assert _assert_same_features(messages) == len(messages) > 0
    # what these transcripts hold, so that the comparison compares something
    found = [ref.extract_features(m) for m in messages]
    assert any(f.files or f.output_files or f.error for f in found)
    assert any(f.facts or f.done or f.decisions for f in found)


def _top_level_branches(pattern: str) -> list[str]:
    """The alternatives of `\\b(a|b(?:c|d)?|...)\\b`."""
    inner = pattern[len("\\b("):-len(")\\b")]
    branches, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "|" and depth == 0:
            branches.append(inner[start:k])
            start = k + 1
    return [*branches, inner[start:]]


def test_the_gates_look_for_a_word_of_every_alternative():
    """Each word of the regexes' alternatives holds one of the words its gate looks for (the regexes
    as written: the fast scan's are the same)."""
    for name, words in (("_RULE_RE", fast._RULE_WORDS), ("_DONE_RE", fast._DONE_WORDS),
                        ("_DECISION_RE", fast._DECISION_WORDS), ("_USER_DECISION_RE", fast._USER_DECISION_WORDS)):
        regex = getattr(ref, name)
        assert getattr(fast, name).pattern == regex.pattern
        for branch in _top_level_branches(regex.pattern):  # each alternative has a word in _WORDS
            assert any(re.fullmatch(branch, w) for w in _WORDS), branch
        alternatives = [w for w in _WORDS if regex.fullmatch(w)]
        for alternative in alternatives:
            assert any(word in alternative for word in words), alternative
