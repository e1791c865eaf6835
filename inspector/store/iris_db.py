"""Iris-style app databases (Laravel), read in place through SQLAlchemy reflection, read-only.

A database is Iris-style when it has the tables `conversations` and `conversation_summaries`
(and usually `threads`). Nothing is written to it. Column mapping (the first matching column
name wins; names are compared case-insensitively; JSON columns may hold JSON text):

threads (optional; without it, threads are the distinct `conversations.thread_id` values)
    id; title <- `title` | `name` | `subject`; created_at / updated_at.
conversations (one row per message, ordered by `created_at`, then `id`)
    id -> message id (as text); thread_id (absent: one thread `default`);
    role (`user` | `assistant` | `system` | `tool`; `developer` -> system);
    content <- `content` | `message` | `text` | `body` (JSON content blocks are flattened);
    tool_calls (JSON list of `{id, name, arguments}` or OpenAI `{id, function{name, arguments}}`)
        -> the message's tool calls;
    tool_results (JSON list of `{toolCallId | tool_call_id | id, toolName | name,
        result | output | content}`) -> one `tool` message per result right after the row,
        id `<row id>:result:<n>`; a `tool` row's `tool_call_id` column links it directly;
    prompt_tokens <- `prompt_tokens` | `input_tokens`: on an assistant row, the recorded request
        that produced it (id `conversation-<row id>`, after the message before the row);
    model, created_at; pinned / required / relevance / kind / name columns when present;
        `meta` | `metadata` (JSON) -> meta; every other non-null column is kept in meta too.
conversation_summaries (ordered by `created_at`, then `id`)
    id; thread_id; previous_summary_id; summary <- `summary` | `content` | `narrative`;
    the structured JSON columns of Iris's summary, each where present: accomplishments,
    key_decisions, relevant_files, active_goals, emotional_thread, relationship_dynamics,
    evolving_themes, emotional_markers, unresolved_threads, resolved_threads, key_facts;
    first message <- `first_conversation_id` | `start_conversation_id` | `from_conversation_id`
        | `first_message_id`; last <- `last_conversation_id` | `end_conversation_id`
        | `to_conversation_id` | `last_message_id` (absent: the messages up to its created_at);
    model, created_at. `before_request_id` is the first recorded request after its last message.

Over 400 lines on purpose: one reader of one foreign schema, its column mapping (above) and
the reader class that applies it; split, the mapping would live apart from what reads it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, MetaData, Table, func, or_, select
from sqlalchemy.types import NullType

from inspector.content import flatten_blocks
from inspector.model import (
    SUMMARY_LIST_FIELDS,
    EmotionalMarker,
    Kind,
    Message,
    Request,
    Role,
    Summary,
    Thread,
    ThreadInfo,
    ToolCall,
)
from inspector.store.engine import StoreError, database_errors, mask_url
from inspector.store.in_place import ReadInPlace
from inspector.thread_repair import sanitize_thread

IRIS_TABLES = ("conversations", "conversation_summaries")

CONTENT = ("content", "message", "text", "body")
TITLE = ("title", "name", "subject")
PROMPT_TOKENS = ("prompt_tokens", "input_tokens")
SUMMARY_TEXT = ("summary", "content", "narrative")
FIRST_ID = ("first_conversation_id", "start_conversation_id", "from_conversation_id", "first_message_id")
LAST_ID = ("last_conversation_id", "end_conversation_id", "to_conversation_id", "last_message_id")
META = ("meta", "metadata")
MESSAGE_HANDLED = {"id", "thread_id", "role", "tool_calls", "tool_results", "tool_call_id", "model", "created_at",
                   "pinned", "required", "relevance", "kind", "name", *CONTENT, *PROMPT_TOKENS, *META}


def is_iris_schema(tables: Iterable[str]) -> bool:
    names = {t.lower() for t in tables}
    return all(t in names for t in IRIS_TABLES)


def _col(table: Table, candidates: Sequence[str]) -> Any:
    by_name = {c.name.lower(): c for c in table.columns}
    for name in candidates:
        if name in by_name:
            return by_name[name]
    return None


def _json(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{", '"'):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    return str(value)


def _plain(value: Any) -> Any:
    """A JSON-safe copy of a column value for meta."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, dict)):
        return value
    return str(value)


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    raw = _json(raw)
    calls: list[ToolCall] = []
    for i, call in enumerate(raw if isinstance(raw, list) else ()):
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        arguments = function.get("arguments", function.get("input", call.get("args", {})))
        calls.append(ToolCall(id=str(call.get("id") or call.get("toolCallId") or f"call_{i}"),
                              name=str(function.get("name") or call.get("toolName") or ""),
                              arguments=arguments if arguments is not None else {}))
    return tuple(calls)


