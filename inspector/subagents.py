"""A parent thread's sub-agents, replayed: the figures its totals roll in, shown apart (`thread_tree`).

Each sub-agent (every descendant of the thread in the source's list) is loaded and replayed under its
own baseline config (its source's profile, the config file, no what-if edit) in its default compaction
mode, as `simulate --thread <sub-agent>` would: its requests, billed prompt tokens and cost are that
replay's (`accounting.ThreadCost`), its recorded cost the one its own transcript records. The TUI's
status line and `simulate` (text and `--json`'s `subagents`) show them beside the parent's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from inspector.config import ConfigError
from inspector.model import Thread, ThreadInfo
from inspector.store import StoreError
from inspector.thread_tree import SubagentCost, SubagentTotals, descendants


def subagent_cost(thread: Thread, info: ThreadInfo | None = None, config_file: Path | None = None) -> SubagentCost:
    """One sub-agent's figures, replayed under its own baseline config."""
    from inspector.service import default_compactions, load_config, run_replay

    replay = run_replay(thread, load_config(None, {}, path=config_file, thread=thread),
                        compactions=default_compactions(thread))
    totals = replay.cost_totals()
    meta = thread.meta
    call = info.parent_tool_use_id if info is not None else meta.get("parent_tool_use_id")
    description = info.task_description if info is not None else meta.get("task_description")
    return SubagentCost(
        thread_id=thread.id,
        parent_tool_use_id=call if isinstance(call, str) else None,
        task_description=description if isinstance(description, str) else None,
        requests=len(replay),
        prompt_tokens=None if totals is None else totals.prompt_tokens,
        cost=None if totals is None else totals.cost,
        recorded_cost=None if totals is None else totals.recorded_cost,
    )


def subagent_totals(infos: Sequence[ThreadInfo], thread_id: str, load: Callable[[str], Thread],
                    config_file: Path | None = None) -> SubagentTotals | None:
    """The sub-agents of `thread_id` among `infos`, each loaded with `load` and replayed; None where the
    thread has none. A sub-agent that cannot be loaded or replayed is listed as unreadable."""
    kids = descendants(infos, thread_id)
    if not kids:
        return None
    agents: list[SubagentCost] = []
    unreadable: list[str] = []
    for info in kids:
        try:
            agents.append(subagent_cost(load(info.id), info, config_file))
        except (StoreError, KeyError, ValueError, RuntimeError, ConfigError, OSError):
            unreadable.append(info.id)
    return SubagentTotals(tuple(agents), tuple(unreadable))


__all__ = ["subagent_cost", "subagent_totals"]
