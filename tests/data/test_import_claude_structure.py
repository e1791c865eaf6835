"""Claude Code records on small hand-made sessions: parallel tool calls as a tree, microcompact events
on the timeline, thinking, `<synthetic>` messages, rewinds reported, incomplete imports marked in
`threads` and the TUI's thread list."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from textual.widgets import Static

from inspector.cli import main
from inspector.importers import parse_text
from inspector.screens.source import MemorySource
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.threads import ThreadList
from widgets.timeline import TimelineChart

SESSION = "s-1"


def rec(kind: str, uuid: str, parent: str | None, **extra) -> dict:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
            "timestamp": "2026-01-01T00:00:00Z", "isSidechain": False, **extra}


def user(uuid: str, parent: str | None, content) -> dict:
    return rec("user", uuid, parent, message={"role": "user", "content": content})


def assistant(uuid: str, parent: str | None, mid: str, blocks: list[dict], tokens: int = 100,
              model: str = "claude-opus-4-5") -> dict:
    usage = {"input_tokens": 1, "cache_creation_input_tokens": 9, "cache_read_input_tokens": tokens - 10,
             "output_tokens": 5}
    return rec("assistant", uuid, parent, message={"id": mid, "role": "assistant", "model": model,
                                                   "content": blocks, "usage": usage})


def use(cid: str) -> dict:
    return {"type": "tool_use", "id": cid, "name": "Read", "input": {"file_path": cid}}


def result(cid: str) -> dict:
    return {"type": "tool_result", "tool_use_id": cid, "content": f"contents of {cid}"}


def parallel_session() -> list[dict]:
    """Three parallel calls of one message (one line each, chained), results hanging off different
    siblings, a progress record inside the chain, then the next call continuing from the last result."""
    return [
        user("u1", None, "read three files"),
        assistant("a1", "u1", "msg-1", [{"type": "thinking", "thinking": "plan", "signature": "x"}]),
        assistant("a2", "a1", "msg-1", [use("t1")]),
        assistant("a3", "a2", "msg-1", [use("t2")]),
        rec("progress", "p1", "a3", data={"type": "hook_progress"}),
        assistant("a4", "p1", "msg-1", [use("t3")]),
        user("r1", "a2", [result("t1")]),
        user("r2", "a3", [result("t2")]),
        user("r3", "a4", [result("t3")]),
        assistant("a5", "r3", "msg-2", [{"type": "text", "text": "done"}], tokens=300),
    ]


def parsed(records: list[dict], name: str = "s.jsonl"):
    _, out = parse_text("\n".join(json.dumps(r) for r in records) + "\n", name)
    return out


def test_parallel_tool_calls_are_one_message_with_every_result():
    out = parsed(parallel_session())
    [thread] = out.threads
    assert [(m.role.value, m.id) for m in thread.messages] == [
        ("user", "u1"), ("assistant", "a1"), ("tool", "r1"), ("tool", "r2"), ("tool", "r3"), ("assistant", "a5")]
    call = thread.messages[1]
    assert [c.id for c in call.tool_calls] == ["t1", "t2", "t3"]
    assert call.meta["thinking"] == ["plan"]
    assert [(r.id, r.after_message_id, r.prompt_tokens, r.cache_read_tokens, r.cache_write_tokens)
            for r in thread.requests] == [("msg-1", "u1", 100, 90, 9), ("msg-2", "r3", 300, 290, 9)]
    assert out.skipped == []
    assert [c.line() for c in out.coverage] == [
        "s.jsonl: model calls 2/2 with billed tokens, tool results 3/3, compactions 0/0"]


def test_synthetic_messages_are_kept_but_are_not_model_calls():
    records = parallel_session() + [
        assistant("a6", "a5", "msg-3", [{"type": "text", "text": "No response requested."}], model="<synthetic>")]
    out = parsed(records)
    [thread] = out.threads
    assert thread.messages[-1].id == "a6" and thread.messages[-1].meta["synthetic"] is True
    assert [r.id for r in thread.requests] == ["msg-1", "msg-2"]
    assert out.coverage[0].calls == 2 and out.skipped == []


async def test_microcompact_is_an_event_before_the_next_request_and_shown_on_the_timeline(tmp_path: Path):
    micro = rec("system", "mc1", "a5", subtype="microcompact_boundary", content="Context microcompacted",
                microcompactMetadata={"trigger": "auto", "preTokens": 300, "tokensSaved": 120,
                                      "compactedToolIds": ["t1", "t2"], "clearedAttachmentUUIDs": []})
    records = parallel_session() + [micro, user("u2", "mc1", "go on"),
                                    assistant("a7", "u2", "msg-4", [{"type": "text", "text": "ok"}], tokens=190)]
    out = parsed(records)
    [thread] = out.threads
    [event] = thread.meta["events"]
    assert event == {"kind": "microcompact", "line": 11, "uuid": "mc1", "after_message_id": "a5",
                     "created_at": "2026-01-01T00:00:00Z", "trigger": "auto", "preTokens": 300,
                     "tokensSaved": 120, "cleared_tool_ids": ["t1", "t2"], "before_request_id": "msg-4"}
    assert thread.summaries == () and [m.id for m in thread.messages][-2:] == ["u2", "a7"]

    app = make_app(tmp_path, source=MemorySource([thread]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        assert [p.recorded_event for p in chart.points] == [False, False, True]
        assert "○ recorded microcompact (120 tokens cleared)" in plain(app.query_one("#timeline-label", Static))


def rewound_session() -> list[dict]:
    """The user rewound after the first answer: the old branch's call is in the file, not in the thread."""
    return [
        user("u1", None, "hello"),
        assistant("a1", "u1", "msg-1", [{"type": "text", "text": "hi"}]),
        user("u2", "a1", "first try"),
        assistant("a2", "u2", "msg-2", [{"type": "text", "text": "answer one"}]),
        user("u3", "a1", "second try"),
        assistant("a3", "u3", "msg-3", [{"type": "text", "text": "answer two"}], tokens=200),
    ]