def _results(raw: Any) -> list[Mapping[str, Any]]:
    raw = _json(raw)
    return [r for r in raw if isinstance(r, Mapping)] if isinstance(raw, list) else []


class IrisStore(ReadInPlace):
    """Read-only view of an Iris-style database; the same interface as Store."""

    source = "iris"
    described = "an Iris database"

    def __init__(self, engine: Engine, url: str) -> None:
        super().__init__(engine, url)
        self.metadata = MetaData()
        try:
            self.metadata.reflect(engine, views=True,
                                  only=lambda name, _m: name.lower() in (*IRIS_TABLES, "threads"))
        except Exception as exc:  # reflection errors vary by driver
            raise StoreError(f"{mask_url(url)}: cannot read the Iris tables ({exc})") from None
        tables = {name.lower(): table for name, table in self.metadata.tables.items()}
        self.conversations = tables["conversations"]
        self.summaries = tables["conversation_summaries"]
        self.threads = tables.get("threads")
        self.c_thread = _col(self.conversations, ("thread_id",))
        self.s_thread = _col(self.summaries, ("thread_id",))

    # -- reading ------------------------------------------------------------------------------

    def _conversation_order(self) -> list[Any]:
        cols = [c for c in (_col(self.conversations, ("created_at",)), _col(self.conversations, ("id",))) if c is not None]
        return cols

    def _thread_ids_unchecked(self) -> list[str]:
        with self.engine.connect() as conn:
            if self.threads is not None and _col(self.threads, ("id",)) is not None:
                id_col = _col(self.threads, ("id",))
                order = [c for c in (_col(self.threads, ("created_at",)), id_col) if c is not None]
                ids = [str(v) for (v,) in conn.execute(select(id_col).order_by(*order))]
                if self.c_thread is not None:
                    extra = [str(v) for (v,) in conn.execute(select(self.c_thread).distinct()) if v is not None]
                    ids += sorted(set(extra) - set(ids))
                return ids
            if self.c_thread is None:
                return ["default"]
            return sorted(str(v) for (v,) in conn.execute(select(self.c_thread).distinct()) if v is not None)

    def _list_threads_unchecked(self) -> list[ThreadInfo]:
        """One pass over the tables (the counts match what load_thread returns)."""
        ids = self._thread_ids_unchecked()
        messages = dict.fromkeys(ids, 0)
        requests = dict.fromkeys(ids, 0)
        summaries = dict.fromkeys(ids, 0)
        titles: dict[str, str] = {}
        first_user: dict[str, str] = {}
        conv = self.conversations
        role, results = _col(conv, ("role",)), _col(conv, ("tool_results",))
        tokens, content = _col(conv, PROMPT_TOKENS), _col(conv, CONTENT)
        wanted = [c for c in (self.c_thread, role, results, tokens, content) if c is not None]
        with self.engine.connect() as conn:
            if self.threads is not None and _col(self.threads, ("id",)) is not None:
                title_col = _col(self.threads, TITLE)
                if title_col is not None:
                    for tid, title in conn.execute(select(_col(self.threads, ("id",)), title_col)):
                        if title:
                            titles[str(tid)] = str(title)
            seen_any: set[str] = set()
            for row in conn.execute(select(*wanted).order_by(*self._conversation_order())).mappings():
                row = {k.lower(): v for k, v in row.items()}
                tid = str(row["thread_id"]) if self.c_thread is not None else "default"
                if tid not in messages:
                    continue
                messages[tid] += 1 + len(_results(row.get("tool_results")))
                row_role = _role(row.get("role"))
                value = next((row[c] for c in PROMPT_TOKENS if row.get(c) is not None), None)
                if row_role is Role.ASSISTANT and value is not None and tid in seen_any:
                    requests[tid] += 1
                seen_any.add(tid)
                if row_role is Role.USER and tid not in first_user:
                    raw = next((row[c] for c in CONTENT if row.get(c) is not None), None)
                    text = flatten_blocks(_json(raw), {}) if raw is not None else ""
                    if text.strip():
                        first_user[tid] = text.strip().splitlines()[0][:80]
            if self.s_thread is not None:
                for tid, n in conn.execute(select(self.s_thread, func.count()).group_by(self.s_thread)):
                    if str(tid) in summaries:
                        summaries[str(tid)] = n
            else:
                summaries["default"] = conn.execute(select(func.count()).select_from(self.summaries)).scalar() or 0
        return [
            ThreadInfo(id=tid, title=titles.get(tid) or first_user.get(tid) or f"thread {tid}", source="iris",
                       messages=messages[tid], requests=requests[tid], summaries=summaries[tid])
            for tid in ids
        ]

    def _where(self, table: Table, column: Any, thread_id: str) -> Any:
        query = select(table)
        if column is not None:
            query = query.where(_matches(column, thread_id))
        return query

    def _load_thread_unchecked(self, thread_id: str) -> Thread:
        with self.engine.connect() as conn:
            title, meta = "", {}
            if self.threads is not None and _col(self.threads, ("id",)) is not None:
                id_col = _col(self.threads, ("id",))
                row = conn.execute(select(self.threads).where(_matches(id_col, thread_id))).mappings().first()
                if row is not None:
                    lowered = {k.lower(): v for k, v in row.items()}
                    title = next((_text(lowered[c]) for c in TITLE if lowered.get(c)), "")
                    meta = {k: _plain(_json(v)) for k, v in row.items() if v is not None and k.lower() != "id"}
            order = self._conversation_order()
            rows = conn.execute(self._where(self.conversations, self.c_thread, thread_id).order_by(*order)).mappings()
            rows = [{k.lower(): v for k, v in r.items()} for r in rows]
            s_order = [c for c in (_col(self.summaries, ("created_at",)), _col(self.summaries, ("id",))) if c is not None]
            s_rows = [
                {k.lower(): v for k, v in r.items()}
                for r in conn.execute(self._where(self.summaries, self.s_thread, thread_id).order_by(*s_order)).mappings()
            ]
        if not rows and not s_rows and not title and thread_id not in self.thread_ids():
            raise StoreError(f"no thread {thread_id!r} in {mask_url(self.url)}")
        messages, requests = _messages(rows, self._cell_warnings.append)
        summaries = _summaries(s_rows, messages, requests, rows, self._cell_warnings.append)
        if not title:
            first_user = next((m for m in messages if m.role is Role.USER and m.content.strip()), None)
            title = first_user.content.strip().splitlines()[0][:80] if first_user else f"thread {thread_id}"
        return Thread(id=thread_id, title=title, source="iris", messages=tuple(messages), requests=tuple(requests),
                      summaries=tuple(summaries), meta=meta)

    def _data_version(self, thread_id: str) -> tuple:
        with self.engine.connect() as conn:
            parts: list[Any] = []
            for table, column in ((self.conversations, self.c_thread), (self.summaries, self.s_thread)):
                id_col = _col(table, ("id",))
                query = select(func.count(), func.max(id_col) if id_col is not None else func.count())
                if column is not None:
                    query = query.where(_matches(column, thread_id))
                parts.extend(conn.execute(query.select_from(table)).one())
        return tuple(parts)

    def thread_ids(self) -> list[str]:
        with database_errors(self.url, "list threads"):
            return self._thread_ids_unchecked()

    def list_threads(self) -> list[ThreadInfo]:
        with database_errors(self.url, "list threads"):
            return self._list_threads_unchecked()

    def load_thread(self, thread_id: str) -> Thread:
        """The thread, repaired like an import (dangling or looping summary links cut, bad token
        counts dropped); the repairs are listed in `meta["load_warnings"]`."""
        self._cell_warnings: list[str] = []
        with database_errors(self.url, "load a thread"):
            thread = self._load_thread_unchecked(thread_id)
        fixed, warnings = sanitize_thread(thread, mask_url(self.url))
        warnings[:0] = [f"{mask_url(self.url)}: thread {thread_id}: {line}" for line in self._cell_warnings]
        if warnings:
            fixed = dataclasses.replace(fixed, meta={**fixed.meta, "load_warnings": warnings})
        return fixed


