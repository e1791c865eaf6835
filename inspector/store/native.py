"""The native store: the `ci_*` tables, read and written as frozen model dataclasses.

`Store.open` is the one way in (re-exported by `inspector.store`). A database of a foreign
schema that a reader is registered for (`Store.reads_in_place`, e.g. the Iris reader) opens
as that reader instead.

About 400 lines on purpose: one class, the repository over the one schema (opening and
version checks, reads, imports, the live-append API); split, its SQL would be scattered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from sqlalchemy import Engine, delete, func, insert, inspect, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from inspector.model import Message, Request, Summary, Thread, ThreadInfo, ToolCall
from inspector.store import convert
from inspector.store.engine import (
    ENV_VAR,
    StoreError,
    database_errors,
    first_line,
    make_engine,
    mask_url,
    now_iso,
    resolve_db_url,
)
from inspector.store.schema import (
    SCHEMA_VERSION,
    UPGRADES,
    Base,
    ImportRecordRow,
    MessageRow,
    RequestRow,
    SchemaVersionRow,
    SummaryRow,
    ThreadRow,
    ToolCallRow,
)


class Store:
    """Repository over the `ci_*` tables; returns `inspector.model` dataclasses only."""

    read_only: bool
    # Foreign schemas read in place: (recognizes the table names, the reader's class).
    _readers: ClassVar[list[tuple[Callable[[set[str]], bool], Callable[[Engine, str], Store]]]] = []

    @classmethod
    def reads_in_place(cls, recognizes: Callable[[set[str]], bool], reader: Callable[[Engine, str], Store]) -> None:
        """Open a database whose table names `recognizes` accepts as `reader(engine, url)`."""
        cls._readers.append((recognizes, reader))

    def __init__(self, engine: Engine, url: str, *, read_only: bool) -> None:
        self.engine = engine
        self.url = url
        self.read_only = read_only
        self.schema_version = SCHEMA_VERSION
        self._request_columns = list(RequestRow.__table__.columns)
        """What a request row holds here (a version-1 store, viewed read-only, lacks the cache columns)."""

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        url_or_path: str | None,
        *,
        read_only: bool = True,
        create: bool = False,
        wal: bool = False,
        now: str | None = None,
    ) -> Store:
        """Open a database: a SQLAlchemy URL or a file path (`resolve_db_url`; the demo database is
        built above the store, by `inspector.demo.ensure_demo_db`, whose URL callers pass here).

        `create=True` (write mode) creates the file and the tables when missing (`now` stamps
        the version row, for reproducible files); `wal=True` writes SQLite in WAL mode. A database
        holding Laravel `conversations` + `conversation_summaries` tables opens as an IrisStore.
        """
        if create:
            read_only = False
        url = resolve_db_url(url_or_path)
        if url is None:
            raise StoreError(f"no database given: pass --db or set {ENV_VAR}")
        engine = make_engine(url, read_only=read_only, create=create, wal=wal)
        try:
            tables = set(inspect(engine).get_table_names())
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"{mask_url(url)}: cannot open database ({first_line(exc)})") from None
        if SchemaVersionRow.__tablename__ in tables:
            missing = sorted(set(Base.metadata.tables) - tables)
            if missing:
                engine.dispose()
                raise StoreError(
                    f"{mask_url(url)}: damaged context-inspector database: missing table(s) {', '.join(missing)}"
                )
            store = cls(engine, url, read_only=read_only)
            with database_errors(url, "read the schema version"):
                store._check_version()
            return store
        for recognizes, reader in Store._readers:
            if recognizes(tables):
                return reader(engine, url)
        if not create:
            engine.dispose()
            if not tables:
                raise StoreError(f"{mask_url(url)}: empty database (import threads into it first)")
            raise StoreError(f"{mask_url(url)}: not a context-inspector database (no ci_schema_version table)")
        Base.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(insert(SchemaVersionRow).values(version=SCHEMA_VERSION, created_at=now or now_iso()))
        return cls(engine, url, read_only=False)

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            versions = [v for (v,) in conn.execute(select(SchemaVersionRow.version))]
        found = max(versions) if versions else None
        self.schema_version = found if found is not None else 0
        if found is not None and found < SCHEMA_VERSION and not self.read_only and all(
            v in UPGRADES for v in range(found, SCHEMA_VERSION)
        ):
            with self.engine.begin() as conn:
                for version in range(found, SCHEMA_VERSION):
                    for statement in UPGRADES[version]:
                        conn.execute(sql_text(statement))
                conn.execute(insert(SchemaVersionRow).values(version=SCHEMA_VERSION, created_at=now_iso()))
            self.schema_version = SCHEMA_VERSION
            return
        if found is not None and found < SCHEMA_VERSION and self.read_only and all(
            v in UPGRADES for v in range(found, SCHEMA_VERSION)
        ):  # viewing never writes: read it as it is, without the request columns later versions added
            added = {stmt.split("ADD COLUMN", 1)[1].split()[0] for v in range(found, SCHEMA_VERSION)
                     for stmt in UPGRADES[v] if stmt.startswith("ALTER TABLE ci_requests ADD COLUMN")}
            self._request_columns = [c for c in RequestRow.__table__.columns if c.name not in added]
            return
        if found != SCHEMA_VERSION:
            if found is not None and found < SCHEMA_VERSION:
                age = "older"
            elif found is not None:
                age = "newer"
            else:
                age = "unversioned"
            self.engine.dispose()
            raise StoreError(
                f"{mask_url(self.url)}: {age} database schema version {found}; "
                f"this context-inspector reads version {SCHEMA_VERSION}"
                + (" (importing into it once upgrades it)" if age == "older" and found in UPGRADES else "")
            )

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def kind(self) -> str:
        return "native"

    # ---- reading -------------------------------------------------------------------------

    def list_threads(self) -> list[ThreadInfo]:
        with database_errors(self.url, "list threads"):
            def counts(row_cls: Any) -> Any:
                return (
                    select(row_cls.thread_id, func.count().label("n")).group_by(row_cls.thread_id).subquery()
                )

            m, r, s = counts(MessageRow), counts(RequestRow), counts(SummaryRow)
            query = (
                select(ThreadRow.id, ThreadRow.title, ThreadRow.source, ThreadRow.updated_at, m.c.n, r.c.n, s.c.n,
                       ThreadRow.meta["import_gaps"])
                .outerjoin(m, m.c.thread_id == ThreadRow.id)
                .outerjoin(r, r.c.thread_id == ThreadRow.id)
                .outerjoin(s, s.c.thread_id == ThreadRow.id)
                .order_by(ThreadRow.created_at, ThreadRow.id)
            )
            with self.engine.connect() as conn:
                rows = list(conn.execute(query))
                derived = self._derived_request_counts(conn, [r[0] for r in rows if not r[5] and r[4]])
                return [
                    ThreadInfo(
                        id=tid, title=title or "", source=source or "", messages=nm or 0, requests=nr or 0,
                        summaries=ns or 0, updated_at=updated, derived_requests=derived.get(tid, 0),
                        import_gaps=gaps if isinstance(gaps, dict) and gaps else None,
                    )
                    for tid, title, source, updated, nm, nr, ns, gaps in rows
                ]

    @staticmethod
    def _derived_request_counts(conn: Any, thread_ids: list[str]) -> dict[str, int]:
        """`model.derive_requests` counted in SQL: assistant messages after the first message,
        plus one when the last message is not the assistant's."""
        if not thread_ids:
            return {}
        out: dict[str, int] = {}
        bounds = (
            select(MessageRow.thread_id, func.min(MessageRow.seq), func.max(MessageRow.seq))
            .where(MessageRow.thread_id.in_(thread_ids))
            .group_by(MessageRow.thread_id)
        )
        first_last = {tid: (lo, hi) for tid, lo, hi in conn.execute(bounds)}
        assistants = (
            select(MessageRow.thread_id, MessageRow.seq)
            .where(MessageRow.thread_id.in_(thread_ids), MessageRow.role == "assistant")
        )
        last_is_assistant: set[str] = set()
        for tid, seq in conn.execute(assistants):
            lo, hi = first_last[tid]
            if seq != lo:
                out[tid] = out.get(tid, 0) + 1
            if seq == hi:
                last_is_assistant.add(tid)
        for tid in first_last:
            if tid not in last_is_assistant:
                out[tid] = out.get(tid, 0) + 1
        return out

    def thread_ids(self) -> list[str]:
        with database_errors(self.url, "list threads"), self.engine.connect() as conn:
            return [tid for (tid,) in conn.execute(select(ThreadRow.id).order_by(ThreadRow.created_at, ThreadRow.id))]

    def has_thread(self, thread_id: str) -> bool:
        with database_errors(self.url, "read threads"), self.engine.connect() as conn:
            return conn.execute(select(ThreadRow.id).where(ThreadRow.id == thread_id)).first() is not None

    def load_thread(self, thread_id: str) -> Thread:
        with database_errors(self.url, "load a thread"):
            with self.engine.connect() as conn:
                head = conn.execute(select(ThreadRow).where(ThreadRow.id == thread_id)).mappings().first()
                if head is None:
                    raise StoreError(f"no thread {thread_id!r} in {mask_url(self.url)}")
                calls: dict[int, list[ToolCall]] = {}
                call_query = (
                    select(ToolCallRow).where(ToolCallRow.thread_id == thread_id)
                    .order_by(ToolCallRow.message_seq, ToolCallRow.seq)
                )
                for row in conn.execute(call_query).mappings():
                    calls.setdefault(row["message_seq"], []).append(
                        ToolCall(id=row["id"], name=row["name"], arguments=row["arguments"])
                    )
                messages = tuple(
                    convert.message_from_row(row, tuple(calls.get(row["seq"], ())))
                    for row in conn.execute(
                        select(MessageRow).where(MessageRow.thread_id == thread_id).order_by(MessageRow.seq)
                    ).mappings()
                )
                requests = tuple(
                    convert.request_from_row(row)
                    for row in conn.execute(
                        select(*self._request_columns).where(RequestRow.thread_id == thread_id)
                        .order_by(RequestRow.seq)
                    ).mappings()
                )
                summaries = tuple(
                    convert.summary_from_row(row)
                    for row in conn.execute(
                        select(SummaryRow).where(SummaryRow.thread_id == thread_id).order_by(SummaryRow.seq)
                    ).mappings()
                )
            return Thread(
                id=head["id"],
                title=head["title"] or "",
                source=head["source"] or "native",
                system_prompt=head["system_prompt"] or "",
                tools=tuple(convert.tool_def_from_dict(t) for t in head["tools"] or ()),
                messages=messages,
                requests=requests,
                summaries=summaries,
                window=head["window"],
                meta=head["meta"] or {},
            )

    def data_version(self, thread_id: str) -> tuple:
        """Cheap fingerprint that changes when messages, requests or summaries are added (live mode)."""
        with database_errors(self.url, "read a thread"):
            with self.engine.connect() as conn:
                parts: list[Any] = []
                for row_cls in (MessageRow, RequestRow, SummaryRow):
                    parts.extend(
                        conn.execute(
                            select(func.count(), func.max(row_cls.seq)).where(row_cls.thread_id == thread_id)
                        ).one()
                    )
                parts.append(conn.execute(select(ThreadRow.updated_at).where(ThreadRow.id == thread_id)).scalar())
            return tuple(parts)

    def import_records(self) -> list[dict[str, Any]]:
        with database_errors(self.url, "read import records"), self.engine.connect() as conn:
            rows = conn.execute(select(ImportRecordRow).order_by(ImportRecordRow.id)).mappings()
            return [dict(r) for r in rows]

        # ---- writing -------------------------------------------------------------------------

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{mask_url(self.url)}: opened read-only")

    def save_thread(self, thread: Thread, *, now: str | None = None) -> bool:
        """Write `thread`, replacing a thread with the same id. Returns True when one was replaced."""
        return self.save_threads([thread], now=now)[0]

    def save_threads(self, threads: Iterable[Thread], *, now: str | None = None) -> list[bool]:
        """Write several threads in one transaction; per thread, whether it replaced one."""
        self._require_writable()
        stamp = now or now_iso()
        try:
            with self.engine.begin() as conn:
                return [_write_thread(conn, thread, stamp) for thread in threads]
        except IntegrityError as exc:
            raise StoreError(f"cannot save threads: {first_line(exc)}") from None
        except (SQLAlchemyError, sqlite3.Error, OverflowError) as exc:
            raise StoreError(f"{mask_url(self.url)}: cannot save threads ({first_line(exc)})") from None

    def delete_thread(self, thread_id: str) -> None:
        with database_errors(self.url, "delete a thread"):
            self._require_writable()
            with self.engine.begin() as conn:
                _delete_thread(conn, thread_id)

    def create_thread(self, thread: Thread, *, now: str | None = None) -> None:
        """Insert an empty thread header (recording API); fails if the id exists."""
        self._require_writable()
        if self.has_thread(thread.id):
            raise StoreError(f"thread {thread.id!r} already exists")
        self.save_thread(thread, now=now)

    def append_message(self, thread_id: str, message: Message) -> None:
        """Append one message at the end of a thread (one small transaction)."""
        self._append(thread_id, MessageRow, lambda seq: [convert.message_row(thread_id, seq, message)],
                     extra=lambda seq: convert.tool_call_rows(thread_id, seq, message))

    def append_request(self, thread_id: str, request: Request) -> None:
        self._append(thread_id, RequestRow, lambda seq: [convert.request_row(thread_id, seq, request)])

    def append_summary(self, thread_id: str, summary: Summary) -> None:
        self._append(thread_id, SummaryRow, lambda seq: [convert.summary_row(thread_id, seq, summary)])

    def set_summary_before_request(self, thread_id: str, summary_id: str, request_id: str) -> None:
        with database_errors(self.url, "write"):
            self._require_writable()
            with self.engine.begin() as conn:
                conn.execute(
                    update(SummaryRow)
                    .where(SummaryRow.thread_id == thread_id, SummaryRow.id == summary_id)
                    .values(before_request_id=request_id)
                )

    def _append(self, thread_id: str, row_cls: Any, rows: Any, extra: Any = None) -> None:
        with database_errors(self.url, "write"):
            self._require_writable()
            with self.engine.begin() as conn:
                if conn.execute(select(ThreadRow.id).where(ThreadRow.id == thread_id)).first() is None:
                    raise StoreError(f"no thread {thread_id!r}")
                last = conn.execute(select(func.max(row_cls.seq)).where(row_cls.thread_id == thread_id)).scalar()
                seq = 0 if last is None else last + 1
                _insert_many(conn, row_cls, rows(seq))
                if extra is not None:
                    _insert_many(conn, ToolCallRow, extra(seq))
                conn.execute(update(ThreadRow).where(ThreadRow.id == thread_id).values(updated_at=now_iso()))

    def add_import_record(
        self,
        *,
        path: str,
        sha256: str,
        fmt: str,
        thread_ids: Iterable[str],
        replaced: Iterable[str] = (),
        skipped: Iterable[str] = (),
        now: str | None = None,
    ) -> None:
        with database_errors(self.url, "write an import record"):
            self._require_writable()
            with self.engine.begin() as conn:
                conn.execute(
                    insert(ImportRecordRow).values(
                        path=path,
                        sha256=sha256,
                        format=fmt,
                        thread_ids=list(thread_ids),
                        replaced_thread_ids=list(replaced),
                        skipped=list(skipped),
                        imported_at=now or now_iso(),
                    )
                )


