"""Fuzzing the importers: random JSON lines, wrong types in known fields, truncated lines and random
bytes mixed into the real fixtures, for every importer.

Properties: parsing never raises anything but the one-line FormatError; every thread it returns
can be stored and read back unchanged; and the valid lines still import: with noise only
inserted (never replacing a real line), the main thread keeps at least the messages it had
without the noise. Noise that replaces real lines (truncation in place) must still not crash.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from inspector.importers import FormatError, export_native, parse_text, read_text
from inspector.importers._common import ParseResult
from inspector.model import Thread
from inspector.store import Store
from tests.store_fixtures import real_lines, real_text

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
"""Examples per test: modest for CI; set FUZZ_EXAMPLES=500 for a deeper local run."""

FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure reports its draws at once
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CLAUDE = "claude-code-session-with-sidechains.jsonl"
CLAUDE_COMPACT = "claude-code-session-with-compaction.jsonl"
CODEX = "codex-rollout.jsonl"
SWE = "swe-agent-trajectory.traj"
TAU = "tau-bench-gpt-4o-airline.json"

# ---- strategies ---------------------------------------------------------------------------------

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def with_path(item: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of `item` with `path` set to `value` (dicts along the path copied; stops where one is missing)."""
    out = dict(item)
    node = out
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            break
        node[key] = node = dict(child)
    node[path[-1]] = value
    return out


def wrong_types(items: list[dict[str, Any]], paths: list[tuple[str, ...]], fresh: str | None = None) -> Any:
    """Copies of real items with one known field replaced by a random JSON value."""

    def build(index: int, path: tuple[str, ...], value: Any, n: int) -> dict[str, Any]:
        out = with_path(items[index], path, value)
        if fresh is not None and path != (fresh,):
            out[fresh] = f"noise-{n}"  # a new uuid, so the copy never replaces the real line
        return out

    return st.builds(build, st.integers(0, len(items) - 1), st.sampled_from(paths), json_values,
                     st.integers(0, 10**6))


def truncated(lines: list[str]) -> Any:
    """A strict prefix of a real line (never valid JSON: each line is one object)."""
    return st.integers(0, len(lines) - 1).flatmap(
        lambda i: st.integers(1, max(1, len(lines[i]) - 1)).map(lambda n, i=i: lines[i][:n]))


def noise_line(lines: list[str], objects: list[dict[str, Any]], paths: list[tuple[str, ...]],
               fresh: str | None = None) -> Any:
    """One noise line as bytes: random JSON, a wrong-typed copy, a truncated line or random bytes."""
    return st.one_of(
        json_values.map(lambda v: json.dumps(v).encode()),
        wrong_types(objects, paths, fresh).map(lambda v: json.dumps(v).encode()),
        truncated(lines).map(str.encode),
        st.binary(max_size=60),
    )


def insertions(limit: int, noise: Any, max_size: int = 8) -> Any:
    """(position, noise) pairs; a position p puts the noise before real line p."""
    return st.lists(st.tuples(st.integers(0, limit), noise), min_size=1, max_size=max_size)


# ---- helpers ------------------------------------------------------------------------------------

def parse_bytes(data: bytes, name: str, fmt: str) -> ParseResult:
    """The import path for a file's bytes: lenient decoding, then parsing (FormatError allowed)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        warnings: list[str] = []
        text = read_text(path, warnings)
    _, result = parse_text(text, name, fmt)
    for line in warnings + result.skipped:
        assert "\n" not in line and name in line, line
    return result


def assert_storable(threads: list[Thread]) -> None:
    """The threads save and load back unchanged (no value the database cannot hold)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(str(Path(tmp) / "f.sqlite"), create=True, now="2026-01-01T00:00:00Z")
        try:
            store.save_threads(threads, now="2026-01-01T00:00:00Z")
            for thread in threads:
                assert store.load_thread(thread.id) == thread
        finally:
            store.close()


def mixed(lines: list[bytes], inserts: list[tuple[int, bytes]]) -> bytes:
    out = list(lines)
    for position, noise in sorted(inserts, key=lambda p: -p[0]):
        out.insert(position, noise)
    return b"\n".join(out) + b"\n"


@cache
def baseline(name: str, fmt: str) -> tuple[list[str], dict[str, int]]:
    """(the fixture's lines, messages per thread id) without noise."""
    text = real_text(name)
    _, result = parse_text(text, name, fmt)
    assert result.threads and result.skipped == []
    return text.splitlines(), {t.id: len(t.messages) for t in result.threads}


# ---- JSONL importers ----------------------------------------------------------------------------