def _coerce(column: Any, value: str) -> Any:
    """Compare ids as the column's type (integer ids in Laravel)."""
    try:
        python_type = column.type.python_type
    except NotImplementedError:
        return value
    if python_type is int:
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _matches(column: Any, value: str) -> Any:
    """`column == value` as the column's type; a column without a declared type (SQLite) may hold
    the id as an integer or as text, so both are compared."""
    if isinstance(column.type, NullType) and value.lstrip("-").isdigit():
        return or_(column == value, column == int(value))
    return column == _coerce(column, value)


def _number(value: Any, row_id: str, column: str, warn: Any, *, integer: bool, table: str = "conversations") -> Any:
    """A number cell read leniently: text holding a number is read, anything else dropped with a warning."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        if integer and isinstance(value, float):
            if value.is_integer():
                return int(value)
            warn(f"{table} row {row_id} column {column}: {value!r} is not an integer; value dropped")
            return None
        return value
    text = value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)
    try:
        number: Any = int(text.strip()) if integer else float(text.strip())
    except (ValueError, OverflowError):
        warn(f"{table} row {row_id} column {column}: {text[:40]!r} is not a number; value dropped")
        return None
    warn(f"{table} row {row_id} column {column}: text {text[:40]!r}, not a number; read as {number!r}")
    return number


def _role(value: Any) -> Role:
    return _role_problem(value)[0]


def _role_problem(value: Any) -> tuple[Role, str | None]:
    """(the role of a `role` cell, why it was read as `user` or None): an unknown or empty role is read
    as `user` (the row is kept, its text counted) and said."""
    text = _text(value).strip().lower()
    if text == "developer":
        return Role.SYSTEM, None
    try:
        return Role(text), None
    except ValueError:
        shown = "NULL" if value is None else repr(_text(value)[:40])
        return Role.USER, f"{shown} is not a role (user, assistant, system, tool, developer); read as user"


def _messages(rows: list[dict[str, Any]], warn: Any = lambda _line: None) -> tuple[list[Message], list[Request]]:
    messages: list[Message] = []
    requests: list[Request] = []
    for row in rows:
        rid = _text(row.get("id"))
        meta: dict[str, Any] = {}
        for key in META:
            value = _json(row.get(key))
            if isinstance(value, Mapping):
                meta.update(value)
        for key, value in row.items():
            if key not in MESSAGE_HANDLED and value is not None:
                meta[key] = _plain(_json(value))
        content_value = next((row[c] for c in CONTENT if row.get(c) is not None), None)
        content = flatten_blocks(_json(content_value), meta) if content_value is not None else ""
        role, problem = _role_problem(row.get("role"))
        if problem is not None:
            warn(f"conversations row {rid} column role: {problem}")
        kind_value = _text(row.get("kind")).lower()
        kind = Kind(kind_value) if kind_value in {k.value for k in Kind} else Kind.MESSAGE
        created = _text(row.get("created_at")) or None
        token_column = next((c for c in PROMPT_TOKENS if row.get(c) is not None), None)
        tokens = _number(row[token_column], rid, token_column, warn, integer=True) if token_column else None
        if role is Role.ASSISTANT and token_column is not None and messages:
            requests.append(Request(id=f"conversation-{rid}", after_message_id=messages[-1].id,
                                    prompt_tokens=tokens, model=_text(row.get("model")) or None,
                                    created_at=created))
        if row.get("model") is not None:
            meta["model"] = _text(row["model"])
        relevance = _number(row.get("relevance"), rid, "relevance", warn, integer=False)
        messages.append(
            Message(
                id=rid,
                role=role,
                content=content,
                kind=kind,
                tool_calls=_tool_calls(row.get("tool_calls")) if role is Role.ASSISTANT else (),
                tool_call_id=_text(row.get("tool_call_id")) or None if role is Role.TOOL else None,
                pinned=bool(row.get("pinned") or False),
                required=bool(row.get("required") or False),
                relevance=float(relevance) if relevance is not None else None,
                name=_text(row.get("name")) or None,
                created_at=created,
                meta=meta,
            )
        )
        for n, result in enumerate(_results(row.get("tool_results"))):
            result_meta: dict[str, Any] = {}
            value = next((result[k] for k in ("result", "output", "content") if k in result), "")
            text = value if isinstance(value, str) else flatten_blocks(value, result_meta)
            link = result.get("toolCallId") or result.get("tool_call_id") or result.get("id")
            name = result.get("toolName") or result.get("name")
            messages.append(Message(id=f"{rid}:result:{n}", role=Role.TOOL, content=text,
                                    tool_call_id=_text(link) or None, name=_text(name) or None, created_at=created,
                                    meta=result_meta))
    return messages, requests


def _summaries(rows: list[dict[str, Any]], messages: list[Message], requests: list[Request],
               conversation_rows: list[dict[str, Any]], warn: Any = lambda _line: None) -> list[Summary]:
    index = {m.id: i for i, m in enumerate(messages)}
    out: list[Summary] = []
    covered = 0
    for row in rows:
        first = next((_text(row[c]) for c in FIRST_ID if row.get(c) is not None), None)
        last = next((_text(row[c]) for c in LAST_ID if row.get(c) is not None), None)
        if last is None or last not in index:
            created = _text(row.get("created_at"))
            before = [i for i, m in enumerate(messages) if m.created_at is not None and m.created_at <= created]
            if not before:
                continue
            last = messages[before[-1]].id
        if first is None or first not in index:
            first = messages[min(covered, index[last])].id
        covered = index[last] + 1
        after = [r for r in requests if index.get(r.after_message_id, -1) >= index[last]]
        lists = {}
        for name in SUMMARY_LIST_FIELDS:
            value = _json(row.get(name))
            lists[name] = tuple(_text(v) if not isinstance(v, (dict, list)) else json.dumps(v) for v in value) \
                if isinstance(value, list) else ()
        markers_raw = _json(row.get("emotional_markers"))
        markers = tuple(
            EmotionalMarker(moment=_text(m.get("moment")),
                            intensity=_number(m.get("intensity") or 0.0, _text(row.get("id")), "emotional_markers",
                                              warn, integer=False, table="conversation_summaries") or 0.0)
            for m in (markers_raw if isinstance(markers_raw, list) else ()) if isinstance(m, Mapping)
        )
        previous = row.get("previous_summary_id")
        out.append(
            Summary(
                id=_text(row.get("id")),
                first_message_id=first,
                last_message_id=last,
                summary=_text(next((row[c] for c in SUMMARY_TEXT if row.get(c) is not None), "")),
                previous_summary_id=_text(previous) if previous is not None else None,
                before_request_id=after[0].id if after else None,
                emotional_thread=_text(row.get("emotional_thread")),
                relationship_dynamics=_text(row.get("relationship_dynamics")),
                emotional_markers=markers,
                source="recorded",
                model=_text(row.get("model")) or None,
                created_at=_text(row.get("created_at")) or None,
                **lists,
            )
        )
    return out