def _write_thread(conn: Any, thread: Thread, stamp: str) -> bool:
    created = conn.execute(select(ThreadRow.created_at).where(ThreadRow.id == thread.id)).scalar()
    if created is not None:
        _delete_thread(conn, thread.id)
    conn.execute(
        insert(ThreadRow).values(
            id=thread.id,
            title=thread.title,
            source=thread.source,
            system_prompt=thread.system_prompt,
            tools=[convert.tool_def_to_dict(t) for t in thread.tools],
            window=thread.window,
            meta=convert.plain(thread.meta),
            created_at=created or stamp,
            updated_at=stamp,
        )
    )
    _insert_many(conn, MessageRow, [convert.message_row(thread.id, i, m) for i, m in enumerate(thread.messages)])
    _insert_many(
        conn, ToolCallRow, [row for i, m in enumerate(thread.messages) for row in convert.tool_call_rows(thread.id, i, m)]
    )
    _insert_many(conn, RequestRow, [convert.request_row(thread.id, i, r) for i, r in enumerate(thread.requests)])
    _insert_many(conn, SummaryRow, [convert.summary_row(thread.id, i, s) for i, s in enumerate(thread.summaries)])
    return created is not None


def _insert_many(conn: Any, row_cls: Any, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(row_cls), rows)


def _delete_thread(conn: Any, thread_id: str) -> None:
    for row_cls in (ToolCallRow, MessageRow, RequestRow, SummaryRow):
        conn.execute(delete(row_cls).where(row_cls.thread_id == thread_id))
    conn.execute(delete(ThreadRow).where(ThreadRow.id == thread_id))
