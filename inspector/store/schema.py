"""The store's tables (SQLAlchemy 2 typed ORM).

Every table name carries the `ci_` prefix so the store can live inside an application's own
database (for example next to Laravel's `threads` table) without a clash. Timestamps are ISO 8601
strings; lists and mappings are JSON columns. Rows never leave `inspector.store`: the repository
turns them into `inspector.model` dataclasses.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SCHEMA_VERSION = 3
"""Bump on any change to these tables; `Store.open` refuses other versions with a clear message
(versions 1 and 2, without the requests' cache or output columns, are read as they are when viewed and
upgraded in place when opened for writing)."""


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, Any: JSON}


class SchemaVersionRow(Base):
    __tablename__ = "ci_schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[str] = mapped_column(String(40))


class ThreadRow(Base):
    __tablename__ = "ci_threads"

    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(64), default="native")
    system_prompt: Mapped[str] = mapped_column(Text, default="")
    tools: Mapped[list[Any]] = mapped_column(JSON, default=list)
    window: Mapped[int | None] = mapped_column(Integer, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[str] = mapped_column(String(40))
    updated_at: Mapped[str] = mapped_column(String(40))


class MessageRow(Base):
    __tablename__ = "ci_messages"
    __table_args__ = (UniqueConstraint("thread_id", "id", name="uq_ci_messages_thread_message"),)

    thread_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("ci_threads.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16), default="message")
    content: Mapped[str] = mapped_column(Text, default="")
    tool_call_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    required: Mapped[bool] = mapped_column(Boolean, default=False)
    relevance: Mapped[float | None] = mapped_column(Float, nullable=True)
    name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ToolCallRow(Base):
    __tablename__ = "ci_tool_calls"

    thread_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    message_seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    # Either the provider's JSON text (a string) or a decoded object; kept as given.
    arguments: Mapped[Any] = mapped_column(JSON, nullable=True)


class RequestRow(Base):
    __tablename__ = "ci_requests"

    thread_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(255))
    after_message_id: Mapped[str] = mapped_column(String(255))
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    cache_read_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cache_write_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    output_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)  # schema 3


UPGRADES = {1: ("ALTER TABLE ci_requests ADD COLUMN cache_read_tokens INTEGER",
                "ALTER TABLE ci_requests ADD COLUMN cache_write_tokens INTEGER"),
            2: ("ALTER TABLE ci_requests ADD COLUMN output_tokens INTEGER",)}
"""SQL bringing a store of version N to N + 1 (run by `Store.open` in write mode)."""


class SummaryRow(Base):
    __tablename__ = "ci_summaries"

    thread_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[str] = mapped_column(String(255))
    previous_summary_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    first_message_id: Mapped[str] = mapped_column(String(255))
    last_message_id: Mapped[str] = mapped_column(String(255))
    before_request_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
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
    source: Mapped[str] = mapped_column(String(32), default="recorded")
    model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ImportRecordRow(Base):
    __tablename__ = "ci_import_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    format: Mapped[str] = mapped_column(String(32))
    thread_ids: Mapped[list[Any]] = mapped_column(JSON, default=list)
    replaced_thread_ids: Mapped[list[Any]] = mapped_column(JSON, default=list)
    skipped: Mapped[list[Any]] = mapped_column(JSON, default=list)
    imported_at: Mapped[str] = mapped_column(String(40))



TABLE_NAMES = tuple(Base.metadata.tables)
