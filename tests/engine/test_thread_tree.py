"""Issue 26 item 7: the thread list as a tree (inspector.thread_tree), sub-agents under their parent."""

from __future__ import annotations

from inspector.model import ThreadInfo
from inspector.thread_tree import SubagentCost, SubagentTotals, descendants, thread_tree


def info(tid: str, parent: str | None = None, call: str | None = None, description: str | None = None) -> ThreadInfo:
    return ThreadInfo(id=tid, title=tid, source="claude-code", messages=2, requests=1, summaries=0,
                      parent_thread_id=parent, parent_tool_use_id=call, task_description=description)


def shape(infos: list[ThreadInfo]) -> list[tuple[str, int]]:
    return [(r.info.id, r.depth) for r in thread_tree(infos)]


def test_each_sub_agent_follows_its_parent_grouped_by_the_task_call_that_started_it():
    infos = [info("s1/agent-b", "s1", "call-2"), info("s1"), info("s2"), info("s1/agent-a", "s1", "call-1"),
             info("s1/agent-c", "s1", "call-2"), info("s2/agent-x", "s2", None), info("s2/agent-y", "s2", "t")]
    assert shape(infos) == [("s1", 0), ("s1/agent-b", 1), ("s1/agent-c", 1), ("s1/agent-a", 1),
                            ("s2", 0), ("s2/agent-y", 1), ("s2/agent-x", 1)]
    rows = thread_tree(infos)
    assert [r.task for r in rows] == [None, "call-2", "call-2", "call-1", None, "t", None]


def test_sub_agents_of_sub_agents_nest_and_roll_up():
    infos = [info("p"), info("p/a", "p", "c1"), info("p/a/b", "p/a", "c2"), info("p/c", "p", "c3"), info("q")]
    assert shape(infos) == [("p", 0), ("p/a", 1), ("p/a/b", 2), ("p/c", 1), ("q", 0)]
    assert [t.id for t in descendants(infos, "p")] == ["p/a", "p/a/b", "p/c"]
    assert descendants(infos, "q") == [] and descendants(infos, "p/a/b") == []


def test_a_missing_parent_or_a_loop_leaves_the_thread_at_the_top_and_lists_every_thread_once():
    infos = [info("orphan", "gone"), info("x", "y"), info("y", "x"), info("self", "self"), info("top")]
    assert shape(infos) == [("orphan", 0), ("x", 0), ("y", 0), ("self", 0), ("top", 0)]
    assert descendants(infos, "x") == []


def test_the_totals_are_unknown_where_any_sub_agent_is():
    known = SubagentCost("a", "c1", "Explore", 3, 1200, 0.5, 0.25)
    also = SubagentCost("b", "c2", None, 4, 800, 0.25, 0.5)
    totals = SubagentTotals((known, also))
    assert (totals.threads, totals.requests, totals.prompt_tokens, totals.cost, totals.recorded_cost) == \
        (2, 7, 2000, 0.75, 0.75)
    priceless = SubagentTotals((known, SubagentCost("b", None, None, 4, 800, None, None)))
    assert (priceless.requests, priceless.prompt_tokens, priceless.cost) == (7, 2000, None)
    lost = SubagentTotals((known,), unreadable=("b",))
    assert (lost.threads, lost.requests, lost.cost, lost.prompt_tokens) == (2, 3, None, None)
    assert lost.to_json()["unreadable"] == ["b"] and lost.to_json()["agents"][0]["task_description"] == "Explore"
