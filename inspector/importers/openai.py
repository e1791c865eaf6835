"""OpenAI chat-completions transcripts: one conversation, or a list of records (tau-bench).

Accepted shapes (JSON file, or JSONL with one item per line):
- a list of chat messages (`role`, `content`, `tool_calls[{id, function{name, arguments}}]`,
  `tool_call_id`) -> one thread, id = the file's stem;
- an object with `messages` (optional `id`, `title`, `tools`, `model`) -> one thread;
- a list of records each with `traj` (tau-bench) or `messages` -> one thread per record, id
  `<stem>/<task_id>-<trial>` (else `<stem>/<index>`), the record's other fields in meta;
- JSONL whose lines are chat messages -> one thread (other lines reported and skipped); JSONL
  holding records (a `traj` or `messages` list) -> one thread each.
Leading system messages become the system prompt; message ids are `m<index>`. Tool-call
arguments keep the provider's JSON text. Where assistant messages carry the response's `usage`
(logged chat completions), every assistant message is a recorded request with
`usage.prompt_tokens`, `prompt_tokens_details.cached_tokens` (cache read) and
`completion_tokens` (output) where present.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import (
    FormatError,
    ParseResult,
    Progress,
    iter_jsonl,
    load_json,
    openai_messages,
    openai_tools,
    title_from_messages,
)
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Thread


def _stem(name: str) -> str:
    return PurePath(name).name.split(".")[0]


def _is_record(item: Any) -> bool:
    """A tau-bench style record: a `traj` or `messages` list (one thread each)."""
    return isinstance(item, Mapping) and (isinstance(item.get("traj"), list) or isinstance(item.get("messages"), list))


def _is_message(item: Any) -> bool:
    return isinstance(item, Mapping) and isinstance(item.get("role"), str) and "traj" not in item


def _thread(thread_id: str, raw: list[Any], where: str, skipped: list[str], *, title: str | None = None,
            tools: Any = None, meta: dict[str, Any] | None = None, source: str = "openai") -> Thread | None:
    system_prompt, messages = openai_messages(raw, where, skipped)
    if not messages:
        skipped.append(f"{where}: no messages")
        return None
    return Thread(
        id=thread_id,
        title=title or title_from_messages(messages, thread_id),
        source=source,
        system_prompt=system_prompt,
        tools=openai_tools(tools),
        messages=tuple(messages),
        requests=_usage_requests(messages, (meta or {}).get("model")),
        meta=meta or {},
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _usage_requests(messages: list[Message], model: Any) -> tuple[Request, ...]:
    """One request before every assistant message, where the transcript logged responses' `usage`."""
    if not any(m.role is Role.ASSISTANT and isinstance(m.meta.get("usage"), Mapping) for m in messages):
        return ()
    out: list[Request] = []
    for i, m in enumerate(messages):
        if m.role is not Role.ASSISTANT or i == 0:
            continue
        usage = m.meta.get("usage") if isinstance(m.meta.get("usage"), Mapping) else {}
        details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), Mapping) else {}
        name = m.meta.get("model") if isinstance(m.meta.get("model"), str) else model
        out.append(Request(id=f"req-{m.id}", after_message_id=messages[i - 1].id,
                           prompt_tokens=_count(usage.get("prompt_tokens")),
                           model=name if isinstance(name, str) else None,
                           cache_read_tokens=_count(details.get("cached_tokens")),
                           output_tokens=_count(usage.get("completion_tokens"))))
    return tuple(out)


def _record_thread(record: Mapping[str, Any], index: int, stem: str, where: str, skipped: list[str]) -> Thread | None:
    raw = record.get("traj") if "traj" in record else record.get("messages")
    if not isinstance(raw, list):
        skipped.append(f"{where}: record {index}: no message list (`traj` or `messages`)")
        return None
    task, trial = record.get("task_id"), record.get("trial")
    if record.get("id") is not None:
        suffix = str(record["id"])
    elif task is not None:
        suffix = f"{task}-{trial}" if trial is not None else str(task)
    else:
        suffix = str(index)
    meta = {k: v for k, v in record.items() if k not in ("traj", "messages", "tools")}
    title = str(record["title"]) if record.get("title") else None
    if title is None and task is not None:
        title = f"{stem} task {task}" + (f" trial {trial}" if trial is not None else "")
    return _thread(f"{stem}/{suffix}", raw, f"{where}: record {index}", skipped, title=title,
                   tools=record.get("tools"), meta=meta)


def parse_document(document: Any, name: str) -> ParseResult:
    result = ParseResult()
    stem = _stem(name)
    if isinstance(document, Mapping) and isinstance(document.get("messages"), list):
        meta = {k: v for k, v in document.items() if k not in ("messages", "tools", "id", "title")}
        thread = _thread(str(document.get("id") or stem), document["messages"], name, result.skipped,
                         title=document.get("title"), tools=document.get("tools"), meta=meta)
        if thread:
            result.threads.append(thread)
    elif isinstance(document, list) and any(_is_message(x) for x in document) and all(
            _is_message(x) or not isinstance(x, Mapping) for x in document):
        # A message list; a null (or other non-object) entry is reported by openai_messages, the rest imports.
        thread = _thread(stem, document, name, result.skipped)
        if thread:
            result.threads.append(thread)
    elif isinstance(document, list):
        for index, record in enumerate(document):
            if not isinstance(record, Mapping):
                result.skipped.append(f"{name}: record {index}: not an object")
                continue
            thread = _record_thread(record, index, stem, name, result.skipped)
            if thread:
                result.threads.append(thread)
    else:
        raise FormatError(f"{name}: not an OpenAI chat transcript (no message list)")
    return result


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    if PurePath(name).suffix.lower() == ".jsonl" or name.lower().endswith(".jsonl.gz"):
        return _parse_jsonl(text, name, progress)
    result = parse_document(load_json(text, name), name)
    if progress is not None:
        progress(len(text))
    return result


def _parse_jsonl(text: str, name: str, progress: Progress | None) -> ParseResult:
    result = ParseResult()
    items = list(iter_jsonl(text, name, result.skipped, progress))
    stem = _stem(name)
    if items and not any(_is_record(item) for _, item in items):
        # One conversation; a line that is not a chat message is reported and the rest still import.
        thread = _thread(stem, [item for _, item in items], name, result.skipped)
        if thread:
            result.threads.append(thread)
        return result
    for number, item in items:
        if _is_message(item):
            result.skipped.append(f"{name}:{number}: a chat message among records")
            continue
        thread = _record_thread(item, number, stem, f"{name}:{number}", result.skipped)
        if thread:
            result.threads.append(thread)
    return result


def detect(sample: Sample) -> bool:
    """Chat-completions messages, or records holding them (asked after the Anthropic importer, which
    takes the bodies only its API would accept)."""
    if sample.lines is not None:
        return any("role" in item or "traj" in item or "messages" in item for item in sample.lines)
    document = sample.document
    if isinstance(document, Mapping):
        return isinstance(document.get("messages"), list)
    items = [x for x in document if x is not None] if isinstance(document, list) else []
    return bool(items) and any(all(isinstance(x, dict) and key in x for x in items)
                               for key in ("traj", "messages", "role"))


_READS = (
        'one chat-completions conversation (JSON or JSONL), or a list of records with a `traj` / '
        '`messages` list (tau-bench), one thread each'
    )

IMPORTER = Importer(name="openai", detect=detect, parse=parse, default_profile=None, reads=_READS)