def test_a_call_left_on_another_branch_is_said_and_the_thread_is_marked(tmp_path: Path):
    out = parsed(rewound_session(), "rewound.jsonl")
    [thread] = out.threads
    assert [m.id for m in thread.messages] == ["u1", "a1", "u3", "a3"]
    assert out.skipped == ["rewound.jsonl:4: model call msg-2 not imported (on a branch the session left: a rewind, "
                           "or a link the file lost)"]
    assert thread.meta["off_chain_lines"] == [3, 4]
    assert thread.meta["import_gaps"] == {"calls": 1, "results": 0, "compactions": 0, "files": ["rewound.jsonl"]}
    source = tmp_path / "rewound.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rewound_session()) + "\n")
    db = tmp_path / "store.sqlite"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", str(source), "--db", str(db)])
    assert imported.exit_code == 0
    assert "rewound.jsonl: model calls 2/3 with billed tokens, tool results 0/0, compactions 0/0" in imported.stdout
    assert "(1 file(s) incomplete, see the warnings)" in imported.stdout
    listing = runner.invoke(main, ["threads", "--db", str(db)])
    assert listing.exit_code == 0
    [row] = [line for line in listing.stdout.splitlines() if line.startswith(SESSION)]
    assert row.split()[3] == "2!" and "! incomplete import" in listing.stdout
    [info] = json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).stdout)
    assert info["incomplete_import"] == {"calls": 1, "results": 0, "compactions": 0, "files": ["rewound.jsonl"]}
    complete = tmp_path / "complete.jsonl"
    complete.write_text("\n".join(json.dumps(r) for r in parallel_session()).replace(SESSION, "s-2") + "\n")
    runner.invoke(main, ["import", str(complete), "--db", str(db)])
    listed = {i["id"]: i for i in json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).stdout)}
    assert "incomplete_import" not in listed["s-2"]