CLAUDE_PATHS = [("type",), ("uuid",), ("parentUuid",), ("logicalParentUuid",), ("isSidechain",), ("sessionId",),
                ("message",), ("message", "content"), ("message", "role"), ("message", "id"), ("message", "usage"),
                ("message", "model"), ("toolUseResult",), ("isCompactSummary",), ("compactMetadata",), ("subtype",),
                ("isMeta",), ("timestamp",), ("summary",), ("leafUuid",)]
CODEX_PATHS = [("type",), ("payload",), ("payload", "type"), ("payload", "role"), ("payload", "content"),
               ("payload", "id"), ("payload", "info"), ("payload", "call_id"), ("payload", "arguments"),
               ("payload", "output"), ("payload", "summary"), ("payload", "base_instructions"),
               ("payload", "model_context_window"), ("payload", "message"), ("payload", "replacement_history"),
               ("payload", "model"), ("payload", "action"), ("timestamp",)]


def claude_case(name: str) -> tuple[list[str], list[dict[str, Any]], int, str, int]:
    lines, counts = baseline(name, "claude-code")
    objects = [json.loads(line) for line in lines]
    last_main = max(i for i, o in enumerate(objects) if o.get("type") in ("user", "assistant", "system")
                    and not o.get("isSidechain"))
    session = next(o["sessionId"] for o in objects if isinstance(o.get("sessionId"), str))
    return lines, objects, last_main, session, counts[session]


@FUZZ
@given(data=st.data())
def test_claude_code_noise_never_crashes_and_the_main_thread_keeps_its_messages(data: st.DataObject):
    for name in (CLAUDE, CLAUDE_COMPACT):
        lines, objects, last_main, session, expected = claude_case(name)
        # Noise goes before the last main-chain line: a later line would be the chain's new leaf (by design).
        inserts = data.draw(insertions(last_main, noise_line(lines, objects, CLAUDE_PATHS, fresh="uuid")))
        result = parse_bytes(mixed([line.encode() for line in lines], inserts), name, "claude-code")
        main = next(t for t in result.threads if t.id == session)
        assert len(main.messages) >= expected
        assert_storable(result.threads)


@FUZZ
@given(data=st.data())
def test_codex_noise_never_crashes_and_the_valid_lines_still_import(data: st.DataObject):
    lines, counts = baseline(CODEX, "codex")
    objects = [json.loads(line) for line in lines]
    inserts = data.draw(insertions(len(lines), noise_line(lines, objects, CODEX_PATHS)))
    result = parse_bytes(mixed([line.encode() for line in lines], inserts), CODEX, "codex")
    [thread] = result.threads  # one rollout, one thread (a noise session_meta may rename it)
    assert len(thread.messages) >= next(iter(counts.values()))
    assert_storable(result.threads)


@FUZZ
@given(data=st.data())
def test_jsonl_lines_corrupted_in_place_never_crash(data: st.DataObject):
    """Real lines replaced by noise (truncated, wrong types, bytes): no crash, storable threads."""
    for name, fmt, paths in ((CLAUDE, "claude-code", CLAUDE_PATHS), (CODEX, "codex", CODEX_PATHS)):
        lines, counts = baseline(name, fmt)
        objects = [json.loads(line) for line in lines]
        noise = noise_line(lines, objects, paths)
        changes = data.draw(st.lists(st.tuples(st.integers(0, len(lines) - 1), noise), min_size=1, max_size=6))
        raw = [line.encode() for line in lines]
        for index, value in changes:
            raw[index] = value
        result = parse_bytes(b"\n".join(raw), name, fmt)
        assert sum(len(t.messages) for t in result.threads) <= sum(counts.values()) + 2 * len(changes)
        assert_storable(result.threads)


@FUZZ
@given(data=st.data())
def test_openai_jsonl_chat_noise_keeps_every_valid_message(data: st.DataObject):
    """A real tau-bench conversation as chat JSONL, one message a line, with noise lines mixed in."""
    messages = [m for m in json.loads(real_text(TAU))[0]["traj"]]
    lines = [json.dumps(m) for m in messages]
    _, clean = parse_text("\n".join(lines), "chat.jsonl", "openai")
    [reference] = clean.threads
    paths = [("role",), ("content",), ("tool_calls",), ("tool_call_id",), ("name",), ("function_call",)]
    inserts = data.draw(insertions(len(lines), noise_line(lines, messages, paths)))
    result = parse_bytes(mixed([line.encode() for line in lines], inserts), "chat.jsonl", "openai")
    [thread] = result.threads
    assert len(thread.messages) >= len(reference.messages)
    assert_storable(result.threads)


