"""A thread's messages, tool calls, requests and summaries written through the DBAPI cursor's
`executemany` (`Connection.exec_driver_sql`), in the caller's transaction, for SQLite and PostgreSQL
alike.

SQLAlchemy's `insert(table)` with a list of dicts processes every parameter of every row in Python
(a third of an import's store time); here each row is the tuple of the values it would bind, built
once: flags checked as its Boolean does (True, False or None, else a TypeError) and written as 0/1
or booleans, JSON columns as `json_text` (the same values as the `json.dumps` text it wrote; the
ASCII text where a PostgreSQL connection is not UTF-8 at both ends). A value that cannot be written
is the error SQLAlchemy gave (`StatementError` naming the original), and the database's own errors
are SQLAlchemy's as before (exec_driver_sql wraps them). `tests/data/test_bulk_rows.py` pins the
rows against those `insert()` writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.exc import StatementError

from inspector.model import Message, Thread
from inspector.store import convert
from inspector.store.json_text import json_text
from inspector.store.schema import MessageRow, RequestRow, SummaryRow, ToolCallRow

_TRUTH = frozenset({None, True, False})


class NotABoolean(TypeError):
    """SQLAlchemy's TypeError for a flag that is not a boolean."""


def _flag(value: Any) -> Any:
    """A Boolean column's value as SQLAlchemy binds it: True / False (1 / 0 in SQLite) or None, else a
    TypeError (its `_strict_as_bool`)."""
    if value is True or value is False or value is None:
        return value
    if value not in _TRUTH:
        raise NotABoolean(f"Not a boolean value: {value!r}")
    return bool(value)


def _sql(dialect: Any, table: Table, names: list[str]) -> str | None:
    """The SQL SQLAlchemy's `insert(table)` runs on `dialect` (its casts included: PostgreSQL's
    `%s::VARCHAR`), with positional parameters in the order of `names`; None for a parameter style
    other than qmark and pyformat (SQLite's and psycopg's), or columns in another order."""
    compiled = insert(table).compile(dialect=dialect)
    if dialect.paramstyle == "qmark" and compiled.positiontup is not None:
        found = list(compiled.positiontup)
        text = compiled.string
    elif dialect.paramstyle == "pyformat":
        found = []
        text = _NAMED.sub(lambda m: found.append(m[1]) or "%s", compiled.string)
    else:
        return None
    return text if found == names else None


_NAMED = re.compile(r"%\((\w+)\)s")


def _ascii(conn: Any) -> bool:
    """Whether JSON text must be ASCII here: a PostgreSQL connection whose server or client encoding is
    not UTF-8 (asked once per connection)."""
    info = conn.info
    known = info.get("ci_json_ascii")
    if known is None:
        known = False
        if conn.dialect.name == "postgresql":
            encodings = [conn.exec_driver_sql(f"SHOW {what}").scalar() for what in ("server_encoding", "client_encoding")]
            known = any(str(e).upper().replace("-", "") != "UTF8" for e in encodings)
        info["ci_json_ascii"] = known
    return known


class _Table:
    """One table's insert: its columns, the row builder and the SQL (per dialect)."""

    def __init__(self, table: Table, build: Callable[[Any, bool], list[tuple]],
                 flags: Callable[[Any], object] | None = None) -> None:
        self.table = table
        self.names = [c.name for c in table.columns]
        self.build = build
        self.flags = flags
        self._sql: dict[tuple[str, str, str], str | None] = {}

    def sql(self, dialect: Any) -> str | None:
        key = (dialect.name, dialect.driver, dialect.paramstyle)
        if key not in self._sql:
            self._sql[key] = _sql(dialect, self.table, self.names)
        return self._sql[key]

    def write(self, conn: Any, sql: str, items: list[Any], ascii: bool) -> None:
        try:
            rows = self._build_all(items, ascii)
        except (TypeError, ValueError) as exc:
            raise self._refused(exc, sql, items, conn.dialect.name) from None
        if rows:
            conn.exec_driver_sql(sql, rows)

    def _build_all(self, items: list[Any], ascii: bool) -> list[tuple]:
        build = self.build
        return [row for item in items for row in build(item, ascii)]

    def _refused(self, exc: Exception, sql: str, items: list[Any], dialect: str) -> Exception:
        """The error SQLAlchemy's insert gave for a value it could not bind. SQLite: the first refused
        value's (every value is processed row by row, column by column), as a StatementError.
        PostgreSQL: SQLAlchemy checks the flags of every row first (a StatementError), psycopg then
        encodes the JSON (its own TypeError or ValueError, as json raised it)."""
        if dialect != "sqlite" and not isinstance(exc, NotABoolean):
            for item in items if self.flags is not None else ():
                try:
                    self.flags(item)
                except NotABoolean as flag:
                    exc = flag
                    break
            else:
                return exc
        kind = TypeError if isinstance(exc, NotABoolean) else type(exc)
        return StatementError(f"({kind.__module__}.{kind.__name__}) {exc}", sql, None, exc)


