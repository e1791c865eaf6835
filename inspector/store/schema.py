"""The store's tables (SQLAlchemy 2 typed ORM).

Every table name carries the `ci_` prefix so the store can live inside an application's own
database (for example next to Laravel's `threads` table) without a clash. Timestamps are ISO 8601
strings; lists and mappings are JSON columns. Text columns are TEXT and token counts BIGINT, so
PostgreSQL holds every value the importers' sanitizer lets through (ids, tool names or timestamps of
any length, prompt_tokens up to 2**53); SQLite stores the same as before, so the schema version
did not change (an older PostgreSQL store with VARCHAR/INTEGER columns still reads). Rows never leave `inspector.store`: the repository
turns them into `inspector.model` dataclasses.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SCHEMA_VERSION = 4
"""Bump on any change to these tables; `Store.open` refuses other versions with a clear message
(versions 1 and 2, without the requests' cache or output columns, are read as they are when viewed and
upgraded in place when opened for writing)."""


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, Any: JSON}


class SchemaVersionRow(Base):
    __tablename__ = "ci_schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[str] = mapped_column(Text)


class ThreadRow(Base):
    __tablename__ = "ci_threads"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(Text, default="native")
    system_prompt: Mapped[str] = mapped_column(Text, default="")
    tools: Mapped[list[Any]] = mapped_column(JSON, default=list)
    window: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[str] = mapped_column(Text)


class MessageRow(Base):
    __tablename__ = "ci_messages"
    __table_args__ = (UniqueConstraint("thread_id", "id", name="uq_ci_messages_thread_message"),)

    thread_id: Mapped[str] = mapped_column(
        Text, ForeignKey("ci_threads.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text, default="message")
    content: Mapped[str] = mapped_column(Text, default="")
    tool_call_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    relevance: Mapped[float | None] = mapped_column(Float, nullable=True)
    name: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ToolCallRow(Base):
    __tablename__ = "ci_tool_calls"

    thread_id: Mapped[str] = mapped_column(Text, primary_key=True)
    message_seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    # Either the provider's JSON text (a string) or a decoded object; kept as given.
    arguments: Mapped[Any] = mapped_column(JSON, nullable=True)


class RequestRow(Base):
    __tablename__ = "ci_requests"

    thread_id: Mapped[str] = mapped_column(Text, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(Text)
    after_message_id: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    model: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[str | None] = mapped_column(Text, nullable=True)
    cache_read_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    cache_write_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    output_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # schema 3
    billed_cost: Mapped[float | None] = mapped_column(Float, nullable=True)  # schema 4


UPGRADES = {1: ("ALTER TABLE ci_requests ADD COLUMN cache_read_tokens BIGINT",
                "ALTER TABLE ci_requests ADD COLUMN cache_write_tokens BIGINT"),
            2: ("ALTER TABLE ci_requests ADD COLUMN output_tokens BIGINT",),
            3: ("ALTER TABLE ci_requests ADD COLUMN billed_cost DOUBLE PRECISION",)}
"""SQL bringing a store of version N to N + 1 (run by `Store.open` in write mode)."""


class SummaryRow(Base):
    __tablename__ = "ci_summaries"

    thread_id: Mapped[str] = mapped_column(Text, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(Text)
    previous_summary_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    first_message_id: Mapped[str] = mapped_column(Text)
    last_message_id: Mapped[str] = mapped_column(Text)
    before_request_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    summary: Mapped[str] = mapped_column(Text, default="")
    accomplishments: Mapped[list[Any]] = mapped_column(JSON, default=list)
    key_decisions: Mapped[list[Any]] = mapped_column(JSON, default=list)
    relevant_files: Mapped[list[Any]] = mapped_column(JSON, default=list)
    active_goals: Mapped[list[Any]] = mapped_column(JSON, default=list)
    emotional_thread: Mapped[str] = mapped_column(Text, default="")
    relationship_dynamics: Mapped[str] = mapped_column(Text, default="")
    evolving_themes: Mapped[list[Any]] = mapped_column(JSON, default=list)
    emotional_markers: Mapped[list[Any]] = mapped_column(JSON, default=list)
    unresolved_threads: Mapped[list[Any]] = mapped_column(JSON, default=list)
    resolved_threads: Mapped[list[Any]] = mapped_column(JSON, default=list)
    key_facts: Mapped[list[Any]] = mapped_column(JSON, default=list)
    source: Mapped[str] = mapped_column(Text, default="recorded")
    model: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[str | None] = mapped_column(Text, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ImportRecordRow(Base):
    __tablename__ = "ci_import_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(Text)
    thread_ids: Mapped[list[Any]] = mapped_column(JSON, default=list)
    replaced_thread_ids: Mapped[list[Any]] = mapped_column(JSON, default=list)
    skipped: Mapped[list[Any]] = mapped_column(JSON, default=list)
    imported_at: Mapped[str] = mapped_column(Text)


TABLE_NAMES = tuple(Base.metadata.tables)


WIDE_INTEGERS = ("prompt_tokens", "window", "cache_read_tokens", "cache_write_tokens")


def widening_statements(conn: Any) -> list[str]:
    """ALTERs that give an older PostgreSQL store the column types of today (VARCHAR(n) -> TEXT, the
    token counts INTEGER -> BIGINT), so it holds what the importers accept; empty when it has them.
    Run by `Store.open` in write mode (an import), never when viewing."""
    from sqlalchemy import text

    rows = conn.execute(text(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name LIKE 'ci\\_%' "
        "AND (data_type = 'character varying' OR (data_type = 'integer' AND column_name IN "
        "('prompt_tokens', 'window', 'cache_read_tokens', 'cache_write_tokens')))"
    ))
    out = []
    for table, column, data_type in rows:
        if table not in Base.metadata.tables:
            continue
        kind = "TEXT" if data_type == "character varying" else "BIGINT"
        out.append(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE {kind}')
    return out