# ---- JSON document importers --------------------------------------------------------------------

OPENAI_PATHS = [("role",), ("content",), ("tool_calls",), ("tool_call_id",), ("tool_call_ids",), ("name",),
                ("thought",), ("action",), ("agent",), ("message_type",)]


def mixed_list(data: st.DataObject, items: list[Any], paths: list[tuple[str, ...]]) -> list[Any]:
    objects = [i for i in items if isinstance(i, dict)]
    noise = st.one_of(json_values, wrong_types(objects, paths)) if objects else json_values
    inserts = data.draw(insertions(len(items), noise, max_size=6))
    out = list(items)
    for position, value in sorted(inserts, key=lambda p: -p[0]):
        out.insert(position, value)
    return out


def parse_document(document: Any, name: str, fmt: str) -> ParseResult:
    return parse_bytes(json.dumps(document).encode(), name, fmt)


@FUZZ
@given(data=st.data())
def test_swe_agent_history_noise_keeps_every_valid_message(data: st.DataObject):
    _, counts = baseline(SWE, "swe-agent")
    document = json.loads(real_text(SWE))
    document["history"] = mixed_list(data, document["history"], OPENAI_PATHS)
    result = parse_document(document, SWE, "swe-agent")
    [thread] = result.threads
    assert len(thread.messages) >= counts[thread.id] - 1  # a noise system message may join the system prompt
    assert_storable(result.threads)


@cache
def tau_records() -> list[dict[str, Any]]:
    return json.loads(real_text(TAU))[:4]


@FUZZ
@given(data=st.data())
def test_tau_bench_record_and_message_noise_keeps_every_valid_record(data: st.DataObject):
    records = copy.deepcopy(tau_records())
    _, clean = parse_text(json.dumps(records), TAU, "openai")
    expected = {t.id: len(t.messages) for t in clean.threads}
    for record in records:
        record["traj"] = mixed_list(data, record["traj"], OPENAI_PATHS)
    noisy = [r for r in records]
    for position, value in sorted(data.draw(st.lists(st.tuples(st.integers(0, 4), json_values), max_size=3)),
                                  key=lambda p: -p[0]):
        noisy.insert(position, value)
    result = parse_document(noisy, TAU, "openai")
    got = {t.id: len(t.messages) for t in result.threads}
    for thread_id, count in expected.items():
        assert got.get(thread_id, 0) >= count - 1, (thread_id, got)
    assert_storable(result.threads)


def anthropic_body() -> dict[str, Any]:
    """A real Anthropic Messages body: the API messages recorded in a Claude Code session."""
    messages = [line["message"] for line in real_lines(CLAUDE)
                if line.get("type") in ("user", "assistant") and not line.get("isSidechain")
                and isinstance(line.get("message"), dict)]
    return {"model": "claude-x", "system": "You are a coding agent.",
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages]}


@FUZZ
@given(data=st.data())
def test_anthropic_body_noise_keeps_every_valid_message(data: st.DataObject):
    body = anthropic_body()
    _, clean = parse_text(json.dumps(body), "body.json", "anthropic")
    [reference] = clean.threads
    paths = [("role",), ("content",), ("id",), ("type",)]
    body["messages"] = mixed_list(data, body["messages"], paths)
    result = parse_document(body, "body.json", "anthropic")
    [thread] = result.threads
    assert len(thread.messages) >= len(reference.messages)
    assert_storable(result.threads)


@cache
def native_document() -> dict[str, Any]:
    """The real fixtures exported in the native format (messages, requests and summaries)."""
    threads = []
    for name, fmt in ((CLAUDE_COMPACT, "claude-code"), (CODEX, "codex")):
        _, result = parse_text(real_text(name), name, fmt)
        threads.extend(result.threads)
    return export_native(threads)


NATIVE_MESSAGE_PATHS = [("id",), ("role",), ("content",), ("kind",), ("tool_calls",), ("tool_call_id",),
                        ("pinned",), ("relevance",), ("meta",), ("name",)]
NATIVE_OTHER_PATHS = [("id",), ("after_message_id",), ("prompt_tokens",), ("previous_summary_id",),
                      ("first_message_id",), ("last_message_id",), ("emotional_markers",), ("key_facts",)]


