"""The store's writes of a thread's rows as first written: SQLAlchemy's `insert(table)` with the row dicts
of `inspector.store.convert`, its JSON columns written by `json.dumps` (the oracle of
`inspector.store.bulk` and `inspector.store.json_text`)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert

from inspector.model import Thread
from inspector.store import convert
from inspector.store.schema import MessageRow, RequestRow, SummaryRow, ToolCallRow


def json_text(value: Any) -> str:
    """The text SQLAlchemy's JSON type wrote for a row dict's value."""
    return json.dumps(convert.plain(value))


def write_rows(conn: Any, thread: Thread) -> bool:
    """`inspector.store.bulk.write_rows` as it was: SQLAlchemy inserts of the row dicts."""
    tid = thread.id
    for row_cls, rows in (
        (MessageRow, [convert.message_row(tid, i, m) for i, m in enumerate(thread.messages)]),
        (ToolCallRow, [row for i, m in enumerate(thread.messages) for row in convert.tool_call_rows(tid, i, m)]),
        (RequestRow, [convert.request_row(tid, i, r) for i, r in enumerate(thread.requests)]),
        (SummaryRow, [convert.summary_row(tid, i, s) for i, s in enumerate(thread.summaries)]),
    ):
        if rows:
            conn.execute(insert(row_cls), rows)
    return True
