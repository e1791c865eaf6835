"""Issue 26 item 7 in the TUI: the thread list nests sub-agents under their parent, and the status line
shows the parent's own requests and cost with its sub-agents' apart.

On the real Claude Code session with five sidechains (../shared/fixtures/real); the sidechain runs and
their model calls are counted here from the raw file (split at their roots, one call per `message.id`)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from inspector.importers import parse_text
from inspector.screens.source import MemorySource
from inspector.service import default_compactions, load_config, run_replay
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.blocks import BlocksView
from widgets.threads import ThreadList

SIDECHAINS = REAL / "claude-code-session-with-sidechains.jsonl"


def sidechain_runs() -> dict[str, int]:
    """Sidechain root -> its model calls, in file order."""
    runs: dict[str, set[str]] = {}
    root = None
    for line in SIDECHAINS.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("isSidechain"):
            if r["parentUuid"] is None:
                root = r["uuid"]
            calls = runs.setdefault(root, set())
            if r["type"] == "assistant":
                calls.add(r["message"]["id"])
    return {k: len(v) for k, v in runs.items()}


async def test_sub_agents_are_nested_under_their_parent_and_their_totals_shown_apart(tmp_path: Path):
    _, result = parse_text(SIDECHAINS.read_text(encoding="utf-8"), SIDECHAINS.name)
    parent, *kids = result.threads
    runs = sidechain_runs()
    assert [k.id for k in kids] == [f"{parent.id}/sidechain-{root}" for root in runs]
    # listed in reverse, sub-agents first: the list still puts each under its parent
    app = make_app(tmp_path, source=MemorySource([*reversed(kids), parent]), thread_id=parent.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        threads = app.query_one(ThreadList)
        titles = [threads._row(r)[0].plain for r in threads.rows]
        assert [r.info.id for r in threads.rows] == [parent.id, *(k.id for k in reversed(kids))]
        assert titles[0].startswith("▶ ") and "↳" not in titles[0]
        for title, kid in zip(titles[1:], reversed(kids), strict=True):
            assert title == f"↳ {kid.meta['task_description']}"
        assert app.main_screen.view.thread.id == parent.id
        status = plain(app.query_one("#status", Static))
        own = len(app.main_screen.view.simulation.requests)
        assert f"{own:,} requests + {sum(runs.values()):,} in {len(runs)} sub-agents" in status
        costs = [run_replay(k, load_config(None, {}, path=tmp_path / "config.toml", thread=k),
                            compactions=default_compactions(k)).cost_totals().cost for k in kids]
        parent_cost = app.main_screen.view.cost_totals.cost
        assert f"${parent_cost:,.2f}" in status and f"+ ${sum(costs):,.2f} sub-agents" in status
        # the filter finds a sub-agent by its Task call's description
        threads.apply_filter(kids[0].meta["task_description"], typed=True)
        assert [t.id for t in threads.shown] == [kids[0].id]


async def test_the_block_detail_of_a_task_notification_names_its_sub_agent_thread(tmp_path: Path):
    """A `<task-notification>` (Claude Code's format, appended to a copy of the real CLI 2.1.7 session)
    answered by the agent: its block's detail names the sub-agent thread that ran the task."""
    from tests.real.test_subagents_real import SUBAGENTS, notification, records

    recs = records(SUBAGENTS / "turn-2.jsonl")
    agent = next(r["toolUseResult"]["agentId"] for r in recs
                 if isinstance(r.get("toolUseResult"), dict) and r["toolUseResult"].get("agentId"))
    note = notification(recs[-1], "n1", f"<task-id>{agent}</task-id>\n<status>completed</status>")
    answer = {"type": "assistant", "uuid": "a-n1", "parentUuid": "n1", "isSidechain": False,
              "sessionId": recs[-1]["sessionId"], "timestamp": "2030-01-01T00:00:01.000Z",
              "message": {"id": "msg_n1", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "The agent is done."}],
                          "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                                    "cache_read_input_tokens": 30_000, "output_tokens": 8}}}
    text = "".join(json.dumps(r) + "\n" for r in [*recs, note, answer])
    agent_file = SUBAGENTS / "subagents" / f"agent-{agent}.jsonl"
    _, result = parse_text(text, "turn-2.jsonl", companions=[(agent_file.name, agent_file.read_text())])
    parent = result.threads[0]
    sub_agent = f"{parent.id}/agent-{agent}"
    app = make_app(tmp_path, source=MemorySource(result.threads), thread_id=parent.id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.main_screen
        screen.request_index = len(screen.view.requests) - 1
        await pilot.press("2")
        await pilot.pause()
        request = screen.current_request
        [at] = [i for i, b in enumerate(request.blocks) if b.message_id == "n1"]
        app.query_one(BlocksView).select_block(at)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert f"Background task result of task {agent} (completed): from the sub-agent thread {sub_agent}" in detail
        assert sub_agent in {r.info.id for r in app.query_one(ThreadList).rows}