@FUZZ
@given(data=st.data())
def test_native_noise_keeps_every_valid_message(data: st.DataObject):
    document = copy.deepcopy(native_document())
    expected = {t["id"]: len(t["messages"]) for t in document["threads"]}
    for thread in document["threads"]:
        thread["messages"] = mixed_list(data, thread["messages"], NATIVE_MESSAGE_PATHS)
        thread["requests"] = mixed_list(data, thread["requests"], NATIVE_OTHER_PATHS)
        thread["summaries"] = mixed_list(data, thread["summaries"], NATIVE_OTHER_PATHS)
    result = parse_document(document, "native.json", "native")
    got = {t.id: len(t.messages) for t in result.threads}
    assert all(got[thread_id] >= count for thread_id, count in expected.items()), got
    for thread in result.threads:
        ids = [m.id for m in thread.messages]
        assert len(set(ids)) == len(ids)
        assert {r.after_message_id for r in thread.requests} <= set(ids)
        assert all(r.prompt_tokens is None or r.prompt_tokens >= 0 for r in thread.requests)
        assert_acyclic(thread)
    assert_storable(result.threads)


def assert_acyclic(thread: Thread) -> None:
    previous = {s.id: s.previous_summary_id for s in thread.summaries}
    for start in previous:
        seen, current = set(), start
        while current is not None:
            assert current not in seen, f"summary chain loops at {current}"
            seen.add(current)
            current = previous.get(current)
            assert current is None or current in previous, "dangling previous_summary_id"


# ---- whole files --------------------------------------------------------------------------------

FILES: list[tuple[str, Callable[[], str]]] = [(n, lambda n=n: real_text(n)) for n in (CLAUDE, CODEX, SWE)]


@FUZZ
@given(data=st.data())
def test_any_prefix_of_a_real_file_is_a_one_line_error_or_imports(data: st.DataObject):
    """A file cut anywhere (an interrupted copy): auto-detection and parsing fail cleanly or import."""
    for name, text in FILES:
        full = text()
        cut = data.draw(st.integers(0, len(full) - 1))
        try:
            result = parse_bytes(full[:cut].encode(), name, "auto")
        except FormatError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(name)
            continue
        assert_storable(result.threads)


# ---- round three (issue 24): a chain's structure, not its file order or one bad link -----------------

def claude_chain(turns: int) -> list[dict[str, Any]]:
    """A clean Claude Code chain: user, assistant (a model call), and every third turn a tool call and
    its result; timestamps rising."""
    out: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any]) -> None:
        n = len(out)
        out.append({"type": kind, "uuid": f"r{n}", "parentUuid": out[-1]["uuid"] if out else None,
                    "sessionId": "fuzz", "timestamp": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
                    "message": message})

    for t in range(turns):
        add("user", {"role": "user", "content": f"turn {t}"})
        if t % 3 == 2:
            add("assistant", {"role": "assistant", "id": f"call{t}a", "model": "claude-x", "usage": {"input_tokens": t},
                              "content": [{"type": "tool_use", "id": f"tool{t}", "name": "Read", "input": {"n": t}}]})
            add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tool{t}", "content": "x"}]})
        add("assistant", {"role": "assistant", "id": f"call{t}", "model": "claude-x", "usage": {"input_tokens": t + 1},
                          "content": [{"type": "text", "text": f"answer {t}"}]})
    return out


def parse_records(records: list[dict[str, Any]]) -> ParseResult:
    return parse_text("".join(json.dumps(r) + "\n" for r in records), "fuzz.jsonl", "claude-code")[1]


@FUZZ
@given(turns=st.integers(min_value=1, max_value=25), data=st.data())
def test_a_chain_written_leaf_first_or_with_a_looping_link_loses_nothing(turns: int, data: st.DataObject):
    records = claude_chain(turns)
    calls = [r["message"]["id"] for r in records if r["type"] == "assistant"]
    clean = parse_records(records)
    [thread] = clean.threads
    assert [r.id for r in thread.requests] == calls
    reversed_file = parse_records(list(reversed(records)))  # written leaf first
    assert [(m.id, m.content) for m in reversed_file.threads[0].messages] == [(m.id, m.content) for m in thread.messages]
    assert [r.id for r in reversed_file.threads[0].requests] == calls
    # One link made to loop: a record its own parent, or one naming a later record of the chain.
    victim = data.draw(st.integers(min_value=0, max_value=len(records) - 1), label="record")
    later = data.draw(st.integers(min_value=victim, max_value=len(records) - 1), label="its new parent")
    damaged = copy.deepcopy(records)
    damaged[victim]["parentUuid"] = records[later]["uuid"]
    result = parse_records(damaged)
    assert [t.id for t in result.threads] == ["fuzz"], [t.id for t in result.threads]
    assert [r.id for r in result.threads[0].requests] == calls
    assert [m.id for m in result.threads[0].messages] == [m.id for m in thread.messages]
