"""LangGraph checkpointer databases, read in place and read-only like an Iris database:
`context-inspector --db checkpoints.sqlite` (or a PostgreSQL URL).

Tables as the savers create them: langgraph-checkpoint-sqlite 3.1 `SqliteSaver.setup` (`checkpoints`:
thread_id, checkpoint_ns, checkpoint_id, type, checkpoint (the whole checkpoint, serialized);
`writes`: thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) and
langgraph-checkpoint-postgres `PostgresSaver` (`checkpoints` with the checkpoint as JSON without its
channel values, `checkpoint_blobs`: thread_id, checkpoint_ns, channel, version, type, blob;
`checkpoint_writes` with `blob`). Values are read through the checkpointer's own serializer
(`langgraph-checkpoint`'s `JsonPlusSerializer`, strict: only its safe types are built, never pickle),
the optional extra `context-inspector[langgraph]`; without it, opening the database is one line saying
what to install.

One thread per `thread_id` (the root graph, `checkpoint_ns` ""). Its messages are the `messages`
channel of its checkpoints in `checkpoint_id` order, each message once (by its id) where it first
appears; the first system messages are the system prompt. Each `AIMessage` is one model call: a
request before it with its `usage_metadata` (`input_tokens` as the billed prompt: LangChain's count
of every input token; `input_token_details.cache_read` / `cache_creation`; `output_tokens`), none
recorded: the replay's estimate, said in the coverage line. A write of `RemoveMessage(id=
"__remove_all__")` to `messages` (LangChain's `SummarizationMiddleware`) is a recorded compaction:
the messages of the checkpoint it was written at that the write does not bring back are its span,
the first new message after the removal its summary (not a message of the thread).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, MetaData, func, select

from inspector.content import flatten_blocks
from inspector.importers._common import Coverage, title_from_messages
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.store.engine import StoreError, database_errors, mask_url
from inspector.store.in_place import ReadInPlace
from inspector.store.native import Store
from inspector.thread_repair import sanitize_thread

REMOVE_ALL = "__remove_all__"
"""`langgraph.graph.message.REMOVE_ALL_MESSAGES`."""
INSTALL = "pip install 'context-inspector[langgraph]'"


def is_langgraph_schema(tables: set[str]) -> bool:
    names = {t.lower() for t in tables}
    return "checkpoints" in names and bool(names & {"writes", "checkpoint_writes"})


def _serializer(url: str) -> Any:
    try:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    except ImportError:
        raise StoreError(f"{mask_url(url)}: a LangGraph checkpointer database; reading it needs the langgraph "
                         f"extra: {INSTALL}") from None
    return JsonPlusSerializer(allowed_msgpack_modules=None)


def _field(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, Mapping) else getattr(message, key, None)


def _kind(message: Any) -> str | None:
    kind = _field(message, "type")
    return kind if isinstance(kind, str) else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
        return None
    return value


class _Reader:
    """One thread's checkpoints and `messages` writes -> a thread."""

    def __init__(self, thread_id: str, where: str) -> None:
        self.thread_id, self.where = thread_id, where
        self.skipped: list[str] = []
        self.order: list[str] = []                # message ids, first appearance
        self.raw: dict[str, Any] = {}
        self.summary_ids: set[str] = set()
        self.compactions: list[tuple[str, list[str], Any, set[str]]] = []
        """(checkpoint id, the ids it drops, the summary message, the ids the checkpoint held)."""
        self.coverage = Coverage(f"thread {thread_id}")

    def _id(self, message: Any, checkpoint: str, k: int) -> str:
        mid = _field(message, "id")
        return str(mid) if isinstance(mid, str) and mid else f"{checkpoint}.{k}"

    def checkpoint(self, checkpoint_id: str, messages: Any) -> list[str]:
        if messages is None:
            return []
        if not isinstance(messages, list):
            self.skipped.append(f"{self.where}: checkpoint {checkpoint_id}: `messages` is not a list; skipped")
            return []
        ids = []
        for k, message in enumerate(messages):
            if _kind(message) not in ("human", "ai", "tool", "system"):
                self.skipped.append(f"{self.where}: checkpoint {checkpoint_id}: message {k}: not a LangChain "
                                    f"message ({type(message).__name__}); skipped")
                continue
            mid = self._id(message, checkpoint_id, k)
            ids.append(mid)
            if mid not in self.raw and mid not in self.summary_ids:
                self.raw[mid] = message
                self.order.append(mid)
        return ids

    def write(self, checkpoint_id: str, value: Any, before: list[str]) -> None:
        """A `messages` write: a compaction where it removes every message."""
        items = value if isinstance(value, list) else [value]
        removal = next((k for k, m in enumerate(items) if _kind(m) == "remove" and _field(m, "id") == REMOVE_ALL), None)
        if removal is None:
            return
        self.coverage.compactions += 1
        after = items[removal + 1:]
        after_ids = [self._id(m, checkpoint_id, k) for k, m in enumerate(after)]
        summary = next((m for m, mid in zip(after, after_ids, strict=True) if mid not in before), None)
        if summary is None:
            self.skipped.append(f"{self.where}: checkpoint {checkpoint_id}: every message removed and no summary "
                                "brought; not a compaction")
            return
        self.summary_ids.add(self._id(summary, checkpoint_id, after.index(summary)))
        self.compactions.append((checkpoint_id, [i for i in before if i not in after_ids], summary, set(before)))

    def thread(self, title: str | None) -> Thread:
        messages: list[Message] = []
        requests: list[Request] = []
        system: list[str] = []
        for mid in self.order:
            if mid in self.summary_ids:
                continue
            message = self.raw[mid]
            kind = _kind(message)
            meta: dict[str, Any] = {}
            content = flatten_blocks(_field(message, "content"), meta)
            if kind == "system":
                if not messages:
                    system.append(content)
                    continue
                messages.append(Message(id=mid, role=Role.SYSTEM, content=content, meta=meta))
            elif kind == "human":
                messages.append(Message(id=mid, role=Role.USER, content=content, meta=meta))
            elif kind == "tool":
                link = _field(message, "tool_call_id")
                messages.append(Message(id=mid, role=Role.TOOL, content=content,
                                        tool_call_id=str(link) if link else None,
                                        name=_field(message, "name") if isinstance(_field(message, "name"), str)
                                        else None, meta=meta))
            else:
                self._request(mid, message, messages, requests)
                calls = tuple(ToolCall(id=str(c.get("id") or f"{mid}.call{k}"), name=str(c.get("name") or ""),
                                       arguments=c.get("args") if isinstance(c.get("args"), Mapping) else {})
                              for k, c in enumerate(_field(message, "tool_calls") or []) if isinstance(c, Mapping))
                self.coverage.results += len(calls)
                messages.append(Message(id=mid, role=Role.ASSISTANT, content=content, tool_calls=calls, meta=meta))
        answered = {m.tool_call_id for m in messages if m.role is Role.TOOL}
        for m in messages:
            for call in m.tool_calls:
                if call.id in answered:
                    self.coverage.results_imported += 1
                else:
                    self.skipped.append(f"{self.where}: message {m.id}: tool call {call.id} has no result")
        return Thread(id=self.thread_id, title=title or title_from_messages(messages, self.thread_id),
                      source="langgraph", system_prompt="\n\n".join(system), messages=tuple(messages),
                      requests=tuple(requests), summaries=tuple(self._summaries(messages, requests)))

    def _request(self, mid: str, message: Any, messages: list[Message], requests: list[Request]) -> None:
        self.coverage.calls += 1
        if not messages:
            self.skipped.append(f"{self.where}: message {mid}: a model response before any message; not a request")
            return
        usage = _field(message, "usage_metadata")
        metadata = _field(message, "response_metadata")
        model = metadata.get("model_name") or metadata.get("model") if isinstance(metadata, Mapping) else None
        prompt = read = write = out = None
        if not isinstance(usage, Mapping):  # nothing billed to import: said, not counted as held
            self.coverage.calls -= 1
            self.coverage.calls_unbilled += 1
        else:
            details = usage.get("input_token_details") if isinstance(usage.get("input_token_details"), Mapping) else {}
            prompt, out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
            read, write = _count(details.get("cache_read")), _count(details.get("cache_creation"))
            if prompt is None:
                self.skipped.append(f"{self.where}: message {mid}: usage_metadata.input_tokens is not a token "
                                    "count; the call's tokens are the replay's estimate")
            else:
                self.coverage.calls_imported += 1
        requests.append(Request(id=f"req-{mid}", after_message_id=messages[-1].id, prompt_tokens=prompt,
                                model=model if isinstance(model, str) else None, cache_read_tokens=read,
                                cache_write_tokens=write, output_tokens=out))

    def _summaries(self, messages: list[Message], requests: list[Request]) -> list[Summary]:
        position = {m.id: p for p, m in enumerate(messages)}
        out: list[Summary] = []
        for checkpoint_id, dropped, summary, held in self.compactions:
            spans = sorted(position[i] for i in dropped if i in position)
            if not spans:
                self.skipped.append(f"{self.where}: checkpoint {checkpoint_id}: a compaction of messages not in the "
                                    "thread; not imported")
                continue
            first, last = spans[0], spans[-1]
            if out and first <= position[out[-1].last_message_id]:
                first = position[out[-1].last_message_id] + 1  # what an earlier summary already replaced
                if first > last:
                    continue
            # the first model call after the compaction: its response was not in the checkpoint compacted
            before = next((r.id for r in requests if r.id.removeprefix("req-") not in held), None)
            meta: dict[str, Any] = {}
            text = flatten_blocks(_field(summary, "content"), meta)
            out.append(Summary(id=f"summary-{checkpoint_id}", first_message_id=messages[first].id,
                               last_message_id=messages[last].id, summary=text,
                               previous_summary_id=out[-1].id if out else None, before_request_id=before,
                               source="recorded", meta={"trigger": "auto", "checkpoint_id": checkpoint_id}))
            self.coverage.compactions_imported += 1
        return out


