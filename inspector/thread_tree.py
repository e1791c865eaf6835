"""Sub-agents inside their parent: the thread list as a tree, and the figures a parent rolls in.

Pure. A sub-agent thread (a Claude Code sidechain `<session>/agent-<id>` or `<session>/sidechain-<root>`,
an opencode child session, a Gemini sub-agent) names its parent in `meta["parent_thread_id"]` and,
where known, the parent's tool call that started it (`meta["parent_tool_use_id"]`, Claude Code's Task
call) and that call's description (`meta["task_description"]`); `ThreadInfo` carries all three.

`thread_tree` orders a thread list so that every sub-agent sits under its parent, the sub-agents of
one Task call together, in the list's own order otherwise. A thread whose parent is not in the list,
or whose parents loop, stays at the top. `descendants` are the sub-agents a parent's totals roll in
(its sub-agents' sub-agents too); `SubagentTotals` holds those figures apart from the parent's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.model import ThreadInfo


@dataclass(frozen=True, slots=True)
class TreeRow:
    """One thread of the list, at its depth (0: a top-level thread, 1: a sub-agent of one, ...)."""

    info: ThreadInfo
    depth: int

    @property
    def task(self) -> str | None:
        """The Task call that started this sub-agent (None at the top, or where the import could not tell)."""
        return self.info.parent_tool_use_id if self.depth else None


def _parents(infos: Sequence[ThreadInfo]) -> dict[str, str]:
    """thread id -> parent id, for the threads whose parent is in the list and is no descendant of theirs."""
    ids = {t.id for t in infos}
    linked = {t.id: t.parent_thread_id for t in infos
              if t.parent_thread_id is not None and t.parent_thread_id in ids and t.parent_thread_id != t.id}
    out: dict[str, str] = {}
    for tid, parent in linked.items():
        seen = {tid}
        current: str | None = parent
        while current is not None and current not in seen:
            seen.add(current)
            current = linked.get(current)
        if current is None:  # the chain of parents reaches a top-level thread: no loop
            out[tid] = parent
    return out


def children(infos: Sequence[ThreadInfo]) -> dict[str, list[ThreadInfo]]:
    """parent id -> its sub-agents, grouped by the Task call that started them (calls in the order of
    their first sub-agent in the list; sub-agents of no known call last), each group in list order."""
    parents = _parents(infos)
    out: dict[str, list[ThreadInfo]] = {}
    for t in infos:
        if t.id in parents:
            out.setdefault(parents[t.id], []).append(t)
    for parent, kids in out.items():
        calls = list(dict.fromkeys(k.parent_tool_use_id for k in kids if k.parent_tool_use_id is not None))
        rank = {call: i for i, call in enumerate(calls)}
        out[parent] = sorted(kids, key=lambda k: rank.get(k.parent_tool_use_id, len(calls)))  # stable
    return out


def thread_tree(infos: Sequence[ThreadInfo]) -> list[TreeRow]:
    """Every thread of `infos` once: each top-level thread followed by its sub-agents (depth first)."""
    parents = _parents(infos)
    kids = children(infos)
    out: list[TreeRow] = []

    def visit(info: ThreadInfo, depth: int) -> None:
        out.append(TreeRow(info, depth))
        for kid in kids.get(info.id, ()):
            visit(kid, depth + 1)

    for info in infos:
        if info.id not in parents:
            visit(info, 0)
    return out


def descendants(infos: Sequence[ThreadInfo], thread_id: str) -> list[ThreadInfo]:
    """The sub-agents of `thread_id`, theirs too, in tree order (empty for a thread with none)."""
    kids = children(infos)
    out: list[ThreadInfo] = []
    stack = list(reversed(kids.get(thread_id, ())))
    while stack:
        info = stack.pop()
        out.append(info)
        stack.extend(reversed(kids.get(info.id, ())))
    return out


@dataclass(frozen=True, slots=True)
class SubagentCost:
    """One sub-agent's own figures: its requests and, replayed under its own baseline config, its billed
    prompt tokens and cost (None: unknown, the cache is not modelled or a model has no price)."""

    thread_id: str
    parent_tool_use_id: str | None
    task_description: str | None
    requests: int
    prompt_tokens: int | None
    cost: float | None
    recorded_cost: float | None

    def to_json(self) -> dict[str, Any]:
        return {"thread_id": self.thread_id, "parent_tool_use_id": self.parent_tool_use_id,
                "task_description": self.task_description, "requests": self.requests,
                "prompt_tokens": self.prompt_tokens, "cost": _rounded(self.cost),
                "recorded_cost": _rounded(self.recorded_cost)}


@dataclass(frozen=True, slots=True)
class SubagentTotals:
    """A parent's sub-agents, summed apart from the parent's own figures. `unreadable`: sub-agent
    threads that could not be loaded or replayed (then the sums are those of the others, and the
    token and cost sums unknown)."""

    agents: tuple[SubagentCost, ...]
    unreadable: tuple[str, ...] = ()

    @property
    def threads(self) -> int:
        return len(self.agents) + len(self.unreadable)

    @property
    def requests(self) -> int:
        return sum(a.requests for a in self.agents)

    def _sum(self, name: str) -> Any:
        values = [getattr(a, name) for a in self.agents]
        if self.unreadable or None in values:
            return None
        return sum(values)

    @property
    def prompt_tokens(self) -> int | None:
        return self._sum("prompt_tokens")

    @property
    def cost(self) -> float | None:
        return self._sum("cost")

    @property
    def recorded_cost(self) -> float | None:
        return self._sum("recorded_cost")

    def to_json(self) -> dict[str, Any]:
        """The simulate JSON's `subagents` (README, "Sub-agents")."""
        return {"threads": self.threads, "requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "cost": _rounded(self.cost), "recorded_cost": _rounded(self.recorded_cost),
                "agents": [a.to_json() for a in self.agents], "unreadable": list(self.unreadable)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


__all__ = ["SubagentCost", "SubagentTotals", "TreeRow", "children", "descendants", "thread_tree"]