def test_the_main_chain_ends_at_the_latest_instant_and_a_damaged_timestamp_is_none():
    """Two branches from one record: the leaf is the latest by instant (not by text: an offset is read),
    and a timestamp that is not an instant (a damaged copy of a line) never takes the chain."""
    def session(fork_stamp: str, real_stamp: str) -> list[dict]:
        records = [user("u1", None, "hello"),
                   assistant("a1", "u1", "msg-1", [{"type": "text", "text": "hi"}]),
                   user("u2", "a1", "the real turn"),
                   user("fork", "a1", "a damaged copy")]
        records[2]["timestamp"] = real_stamp
        records[3]["timestamp"] = fork_stamp
        return records

    def chain(fork_stamp: str, real_stamp: str = "2026-01-01T00:00:05Z") -> list[str]:
        [thread] = parsed(session(fork_stamp, real_stamp), "forked.jsonl").threads
        return [m.id for m in thread.messages]

    assert chain("2026-01-01T00:00:09Z") == ["u1", "a1", "fork"]  # later, written last: the leaf
    assert chain("2026-01-01T00:00:01Z") == ["u1", "a1", "u2"]  # earlier, though written last
    for damaged in ("\U00060dc3\xff", "zzzz", "9999-99-99T99:99:99Z", "", "2026-01-01T00:00:0\x00"):
        assert chain(damaged) == ["u1", "a1", "u2"], damaged
    # 01:00 at +02:00 is 23:00 the day before: earlier than the real turn, though its text sorts later
    assert chain("2026-01-01T01:00:00+02:00") == ["u1", "a1", "u2"]


