"""Recording API: an app logs its threads straight into a context-inspector store.

    from inspector.recording import Recorder

    rec = Recorder("sqlite:///threads.sqlite")          # or a file path, or any SQLAlchemy URL
    thread = rec.open_thread("Refactor auth", system_prompt="You are...", tools=[...])
    user = thread.append("user", "Please refactor auth.py")
    thread.record_request(prompt_tokens=1834, model="claude-sonnet-4-5")   # what the provider reported
    thread.append("assistant", "", tool_calls=[{"id": "c1", "name": "read_file", "arguments": {"path": "auth.py"}}])
    thread.append("tool", "def login(): ...", tool_call_id="c1")
    thread.record_summary("We read auth.py ...", first_message_id=user, last_message_id=...)
    rec.close()

Each call is one small transaction, so a viewer in live mode sees it at once. SQLite
databases are written in WAL mode (readers are not blocked); `close()` switches the file back
to rollback-journal mode so read-only viewers never need -wal/-shm files beside it (unless a viewer
still has the file open: then it stays in WAL mode rather than fail).
`record_request` places the request after the last appended message unless told otherwise:
call it when the provider answers, before appending the assistant message it produced.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy.exc import OperationalError

from inspector.model import EmotionalMarker, Kind, Message, Request, Role, Summary, Thread, ToolCall, ToolDef
from inspector.store import Store, StoreError, now_iso, sqlite_path

__all__ = ["Recorder", "ThreadRecorder"]


def _tool_def(tool: ToolDef | Mapping[str, Any]) -> ToolDef:
    if isinstance(tool, ToolDef):
        return tool
    return ToolDef(name=str(tool["name"]), description=str(tool.get("description") or ""),
                   input_schema=dict(tool.get("input_schema") or tool.get("parameters") or {}))


def _tool_call(call: ToolCall | Mapping[str, Any]) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    return ToolCall(id=str(call["id"]), name=str(call.get("name") or ""), arguments=call.get("arguments", {}))


class Recorder:
    """Opens (creating when missing) a store for writing."""

    def __init__(self, db_url: str) -> None:
        self.store = Store.open(db_url, read_only=False, create=True, wal=True)

    def open_thread(
        self,
        title: str,
        system_prompt: str = "",
        tools: Iterable[ToolDef | Mapping[str, Any]] = (),
        *,
        thread_id: str | None = None,
        window: int | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ThreadRecorder:
        """Start a new thread (a fresh uuid unless `thread_id` is given)."""
        thread = Thread(
            id=thread_id or uuid.uuid4().hex,
            title=title,
            source="recorded",
            system_prompt=system_prompt,
            tools=tuple(_tool_def(t) for t in tools),
            window=window,
            meta=dict(meta or {}),
        )
        self.store.create_thread(thread)
        return ThreadRecorder(self.store, thread.id)

    def resume_thread(self, thread_id: str) -> ThreadRecorder:
        """Continue recording into an existing thread."""
        if not self.store.has_thread(thread_id):
            raise StoreError(f"no thread {thread_id!r}")
        return ThreadRecorder(self.store, thread_id)

    def close(self) -> None:
        path = sqlite_path(self.store.url)
        if path is not None:
            try:
                with self.store.engine.connect() as conn:
                    raw = conn.connection.dbapi_connection  # outside any transaction: the mode can change
                    raw.execute("PRAGMA busy_timeout=0")
                    raw.execute("PRAGMA journal_mode=DELETE")
            except (OperationalError, sqlite3.OperationalError):
                pass  # a viewer is still reading (live tailing): leave the file in WAL mode rather than fail
        self.store.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadRecorder:
    """Handle on one recorded thread; ids are generated when not given."""

    def __init__(self, store: Store, thread_id: str) -> None:
        self.store = store
        self.thread_id = thread_id
        thread = store.load_thread(thread_id)
        self._count = len(thread.messages)
        self._last_message_id = thread.messages[-1].id if thread.messages else None
        self._last_summary_id = thread.summaries[-1].id if thread.summaries else None
        self._pending_summary: str | None = None
        self._requests = len(thread.requests)

    def append(
        self,
        role: str | Role,
        content: str = "",
        *,
        tool_calls: Sequence[ToolCall | Mapping[str, Any]] = (),
        tool_call_id: str | None = None,
        kind: str | Kind = Kind.MESSAGE,
        pinned: bool = False,
        required: bool = False,
        relevance: float | None = None,
        name: str | None = None,
        meta: Mapping[str, Any] | None = None,
        message_id: str | None = None,
    ) -> str:
        """Append a message; returns its id."""
        mid = message_id or f"m{self._count + 1}"
        message = Message(
            id=mid,
            role=Role(role),
            content=content,
            kind=Kind(kind),
            tool_calls=tuple(_tool_call(c) for c in tool_calls),
            tool_call_id=tool_call_id,
            pinned=pinned,
            required=required,
            relevance=relevance,
            name=name,
            created_at=now_iso(),
            meta=dict(meta or {}),
        )
        self.store.append_message(self.thread_id, message)
        self._count += 1
        self._last_message_id = mid
        return mid

    def record_request(
        self,
        prompt_tokens: int | None,
        model: str | None = None,
        *,
        after_message_id: str | None = None,
        request_id: str | None = None,
    ) -> str:
        """Record one model call with the prompt tokens the provider reported; returns its id."""
        after = after_message_id or self._last_message_id
        if after is None:
            raise StoreError("record_request needs a message before it")
        rid = request_id or f"r{self._requests + 1}"
        self.store.append_request(
            self.thread_id, Request(id=rid, after_message_id=after, prompt_tokens=prompt_tokens, model=model,
                                    created_at=now_iso())
        )
        self._requests += 1
        if self._pending_summary is not None:
            self.store.set_summary_before_request(self.thread_id, self._pending_summary, rid)
            self._pending_summary = None
        return rid

    def record_summary(
        self,
        summary: str,
        *,
        first_message_id: str,
        last_message_id: str,
        previous_summary_id: str | None = None,
        before_request_id: str | None = None,
        summary_id: str | None = None,
        model: str | None = None,
        emotional_markers: Iterable[EmotionalMarker | Mapping[str, Any]] = (),
        **fields: Any,
    ) -> str:
        """Record a compaction summary (any structured field of `Summary` as a keyword); returns its id.

        `previous_summary_id` defaults to the thread's latest summary, chaining them; without
        `before_request_id` the next recorded request is the one the compaction came before.
        """
        markers = tuple(
            m if isinstance(m, EmotionalMarker) else EmotionalMarker(moment=str(m["moment"]),
                                                                     intensity=float(m["intensity"]))
            for m in emotional_markers
        )
        sid = summary_id or f"s-{uuid.uuid4().hex[:12]}"
        lists = {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in fields.items()}
        record = Summary(
            id=sid,
            first_message_id=first_message_id,
            last_message_id=last_message_id,
            summary=summary,
            previous_summary_id=previous_summary_id if previous_summary_id is not None else self._last_summary_id,
            before_request_id=before_request_id,
            emotional_markers=markers,
            model=model,
            created_at=now_iso(),
            **lists,
        )
        self.store.append_summary(self.thread_id, record)
        self._last_summary_id = sid
        self._pending_summary = sid if before_request_id is None else None
        return sid
