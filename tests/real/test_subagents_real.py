"""Issue 26 item 7 on the real Claude Code sessions: sub-agents listed under their parent and its Task
call, their requests and cost rolled into the parent's totals apart, and a `<task-notification>`
linked to its sub-agent.

The expected figures come from the raw files of ../shared/fixtures/real read by a small parser here
(sidechain runs split at their roots, model calls counted once per `message.id`, Task calls by their
prompt), never with the importer's code. No real fixture holds a `<task-notification>`: the test
appends them to a copy of the CLI 2.1.7 session, in Claude Code's format (a user record whose text is
`<task-notification><task-id>AGENT_ID</task-id>[<tool-use-id>TOOL_USE_ID</tool-use-id>]<status>...`,
as Claude Code injects a background task's result; the agent's id is the one its Task result
records in `toolUseResult.agentId`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import import_paths, parse_text
from inspector.model import Role
from inspector.screens.source import thread_info
from inspector.store import Store
from inspector.thread_tree import thread_tree
from tests.paths import REAL
from widgets.blocks import notification_origin

SIDECHAINS = REAL / "claude-code-session-with-sidechains.jsonl"
SUBAGENTS = REAL / "claude-code-2.1.7-subagents"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sidechain_truth() -> dict:
    """Per sidechain root (in file order): its model calls and the Task call that started it."""
    recs = records(SIDECHAINS)
    runs: dict[str, list[dict]] = {}
    current = None
    for r in recs:
        if r.get("isSidechain"):
            if r["parentUuid"] is None:
                current = r["uuid"]
            runs.setdefault(current, []).append(r)
    tasks = {b["input"]["prompt"]: (b["id"], b["input"]["description"]) for r in recs
             if r.get("type") == "assistant" and not r.get("isSidechain")
             for b in r["message"]["content"] if b.get("type") == "tool_use" and b["name"] == "Task"}
    out = {}
    for root, run in runs.items():
        calls = {r["message"]["id"] for r in run if r["type"] == "assistant"}
        out[root] = {"requests": len(calls), "task": tasks[run[0]["message"]["content"]]}
    main_calls = {r["message"]["id"] for r in recs if r.get("type") == "assistant" and not r.get("isSidechain")}
    return {"session": recs[1]["sessionId"], "runs": out, "main_requests": len(main_calls)}


def test_the_thread_tree_puts_every_sidechain_under_its_session_and_task_call():
    truth = sidechain_truth()
    _, result = parse_text(SIDECHAINS.read_text(encoding="utf-8"), SIDECHAINS.name)
    rows = thread_tree([thread_info(t) for t in result.threads])
    session = truth["session"]
    assert [(r.info.id, r.depth) for r in rows] == [(session, 0)] + [
        (f"{session}/sidechain-{root}", 1) for root in truth["runs"]]
    for row, run in zip(rows[1:], truth["runs"].values(), strict=True):
        assert (row.task, row.info.task_description) == run["task"]
        assert row.info.requests == run["requests"]


def test_simulate_rolls_the_sub_agents_in_apart_text_and_json(tmp_path: Path):
    truth = sidechain_truth()
    db = str(tmp_path / "s.sqlite")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(SIDECHAINS), "--db", db]).exit_code == 0
    session = truth["session"]
    out = runner.invoke(main, ["simulate", "--thread", session, "--db", db, "--json", "--blocks", "none"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    runs = truth["runs"]
    sub = doc["subagents"]
    assert len(doc["requests"]) == doc["cost"]["requests"] == truth["main_requests"] == 9  # the parent's own
    assert sub["threads"] == len(runs) == 5
    assert sub["requests"] == sum(r["requests"] for r in runs.values())
    # in the store's list order (by id), each with its Task call and that call's description
    assert [(a["thread_id"], a["parent_tool_use_id"], a["task_description"], a["requests"]) for a in sub["agents"]] \
        == sorted((f"{session}/sidechain-{root}", *r["task"], r["requests"]) for root, r in runs.items())
    # each rolled-in figure is the sub-agent's own replay, as `simulate --thread <sub-agent>` gives it
    for agent in sub["agents"]:
        own = json.loads(runner.invoke(main, ["simulate", "--thread", agent["thread_id"], "--db", db, "--json",
                                              "--timeline"]).stdout)
        assert (agent["prompt_tokens"], agent["cost"], agent["recorded_cost"]) == (
            own["cost"]["prompt_tokens"], own["cost"]["cost"], own["cost"]["recorded_cost"])
        assert agent["requests"] == len(own["requests"])
    assert sub["prompt_tokens"] == sum(a["prompt_tokens"] for a in sub["agents"]) > 0
    assert abs(sub["cost"] - sum(a["cost"] for a in sub["agents"])) < 1e-5 and sub["cost"] > 0
    text = runner.invoke(main, ["simulate", "--thread", session, "--db", db, "--timeline"]).stdout
    assert f"9 requests + {sub['requests']:,} in 5 sub-agents" in text
    assert f"sub-agents (not in the figures above): {sub['requests']:,} requests in 5 sub-agents, " \
           f"{sub['prompt_tokens']:,} billed prompt tokens, cost ${sub['cost']:,.2f}" in text
    # a sub-agent has none of its own: no `subagents` key
    leaf = json.loads(runner.invoke(main, ["simulate", "--thread", sub["agents"][0]["thread_id"], "--db", db,
                                           "--json", "--timeline"]).stdout)
    assert "subagents" not in leaf
    listed = json.loads(runner.invoke(main, ["threads", "--db", db, "--json"]).stdout)
    assert [t.get("parent_thread_id") for t in listed] == [None] + [session] * 5


def notification(after: dict, uuid: str, body: str) -> dict:
    return {"type": "user", "uuid": uuid, "parentUuid": after["uuid"], "isSidechain": False,
            "sessionId": after["sessionId"], "timestamp": "2030-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": f"<task-notification>\n{body}\n</task-notification>"}}


def test_a_task_notification_is_linked_to_its_sub_agent(tmp_path: Path):
    folder = tmp_path / SUBAGENTS.name
    shutil.copytree(SUBAGENTS, folder)
    session_file = folder / "turn-2.jsonl"
    recs = records(session_file)
    [(agent, task)] = {(r["toolUseResult"]["agentId"], b["tool_use_id"]) for r in recs
                       if isinstance(r.get("toolUseResult"), dict) and r["toolUseResult"].get("agentId")
                       for b in r["message"]["content"] if b.get("type") == "tool_result"}
    first = notification(recs[-1], "n1", f"<task-id>{agent}</task-id>\n<status>completed</status>\n<summary>done"
                                         "</summary>\n<result>All four commands are specified.</result>")
    second = notification(first, "n2", f"<task-id>renamed</task-id>\n<tool-use-id>{task}</tool-use-id>\n"
                                       "<status>failed</status>")
    shell = notification(second, "n3", "<task-id>bg1</task-id>\n<status>killed</status>")
    session_file.write_text("".join(json.dumps(r) + "\n" for r in [*recs, first, second, shell]), encoding="utf-8")
    with Store.open(str(tmp_path / "n.sqlite"), create=True) as store:
        report = import_paths([folder], store)
        main_thread = store.load_thread(recs[-1]["sessionId"])
    sub_agent = f"{recs[-1]['sessionId']}/agent-{agent}"
    assert report.errors == [] and sub_agent in report.threads
    notes = {m.id: m for m in main_thread.messages if m.role is Role.USER and "task_notification" in m.meta}
    assert {k: dict(m.meta["task_notification"]) for k, m in notes.items()} == {
        "n1": {"task_id": agent, "tool_use_id": None, "status": "completed", "subagent_thread_id": sub_agent},
        "n2": {"task_id": "renamed", "tool_use_id": task, "status": "failed", "subagent_thread_id": sub_agent},
        "n3": {"task_id": "bg1", "tool_use_id": None, "status": "killed", "subagent_thread_id": None},
    }
    # the block detail says where each came from
    assert f"from the sub-agent thread {sub_agent}" in notification_origin(notes["n1"]).plain
    assert "no sub-agent thread of this import ran it" in notification_origin(notes["n3"]).plain
    assert notification_origin(main_thread.messages[0]) is None


def test_a_notification_kept_apart_with_its_file_links_the_renamed_sub_agent(tmp_path: Path):
    """Two copies of one session (the same session id, different files): the later file's threads get
    `~2`, and its notification names its own sub-agent thread, `...~2`, not the first file's."""
    ids = []
    with Store.open(str(tmp_path / "n.sqlite"), create=True) as store:
        for copy, status in (("a", "completed"), ("b", "failed")):
            folder = tmp_path / copy / SUBAGENTS.name
            shutil.copytree(SUBAGENTS, folder)
            session_file = folder / "turn-2.jsonl"
            recs = records(session_file)
            agent = next(r["toolUseResult"]["agentId"] for r in recs
                         if isinstance(r.get("toolUseResult"), dict) and r["toolUseResult"].get("agentId"))
            note = notification(recs[-1], "n1", f"<task-id>{agent}</task-id>\n<status>{status}</status>")
            session_file.write_text("".join(json.dumps(r) + "\n" for r in [*recs, note]), encoding="utf-8")
            report = import_paths([folder], store)
            assert report.errors == []
            ids.append(sorted(report.threads))
        session = recs[-1]["sessionId"]
        assert ids == [[session, f"{session}/agent-{agent}"], [f"{session}/agent-{agent}~2", f"{session}~2"]]
        links = {tid: next(m.meta["task_notification"]["subagent_thread_id"] for m in store.load_thread(tid).messages
                           if "task_notification" in m.meta) for tid in (session, f"{session}~2")}
    assert links == {session: f"{session}/agent-{agent}", f"{session}~2": f"{session}/agent-{agent}~2"}