async def test_the_tui_thread_list_marks_an_incomplete_import(tmp_path: Path):
    [marked] = parsed(rewound_session(), "rewound.jsonl").threads
    [whole] = parsed([dict(r, sessionId="s-2") for r in parallel_session()]).threads
    app = make_app(tmp_path, source=MemorySource([marked, whole]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        threads = app.query_one(ThreadList)
        rows = {r.info.id: threads._row(r) for r in threads.rows}
        assert rows[SESSION][3].plain == "2!" and "red" in str(rows[SESSION][3].style)
        assert rows["s-2"][3].plain == "2"


def test_a_fresh_context_in_the_same_file_is_a_thread_of_its_own():
    """Claude Code starts a new root in the same file when a plan is implemented after clearing the
    context: the earlier conversation is not a rewind, its calls are a thread of their own."""
    records = [
        rec("progress", "p0", None, data={"type": "hook_progress"}),
        user("u1", "p0", "plan the change"),
        assistant("a1", "u1", "msg-1", [{"type": "text", "text": "here is the plan"}]),
        user("u2", "a1", "ok"),
        assistant("a2", "u2", "msg-2", [use("t1")], tokens=150),
        user("r1", "a2", [result("t1")]),
        rec("progress", "p1", None, data={"type": "hook_progress"}),
        user("u3", "p1", "Implement the following plan: ..."),
        assistant("a3", "u3", "msg-3", [{"type": "text", "text": "done"}], tokens=80),
    ]
    out = parsed(records)
    assert out.skipped == []
    main, earlier = out.threads
    assert main.id == SESSION and [m.id for m in main.messages] == ["u3", "a3"]
    assert earlier.id == f"{SESSION}/context-p0" and earlier.meta["same_file_as"] == SESSION
    assert [m.id for m in earlier.messages] == ["u1", "a1", "u2", "a2", "r1"]
    assert [r.id for r in earlier.requests] == ["msg-1", "msg-2"] and [r.id for r in main.requests] == ["msg-3"]
    assert out.coverage[0].line() == "s.jsonl: model calls 3/3 with billed tokens, tool results 1/1, compactions 0/0"


def test_import_dir_takes_every_session_with_its_sub_agents_and_one_progress_total(tmp_path: Path):
    from inspector.importers import import_paths
    from inspector.store import Store

    project = tmp_path / "projects" / "-home-me-repo"
    (project / "s-a" / "subagents").mkdir(parents=True)
    (project / "s-a.jsonl").write_text("\n".join(json.dumps(dict(r, sessionId="s-a")) for r in parallel_session()))
    (project / "s-b.jsonl").write_text("\n".join(json.dumps(dict(r, sessionId="s-b")) for r in rewound_session()))
    agent = [dict(user("x1", None, "look around"), isSidechain=True, agentId="77", sessionId="s-a"),
             dict(assistant("x2", "x1", "msg-x", [{"type": "text", "text": "seen"}]), isSidechain=True, agentId="77",
                  sessionId="s-a")]
    (project / "s-a" / "subagents" / "agent-77.jsonl").write_text("\n".join(json.dumps(r) for r in agent))
    calls: list[tuple[str, int, int]] = []
    with Store.open(str(tmp_path / "store.sqlite"), create=True) as store:
        report = import_paths([tmp_path / "projects"], store, progress=lambda p, d, t: calls.append((p, d, t)))
        assert sorted(store.thread_ids()) == ["s-a", "s-a/agent-77", "s-b"]
        assert store.load_thread("s-a/agent-77").meta["parent_thread_id"] == "s-a"
    assert [Path(f).name for f in report.files] == ["s-a.jsonl", "agent-77.jsonl", "s-b.jsonl"]
    assert [c.file for c in report.coverage] == ["s-a.jsonl", "agent-77.jsonl", "s-b.jsonl"]
    total = sum(f.stat().st_size for f in project.rglob("*.jsonl"))
    assert {t for _, _, t in calls} == {total} and calls[-1][1] == total
    assert [d for _, d, _ in calls] == sorted(d for _, d, _ in calls)


def test_cli_2_0_agent_files_beside_the_sessions_come_with_the_session_they_name(tmp_path: Path):
    from inspector.importers import import_paths
    from inspector.store import Store

    project = tmp_path / "project"
    project.mkdir()
    (project / "s-a.jsonl").write_text("\n".join(json.dumps(dict(r, sessionId="s-a")) for r in parallel_session()))
    for agent, session in (("77", "s-a"), ("88", "s-z")):
        records = [dict(user(f"x{agent}", None, "look"), isSidechain=True, agentId=agent, sessionId=session),
                   dict(assistant(f"y{agent}", f"x{agent}", f"msg-{agent}", [{"type": "text", "text": "ok"}]),
                        isSidechain=True, agentId=agent, sessionId=session)]
        (project / f"agent-{agent}.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    with Store.open(str(tmp_path / "store.sqlite"), create=True) as store:
        report = import_paths([project], store)
        assert sorted(store.thread_ids()) == ["s-a", "s-a/agent-77", "s-z/agent-88"]
    assert [Path(f).name for f in report.files] == ["s-a.jsonl", "agent-77.jsonl", "agent-88.jsonl"]
    assert report.errors == [] and report.skipped == []


def test_calls_the_file_records_no_tokens_for_are_said():
    """A real session whose later calls lost their usage: the calls with counts are N/N, the others
    are named in the coverage line (counted here by the test's own reading of the JSONL)."""
    import json as _json

    from inspector.importers import parse_text

    path = REAL / "claude-code-2.1.17-stop-hook-progress.jsonl"
    rows = [_json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids: list[str] = []
    for row in rows:
        message = row.get("message") or {}
        if (row.get("type") == "assistant" and message.get("usage") and message.get("model") != "<synthetic>"
                and message.get("id") not in ids):
            ids.append(message["id"])
    hidden = set(ids[len(ids) // 2:])
    for row in rows:
        message = row.get("message") or {}
        if row.get("type") == "assistant" and message.get("id") in hidden:
            message.pop("usage", None)
    text = "\n".join(_json.dumps(row) for row in rows)
    _, out = parse_text(text, "s.jsonl")
    line = out.coverage[0].line()
    kept = len(ids) - len(hidden)
    assert line.startswith(f"s.jsonl: model calls {kept}/{kept} with billed tokens (+{len(hidden)} the file records no tokens for)"), line
    assert sum(len(t.requests) for t in out.threads if not t.id.count("/")) == len(ids)
