"""The Claude Code importer's record handling (the builder's user and assistant lines told without the ABC's
checks and in one walk of their blocks, the coverage's model calls in one walk, a group's record links
computed once) gives exactly what it gave before (`tests/reference/claude_records.py`): the same threads,
warnings and coverage, on sessions whose records take every shape (content a text, one block, a list of
blocks of every kind or of non-blocks, none, a number; a message that is not an object; usage of every
kind; repeated message ids, synthetic models, sidechains, dangling and repeated parents)."""

from __future__ import annotations

import json
from contextlib import ExitStack
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.importers import _claude_builder, claude_code
from inspector.importers._claude_builder import Builder
from tests.hypothesis_budget import examples
from tests.reference import claude_records as reference

_texts = st.sampled_from(["", "hi", "<command-name>x", " ", "é😀", "a\nb"])
_counts = st.sampled_from([0, 7, -1, 1.5, True, 2**60, None, "3", float("nan")])
_usage = (st.none() | st.sampled_from([[], 3, "u"])
          | st.fixed_dictionaries({}, optional={"input_tokens": _counts, "cache_creation_input_tokens": _counts,
                                                "cache_read_input_tokens": _counts, "output_tokens": _counts}))
_ids = st.sampled_from(["t1", "t2", "t3", None, 4, ""])
_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _texts),
    st.builds(lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a}, _ids,
              st.sampled_from(["Bash", "", None, "Task"]),
              st.sampled_from([{}, {"command": "ls"}, {"prompt": "p", "description": "d"}, "raw", None])),
    st.builds(lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e}, _ids,
              _texts | st.just([{"type": "text", "text": "r"}, {"type": "image", "source": {"media_type": "x"}}]),
              st.booleans()),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _texts),
    st.sampled_from([{"type": "redacted_thinking"}, {"type": "image"}, {"no": "type"}, {"type": "other", "x": 1},
                     {"text": "typeless"}, 3, "loose", None, [1]]),
)
_content = st.one_of(_texts, st.none(), _blocks, st.lists(_blocks, max_size=4), st.sampled_from([5, 1.5, True]))


def _message(kind: str):
    return st.one_of(
        st.fixed_dictionaries({"content": _content}, optional={
            "id": st.sampled_from(["m1", "m2", "m3", None, 7]),
            "model": st.sampled_from(["claude", "<synthetic>", None, ""]),
            "stop_reason": st.sampled_from([None, "end_turn", ""]),
            "usage": _usage,
            "role": st.just(kind)}),
        st.sampled_from([False, "text", None, [1]]))


@st.composite
def _session(draw) -> str:
    lines = []
    uuids: list[str] = []
    for i in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "system", "progress"]))
        uuid = f"u{i}"
        parent = draw(st.sampled_from(["previous", "previous", "earlier", "missing", "none"]))
        record = {"type": kind, "uuid": uuid, "sessionId": "s", "timestamp": f"2026-01-01T00:00:{i:02d}Z",
                  "parentUuid": (uuids[-1] if parent == "previous" and uuids else
                                 draw(st.sampled_from(uuids)) if parent == "earlier" and uuids else
                                 "gone" if parent == "missing" else None)}
        if kind in ("user", "assistant"):
            record["message"] = draw(_message(kind))
        if kind == "system":
            record["subtype"] = draw(st.sampled_from(["compact_boundary", "microcompact_boundary", "info"]))
            record["compactMetadata"] = {"trigger": "auto", "preTokens": 5}
        if kind == "user" and draw(st.booleans()):
            record["toolUseResult"] = draw(st.sampled_from([{"agentId": "a1"}, "text", {"stdout": "o"}]))
        if kind == "user" and draw(st.integers(0, 5)) == 0:
            record["isCompactSummary"] = True
        if draw(st.integers(0, 6)) == 0:
            record["isSidechain"] = True
            record["agentId"] = draw(st.sampled_from(["a1", "a2"]))
        if draw(st.integers(0, 6)) == 0:
            record["isMeta"] = True
        record["version"] = draw(st.sampled_from(["2.1.0", "2.1.1"]))
        uuids.append(uuid)
        lines.append(json.dumps(record))
    return "\n".join(lines)


def _reference(stack: ExitStack) -> None:
    stack.enter_context(mock.patch.object(Builder, "_user", reference.BuilderLines._user))
    stack.enter_context(mock.patch.object(Builder, "_assistant", reference.BuilderLines._assistant))
    stack.enter_context(mock.patch.object(_claude_builder, "_int", reference._int))
    stack.enter_context(mock.patch.object(claude_code._Group, "_written_leaf_first",
                                          reference.GroupLinks._written_leaf_first))
    stack.enter_context(mock.patch.object(claude_code._Group, "_link", reference.GroupLinks._link))
    stack.enter_context(mock.patch.object(claude_code, "_count", reference.count))
    stack.enter_context(mock.patch.object(claude_code, "_blocks", reference.blocks_of))


def _parsed(text: str):
    result = claude_code.parse(text, "f.jsonl")
    return repr(result.threads), result.skipped, repr(result.coverage)


@settings(max_examples=examples(500), deadline=None)
@given(_session())
def test_the_records_of_every_shape_give_what_they_gave_before(text):
    got = _parsed(text)
    with ExitStack() as stack:
        _reference(stack)
        expected = _parsed(text)
    assert got == expected


def test_the_sessions_drawn_reach_every_branch():
    """The companion: a session with a merged model call, a tool result, an unbilled call, a bad usage
    count and a content of one block gives requests, tool messages and warnings with either code."""
    records = [
        {"type": "user", "uuid": "u0", "sessionId": "s", "parentUuid": None, "message": {"content": "go"}},
        {"type": "assistant", "uuid": "u1", "sessionId": "s", "parentUuid": "u0",
         "message": {"id": "m1", "model": "claude", "usage": {"input_tokens": 5, "output_tokens": 1},
                     "content": {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}}},
        {"type": "user", "uuid": "u2", "sessionId": "s", "parentUuid": "u1", "toolUseResult": {"stdout": "o"},
         "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "out"}]}},
        {"type": "assistant", "uuid": "u3", "sessionId": "s", "parentUuid": "u2",
         "message": {"id": "m1", "model": "claude", "usage": {"input_tokens": 5, "output_tokens": 9},
                     "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}},
        {"type": "assistant", "uuid": "u4", "sessionId": "s", "parentUuid": "u3",
         "message": {"id": "m2", "model": "claude", "content": "plain", "usage": {"input_tokens": 1.5}}},
        {"type": "assistant", "uuid": "u5", "sessionId": "s", "parentUuid": "u4",
         "message": {"id": "m3", "model": "claude", "content": []}},
    ]
    text = "\n".join(json.dumps(r) for r in records)
    got = _parsed(text)
    with ExitStack() as stack:
        _reference(stack)
        assert _parsed(text) == got
    result = claude_code.parse(text, "f.jsonl")
    (thread,) = result.threads
    assert [m.role.value for m in thread.messages] == ["user", "assistant", "tool", "assistant", "assistant"]
    assert thread.messages[1].content == "done" and thread.messages[1].meta["lines"] == [2, 4]
    assert [r.output_tokens for r in thread.requests] == [9, None, None]
    assert any("input_tokens 1.5" in s for s in result.skipped)
    assert result.coverage[0].calls_unbilled == 1
