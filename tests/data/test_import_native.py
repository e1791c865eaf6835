"""The native format: export then import is the identity (property test), and bad input is reported."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.importers import detect_format_text, export_native, parse_text
from inspector.importers.native import FORMAT
from inspector.model import EmotionalMarker, Kind, Message, Request, Role, Summary, Thread, ToolCall, ToolDef
from tests.hypothesis_budget import examples
from tests.store_fixtures import sample_thread

# No NUL: PostgreSQL text cannot hold it (the fixture may be parametrized over PostgreSQL).
text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | finite | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
meta = st.dictionaries(text, json_values, max_size=3)


@st.composite
def messages(draw, ids):
    out = []
    for mid in ids:
        role = draw(st.sampled_from(list(Role)))
        calls = ()
        if role is Role.ASSISTANT:
            calls = tuple(
                ToolCall(id=draw(ident), name=draw(text), arguments=draw(st.one_of(text, meta)))
                for _ in range(draw(st.integers(0, 2)))
            )
        out.append(
            Message(
                id=mid,
                role=role,
                content=draw(text),
                kind=draw(st.sampled_from(list(Kind))),
                tool_calls=calls,
                tool_call_id=draw(st.none() | ident),
                pinned=draw(st.booleans()),
                required=draw(st.booleans()),
                relevance=draw(st.none() | finite),
                name=draw(st.none() | text),
                created_at=draw(st.none() | text),
                meta=draw(meta),
            )
        )
    return out


@st.composite
def threads(draw):
    ids = draw(st.lists(ident, min_size=1, max_size=6, unique=True))
    msgs = draw(messages(ids))
    requests = tuple(
        Request(id=f"r{i}", after_message_id=draw(st.sampled_from(ids)),
                prompt_tokens=draw(st.none() | st.integers(0, 2_000_000)), model=draw(st.none() | text),
                created_at=draw(st.none() | text))
        for i in range(draw(st.integers(0, 3)))
    )
    lists = st.lists(text, max_size=2).map(tuple)
    # A summary's range runs forward and its before_request_id names a request (the sanitizer repairs
    # others, with a warning: tests/cli/test_bad_input_generated.py).
    ranges = [sorted(draw(st.lists(st.integers(0, len(ids) - 1), min_size=2, max_size=2))) for _ in range(2)]
    request_ids = [r.id for r in requests]
    summaries = tuple(
        Summary(
            id=f"s{i}", first_message_id=ids[ranges[i][0]], last_message_id=ids[ranges[i][1]],
            summary=draw(text), previous_summary_id=f"s{i - 1}" if i else None,
            before_request_id=draw(st.none() | st.sampled_from(request_ids)) if request_ids else None,
            accomplishments=draw(lists), key_decisions=draw(lists),
            relevant_files=draw(lists), active_goals=draw(lists), emotional_thread=draw(text),
            relationship_dynamics=draw(text), evolving_themes=draw(lists),
            emotional_markers=tuple(EmotionalMarker(moment=draw(text), intensity=draw(finite))
                                    for _ in range(draw(st.integers(0, 2)))),
            unresolved_threads=draw(lists), resolved_threads=draw(lists), key_facts=draw(lists),
            source=draw(st.sampled_from(["recorded", "extractive"])), model=draw(st.none() | text),
            created_at=draw(st.none() | text), meta=draw(meta),
        )
        for i in range(draw(st.integers(0, 2)))
    )
    tools = tuple(ToolDef(name=draw(ident), description=draw(text), input_schema=draw(meta))
                  for _ in range(draw(st.integers(0, 2))))
    return Thread(id=draw(ident), title=draw(text), source=draw(st.sampled_from(["native", "codex"])),
                  system_prompt=draw(text), tools=tools, messages=tuple(msgs), requests=requests,
                  summaries=summaries, window=draw(st.none() | st.integers(1, 2_000_000)), meta=draw(meta))


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(threads(), min_size=1, max_size=3, unique_by=lambda t: t.id))
def test_native_export_then_import_is_lossless(original):
    document = json.dumps(export_native(original), ensure_ascii=False)
    fmt, result = parse_text(document, "export.json")
    assert fmt == "native"
    assert result.skipped == []
    assert result.threads == original


def test_export_writes_the_design_document_shape():
    document = export_native([sample_thread()])
    assert document["format"] == FORMAT
    thread = document["threads"][0]
    assert thread["id"] == "t1" and thread["system_prompt"] == "Be brief." and thread["window"] == 32000
    assert thread["tools"] == [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]
    by_id = {m["id"]: m for m in thread["messages"]}
    assert by_id["m1"] == {"id": "m1", "role": "user", "content": "Read main.py please",
                           "created_at": "2026-01-01T00:00:00Z", "name": "sam"}
    assert by_id["lb1"]["kind"] == "lorebook" and by_id["lb1"]["relevance"] == 0.3
    assert by_id["m2"]["tool_calls"][0] == {"id": "c1", "name": "read_file",
                                           "arguments": {"path": "main.py", "lines": [1, 2]}}
    assert by_id["m5"]["pinned"] is True and by_id["m5"]["meta"] == {"manualExcluded": True}
    assert thread["requests"][0] == {"id": "r1", "after_message_id": "m1", "prompt_tokens": 1234, "model": "m-1",
                                     "created_at": "t"}
    summary = thread["summaries"][0]
    assert summary["emotional_markers"] == [{"moment": "thanks", "intensity": 0.5}]
    assert summary["before_request_id"] == "r2" and summary["key_facts"] == ["python"]


def test_the_design_example_imports_with_defaults():
    document = {"format": FORMAT, "threads": [{"id": "t1", "title": "x", "system_prompt": "s", "messages": [
        {"id": "m1", "role": "user", "content": "hi"},
        {"id": "lb1", "role": "system", "kind": "lorebook", "required": False, "relevance": 0.3, "content": "l"},
    ], "requests": [{"id": "r1", "after_message_id": "m1", "prompt_tokens": 12, "model": None}]}]}
    _, result = parse_text(json.dumps(document), "d.json")
    thread = result.threads[0]
    assert thread.messages[0] == Message(id="m1", role=Role.USER, content="hi")
    assert thread.messages[1].kind is Kind.LOREBOOK and thread.messages[1].relevance == 0.3
    assert thread.requests == (Request(id="r1", after_message_id="m1", prompt_tokens=12),)
    assert detect_format_text("d.json", json.dumps(document)) == "native"


def test_a_bad_thread_is_reported_and_the_others_import():
    good = export_native([sample_thread("ok")])["threads"][0]
    bad_role = {"id": "bad", "messages": [{"id": "m1", "role": "wizard", "content": "x"}]}
    duplicate = {"id": "dup", "messages": [{"id": "m1", "role": "user"}, {"id": "m1", "role": "user"}]}
    document = json.dumps({"format": FORMAT, "threads": [bad_role, good, duplicate, "nope"]})
    _, result = parse_text(document, "mixed.json")
    # Bad items are left out or repaired one by one (the reliability brief); the threads stay.
    assert [(t.id, [m.id for m in t.messages]) for t in result.threads] == [
        ("bad", []), ("ok", ["card", "lb1", "m1", "m2", "m3", "m4", "m5"]), ("dup", ["m1", "m1~2"])]
    assert result.skipped == [
        "mixed.json: thread bad: message 'm1': unknown role 'wizard'; message skipped",
        "mixed.json: thread 3: a thread needs a non-empty string 'id'",
        "mixed.json: thread dup: message id 'm1' appears twice; the later one renamed 'm1~2'",
    ]
