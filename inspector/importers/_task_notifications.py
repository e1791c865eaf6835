"""Claude Code's `<task-notification>` user messages linked to the sub-agent whose result they carry.

When a background task ends, Claude Code injects a user message into the session that started it:

    <task-notification>
    <task-id>a485154</task-id>
    <tool-use-id>toolu_01...</tool-use-id>
    <output-file>/tmp/.../a485154.output</output-file>
    <status>completed</status>
    <summary>Agent "Explore the parser" completed</summary>
    <result>...</result>
    </task-notification>

`task-id` is the sub-agent's `agentId` for a background agent (a Task / Agent call with
`run_in_background`; a background shell's id for a `Bash` one), `tool-use-id` (CLI 2.1.x) the
call that started it; `tool-use-id`, `output-file`, `summary` and `result` are optional. The
sub-agent thread is the one whose `meta["parent_tool_use_id"]` is that call, else
`<session>/agent-<task-id>`. The link is put in the message's `meta["task_notification"]`:
`{"task_id", "tool_use_id", "status", "subagent_thread_id"}` (`subagent_thread_id` null where the
task is no sub-agent of the import: a background shell, or an agent whose records are absent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from inspector.model import Role, Thread

NOTIFICATION = re.compile(r"<task-notification>(.*?)(?:</task-notification>|\Z)", re.S)
FIELDS = ("task-id", "tool-use-id", "status")


def _field(body: str, name: str) -> str | None:
    match = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", body, re.S)
    return match.group(1) if match and match.group(1) else None


def notification_of(content: str) -> dict[str, str | None] | None:
    """The fields of the first `<task-notification>` at the start of a user message's text (None: none)."""
    if not content.lstrip().startswith("<task-notification>"):
        return None
    match = NOTIFICATION.search(content)
    if match is None:
        return None
    body = match.group(1)
    return {name.replace("-", "_"): _field(body, name) for name in FIELDS}


def link_notifications(threads: Sequence[Thread]) -> list[Thread]:
    """`threads` with each notification message of a parent thread linked to its sub-agent (module doc)."""
    by_call: dict[tuple[str, str], str] = {}  # (parent thread, Task call id) -> sub-agent thread
    ids = {t.id for t in threads}
    for t in threads:
        parent, call = t.meta.get("parent_thread_id"), t.meta.get("parent_tool_use_id")
        if isinstance(parent, str) and isinstance(call, str):
            by_call.setdefault((parent, call), t.id)
    out: list[Thread] = []
    for thread in threads:
        messages = list(thread.messages)
        changed = False
        for i, message in enumerate(messages):
            if message.role is not Role.USER:
                continue
            found = notification_of(message.content)
            if found is None:
                continue
            link: dict[str, Any] = dict(found)
            session = thread.meta.get("sessionId") if isinstance(thread.meta.get("sessionId"), str) else thread.id
            target = by_call.get((thread.id, found["tool_use_id"])) if found["tool_use_id"] else None
            if target is None and found["task_id"]:
                candidate = f"{session}/agent-{found['task_id']}"
                target = candidate if candidate in ids else None
            link["subagent_thread_id"] = target
            messages[i] = replace(message, meta={**message.meta, "task_notification": link})
            changed = True
        out.append(replace(thread, messages=tuple(messages)) if changed else thread)
    return out


__all__ = ["link_notifications", "notification_of"]