def _messages(item: tuple[str, int, Message], ascii: bool) -> list[tuple]:
    thread_id, seq, m = item
    return [(thread_id, seq, m.id, m.role.value, m.kind.value, m.content, m.tool_call_id, _flag(m.pinned),
             _flag(m.required), m.relevance, m.name, m.created_at, json_text(m.meta, ascii=ascii))]


def _tool_calls(item: tuple[str, int, Message], ascii: bool) -> list[tuple]:
    thread_id, seq, m = item
    return [(thread_id, seq, i, c.id, c.name, json_text(c.arguments, ascii=ascii)) for i, c in enumerate(m.tool_calls)]


def _from_dict(row_of: Callable[[str, int, Any], dict[str, Any]], table: Table) -> Callable[[Any, bool], list[tuple]]:
    """A builder from `convert`'s row dict (the few requests and summaries of a thread)."""
    columns = [(c.name, c.type.__class__.__name__) for c in table.columns]

    def build(item: tuple[str, int, Any], ascii: bool) -> list[tuple]:
        row = row_of(*item)
        return [tuple(json_text(row[name], ascii=ascii) if kind == "JSON" else row[name] for name, kind in columns)]

    return build


MESSAGES = _Table(MessageRow.__table__, _messages, lambda item: (_flag(item[2].pinned), _flag(item[2].required)))
TOOL_CALLS = _Table(ToolCallRow.__table__, _tool_calls)
REQUESTS = _Table(RequestRow.__table__, _from_dict(convert.request_row, RequestRow.__table__))
SUMMARIES = _Table(SummaryRow.__table__, _from_dict(convert.summary_row, SummaryRow.__table__))


def write_rows(conn: Any, thread: Thread) -> bool:
    """Every message, tool call, request and summary row of `thread` (its header is written already);
    False, with nothing written, for a driver whose SQL is not known here (the caller inserts them)."""
    dialect = conn.dialect
    sqls = [table.sql(dialect) for table in _TABLES]
    if None in sqls:
        return False
    ascii = _ascii(conn)
    tid = thread.id
    messages = [(tid, i, m) for i, m in enumerate(thread.messages)]
    MESSAGES.write(conn, sqls[0], messages, ascii)
    TOOL_CALLS.write(conn, sqls[1], [item for item in messages if item[2].tool_calls], ascii)
    REQUESTS.write(conn, sqls[2], [(tid, i, r) for i, r in enumerate(thread.requests)], ascii)
    SUMMARIES.write(conn, sqls[3], [(tid, i, s) for i, s in enumerate(thread.summaries)], ascii)
    return True


def write_built(conn: Any, rows: Rows) -> None:
    """`write_rows` of a thread whose rows were built already (`thread_rows`, in an import's parse
    child, for a connection whose `prebuilt_ascii` is not None)."""
    sqls = [table.sql(conn.dialect) for table in _TABLES]
    if None in sqls:
        raise ValueError(f"rows built ahead for a driver whose SQL is not known here ({conn.dialect.name})")
    for sql, table_rows in zip(sqls, rows, strict=True):
        if table_rows:
            conn.exec_driver_sql(sql, table_rows)


Rows = tuple[list[tuple], list[tuple], list[tuple], list[tuple]]
"""A thread's message, tool call, request and summary rows, each the tuple of the values its insert binds."""


def thread_rows(thread: Thread, ascii: bool) -> Rows:
    """The rows `write_rows` would write for `thread` (`ascii`: the connection's `prebuilt_ascii`); the
    TypeError or ValueError of a value that cannot be written (the caller then has `write_rows`
    build them, which gives the store's own error)."""
    tid = thread.id
    messages = [(tid, i, m) for i, m in enumerate(thread.messages)]
    return (MESSAGES._build_all(messages, ascii),
            TOOL_CALLS._build_all([item for item in messages if item[2].tool_calls], ascii),
            REQUESTS._build_all([(tid, i, r) for i, r in enumerate(thread.requests)], ascii),
            SUMMARIES._build_all([(tid, i, s) for i, s in enumerate(thread.summaries)], ascii))


def prebuilt_ascii(conn: Any) -> bool | None:
    """Whether rows built ahead for `conn` must hold ASCII JSON text (see `_ascii`); None where this
    driver's rows cannot be built ahead (its SQL is not known here)."""
    if None in [table.sql(conn.dialect) for table in _TABLES]:
        return None
    return _ascii(conn)


_TABLES = (MESSAGES, TOOL_CALLS, REQUESTS, SUMMARIES)