class LanggraphStore(ReadInPlace):
    """Read-only view of a LangGraph checkpointer database; the same interface as Store."""

    source = "langgraph"
    described = "a LangGraph checkpointer database"

    def __init__(self, engine: Engine, url: str) -> None:
        super().__init__(engine, url)
        self.serde = _serializer(url)
        metadata = MetaData()
        wanted = ("checkpoints", "writes", "checkpoint_writes", "checkpoint_blobs")
        try:
            metadata.reflect(engine, only=lambda name, _m: name.lower() in wanted)
        except Exception as exc:  # reflection errors vary by driver
            raise StoreError(f"{mask_url(url)}: cannot read the LangGraph tables ({exc})") from None
        tables = {name.lower(): table for name, table in metadata.tables.items()}
        self.checkpoints = tables["checkpoints"]
        self.writes = tables.get("checkpoint_writes", tables.get("writes"))
        self.blobs = tables.get("checkpoint_blobs")
        self.value_column = "blob" if "blob" in self.writes.c else "value"
        for table, needed in ((self.checkpoints, ("thread_id", "checkpoint_id", "checkpoint")),
                              (self.writes, ("thread_id", "checkpoint_id", "channel", "type", self.value_column))):
            missing = [c for c in needed if c not in table.c]
            if missing:
                raise StoreError(f"{mask_url(url)}: LangGraph table {table.name} has no column {missing[0]}")

    def _root(self, table: Any) -> Any:
        c = table.c
        return c["checkpoint_ns"] == "" if "checkpoint_ns" in c else True

    def thread_ids(self) -> list[str]:
        c = self.checkpoints.c
        with database_errors(self.url, "list threads"), self.engine.connect() as conn:
            query = select(c["thread_id"], func.min(c["checkpoint_id"])).where(self._root(self.checkpoints)) \
                .group_by(c["thread_id"]).order_by(func.min(c["checkpoint_id"]))
            return [str(v) for v, _ in conn.execute(query)]

    def _value(self, kind: Any, data: Any, what: str, skipped: list[str]) -> Any:
        if isinstance(data, memoryview):
            data = bytes(data)
        if isinstance(data, str):
            data = data.encode("utf-8")
        try:
            return self.serde.loads_typed((str(kind or "msgpack"), data))
        except Exception as exc:  # noqa: BLE001 - a damaged value is one warning, never the whole thread
            skipped.append(f"{mask_url(self.url)}: thread {what}: cannot be read ({type(exc).__name__}); skipped")
            return None

    def _messages(self, conn: Any, thread_id: str, checkpoint_id: str, kind: Any, raw: Any,
                  skipped: list[str]) -> Any:
        if self.blobs is None:  # SqliteSaver: the whole checkpoint, values and all
            checkpoint = self._value(kind, raw, f"{thread_id}: checkpoint {checkpoint_id}", skipped)
        else:  # PostgresSaver: the checkpoint as JSON, each channel's value in checkpoint_blobs
            try:
                checkpoint = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
            except ValueError:
                checkpoint = None
        if not isinstance(checkpoint, Mapping):
            if checkpoint is not None or self.blobs is not None:
                skipped.append(f"{mask_url(self.url)}: thread {thread_id}: checkpoint {checkpoint_id}: not a "
                               "checkpoint; skipped")
            return None
        values = checkpoint.get("channel_values") if isinstance(checkpoint.get("channel_values"), Mapping) else {}
        if "messages" in values or self.blobs is None:
            return values.get("messages")
        versions = checkpoint.get("channel_versions") if isinstance(checkpoint.get("channel_versions"), Mapping) else {}
        if "messages" not in versions:
            return None
        b = self.blobs.c
        row = conn.execute(select(b["type"], b["blob"]).where(
            b["thread_id"] == thread_id, self._root(self.blobs), b["channel"] == "messages",
            b["version"] == str(versions["messages"]))).first()
        if row is None:
            skipped.append(f"{mask_url(self.url)}: thread {thread_id}: checkpoint {checkpoint_id}: its messages "
                           "blob is missing; skipped")
            return None
        if row[0] == "empty":
            return None
        return self._value(row[0], row[1], f"{thread_id}: checkpoint {checkpoint_id} messages", skipped)

    def _load(self, thread_id: str) -> Thread:
        where = f"{mask_url(self.url)}: thread {thread_id}"
        reader = _Reader(thread_id, where)
        c, w = self.checkpoints.c, self.writes.c
        with self.engine.connect() as conn:
            rows = conn.execute(select(c["checkpoint_id"], c["type"] if "type" in c else c["checkpoint_id"],
                                       c["checkpoint"]).where(c["thread_id"] == thread_id, self._root(self.checkpoints))
                                .order_by(c["checkpoint_id"])).all()
            if not rows:
                raise StoreError(f"no thread {thread_id!r} in {mask_url(self.url)}")
            order = [col for col in (w["checkpoint_id"], w.get("task_id"), w.get("idx")) if col is not None]
            writes: dict[str, list[tuple[Any, Any]]] = {}
            for checkpoint_id, kind, value in conn.execute(
                    select(w["checkpoint_id"], w["type"], w[self.value_column])
                    .where(w["thread_id"] == thread_id, self._root(self.writes), w["channel"] == "messages")
                    .order_by(*order)):
                writes.setdefault(str(checkpoint_id), []).append((kind, value))
            for checkpoint_id, kind, raw in rows:
                checkpoint_id = str(checkpoint_id)
                ids = reader.checkpoint(checkpoint_id, self._messages(conn, thread_id, checkpoint_id, kind, raw,
                                                                      reader.skipped))
                for wkind, wvalue in writes.get(checkpoint_id, []):
                    reader.write(checkpoint_id, self._value(wkind, wvalue, f"{thread_id}: a write at {checkpoint_id}",
                                                            reader.skipped), ids)
        thread = reader.thread(None)
        fixed, warnings = sanitize_thread(thread, mask_url(self.url))
        warnings[:0] = [*reader.skipped, reader.coverage.line()]
        return dataclasses.replace(fixed, meta={**fixed.meta, "load_warnings": warnings})

    def _data_version(self, thread_id: str) -> tuple:
        with self.engine.connect() as conn:
            out: list[Any] = []
            for table in (self.checkpoints, self.writes):
                c = table.c
                out.extend(conn.execute(select(func.count(), func.max(c["checkpoint_id"]))
                                        .where(c["thread_id"] == thread_id)).one())
        return tuple(out)


Store.reads_in_place(is_langgraph_schema, LanggraphStore)
