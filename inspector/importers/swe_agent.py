"""SWE-agent trajectories (`.traj` JSON).

`history` is the chat (system, user, assistant with OpenAI-style `tool_calls`, and `tool`
replies that carry a `tool_call_ids` list); it becomes one thread, id = the file's stem. The
first system message is the system prompt; SWE-agent's extra keys (`thought`, `action`,
`agent`, `message_type`) stay in each message's meta and a reply's first `tool_call_ids` entry
is its `tool_call_id` (the full list kept in meta when longer). `info` (exit status, submission,
model stats) goes to the thread meta with the number of `trajectory` steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import (
    FormatError,
    ParseResult,
    Progress,
    load_json,
    openai_messages,
)
from inspector.importers.base import Importer, Sample
from inspector.model import Thread


def parse_document(document: Any, name: str) -> ParseResult:
    if not isinstance(document, Mapping) or not isinstance(document.get("history"), list):
        raise FormatError(f"{name}: not a SWE-agent trajectory (no \"history\" list)")
    result = ParseResult()
    stem = PurePath(name).name.split(".")[0]
    system_prompt, messages = openai_messages(document["history"], name, result.skipped)
    if not messages:
        result.skipped.append(f"{name}: no messages in history")
        return result
    meta: dict[str, Any] = {"file": PurePath(name).name}
    if isinstance(document.get("info"), Mapping):
        meta["info"] = dict(document["info"])
    if isinstance(document.get("trajectory"), list):
        meta["trajectory_steps"] = len(document["trajectory"])
    if document.get("environment") is not None:
        meta["environment"] = document["environment"]
    result.threads.append(
        Thread(id=stem, title=stem, source="swe-agent",
               system_prompt=system_prompt, messages=tuple(messages), meta=meta)
    )
    return result


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = parse_document(load_json(text, name), name)
    if progress is not None:
        progress(len(text))
    return result


def detect(sample: Sample) -> bool:
    """A trajectory: a document with a `history` list (a `.traj` file is one whatever it holds)."""
    return isinstance(sample.document, Mapping) and isinstance(sample.document.get("history"), list)


_READS = (
        '`.traj` files: `history` with `tool_call_ids` lists'
    )

IMPORTER = Importer(name="swe-agent", detect=detect, parse=parse, default_profile=None, reads=_READS,
                    suffixes=(".traj",))

