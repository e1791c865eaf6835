"""The native store: the `ci_*` tables, read and written as frozen model dataclasses.

Reading goes cell by cell (`inspector.store.cells`), so a damaged cell is a warning in
`Store.warnings`, never a traceback; writing a batch that the database refuses falls back to one
transaction per thread (`save_threads`). Over 400 lines: the repository is one class.

`Store.open` is the one way in (re-exported by `inspector.store`). A database of a foreign
schema that a reader is registered for (`Store.reads_in_place`, e.g. the Iris reader) opens
as that reader instead.

Over 400 lines on purpose: one class, the repository over the one schema (opening and
version checks, reads, imports, the live-append API); split, its SQL would be scattered.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, ClassVar

from sqlalchemy import Engine, delete, func, insert, inspect, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.exc import DataError, IntegrityError, OperationalError, ProgrammingError, SQLAlchemyError

from inspector.model import SUBAGENT_LINKS, Message, Request, Summary, Thread, ThreadInfo, ToolCall, subagent_links
from inspector.store import bulk, convert
from inspector.store.cells import RowReader, cell_text, raw_select, row_label, summary_cells, tools_from_cell
from inspector.store.engine import (
    ENV_VAR,
    StoreError,
    database_errors,
    first_line,
    mask_url,
    now_iso,
    open_engine,
    resolve_db_url,
    sqlite_path,
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
    widening_statements,
)
from inspector.store.sqlite_open import SqliteOpenError, SqliteSource


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
        self.sqlite_source: SqliteSource | None = None
        self.warnings: list[str] = []
        self.save_errors: list[str] = []
        """Repairs made while reading (damaged cells), one line each naming the row and column;
        the CLI prints and clears them."""

    @property
    def access(self) -> str:
        """How the database was opened: `write`, `read-only`, `immutable` or `snapshot` (SQLite, see
        `inspector.store.sqlite_open`), `server` for other databases."""
        if self.sqlite_source is not None:
            return self.sqlite_source.access
        return "write" if not self.read_only else ("read-only" if sqlite_path(self.url) else "server")

    @property
    def access_note(self) -> str | None:
        """One line saying how a WAL-mode or journaled SQLite file was opened, else None."""
        return self.sqlite_source.note if self.sqlite_source is not None else None

    def refresh(self) -> None:
        """Reopen a snapshot or immutable SQLite view when its files changed (live tailing). A file replaced
        under the view (another file at its path) is reopened and said in `warnings`; a file deleted or
        truncated is a StoreError saying so (what was read stays on screen)."""
        source = self.sqlite_source
        if source is None:
            return
        problem = source.file_problem()
        try:
            if problem == "replaced":
                self.engine = source.reopen()
                self.warnings.append(f"{source.path}: the database file was replaced by another; reading the new one")
                return
            if problem == "deleted":
                raise StoreError(f"{source.path}: the database file was deleted; showing what was read before it")
            if problem == "truncated":
                raise StoreError(f"{source.path}: the database file was truncated; showing what was read before it")
            engine = source.refresh()
        except (SqliteOpenError, OSError) as exc:
            raise StoreError(str(exc)) from None
        if engine is not None:
            self.engine = engine


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
        engine, source = open_engine(url, read_only=read_only, create=create, wal=wal)
        try:
            try:
                inspector = inspect(engine)
                tables = {*inspector.get_table_names(), *inspector.get_view_names()}  # an app's tables may be VIEWs
            except SQLAlchemyError as exc:
                raise StoreError(f"{mask_url(url)}: cannot open database ({first_line(exc)})") from None
            store = cls._open_with(engine, url, tables, read_only=read_only, create=create, now=now)
        except BaseException:
            if source is not None:
                source.close()
            engine.dispose()
            raise
        store.sqlite_source = source
        return store

    @classmethod
    def _open_with(cls, engine: Engine, url: str, tables: set[str], *, read_only: bool, create: bool,
                   now: str | None) -> Store:
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
            if not read_only and engine.dialect.name == "postgresql":
                with database_errors(url, "widen the columns of an older store"), engine.begin() as conn:
                    for statement in widening_statements(conn):
                        conn.execute(sql_text(statement))
            return store
        for recognizes, reader in Store._readers:
            if recognizes(tables):
                return reader(engine, url)
        if not create:
            engine.dispose()
            if not tables:
                raise StoreError(f"{mask_url(url)}: empty database (import threads into it first)")
            raise StoreError(f"{mask_url(url)}: not a context-inspector database (no ci_schema_version table)")
        try:
            _create_tables(engine, now or now_iso())
        except (IntegrityError, OperationalError, ProgrammingError) as exc:
            # Another process (a second import of the same file) created the tables meanwhile: use them.
            if "already exists" not in str(exc) and "UNIQUE" not in str(exc) and "duplicate" not in str(exc):
                raise StoreError(f"{mask_url(url)}: cannot create the tables ({first_line(exc)})") from None
            store = cls(engine, url, read_only=False)
            with database_errors(url, "read the schema version"):
                store._check_version()
            return store
        return cls(engine, url, read_only=False)

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            versions = [v for (v,) in conn.execute(select(SchemaVersionRow.version)) if isinstance(v, int)]
        found = max(versions) if versions else None
        if found is None:
            found = self._restore_version()
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

    def _restore_version(self) -> int:
        """The version of a store whose version row is gone (deleted by hand, a damaged table): read from
        the columns its tables have (each upgrade added request columns), said in `warnings`, and written
        back when the store is open for writing."""
        columns = {c["name"] for c in inspect(self.engine).get_columns(RequestRow.__tablename__)}
        version = 1
        for step in sorted(UPGRADES):
            added = {stmt.split("ADD COLUMN", 1)[1].split()[0] for stmt in UPGRADES[step] if "ADD COLUMN" in stmt}
            if added <= columns:
                version = step + 1
        where = mask_url(self.url)
        if self.read_only:
            self.warnings.append(f"{where}: ci_schema_version holds no version; read as version {version} (the "
                                 "version its tables have)")
            return version
        with self.engine.begin() as conn:
            conn.execute(insert(SchemaVersionRow).values(version=version, created_at=now_iso()))
        self.warnings.append(f"{where}: ci_schema_version held no version; version {version} (the version its "
                             "tables have) written back")
        return version

    def close(self) -> None:
        self.engine.dispose()
        if self.sqlite_source is not None:
            self.sqlite_source.close()

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
            # the user's own compactions (Claude Code's /compact), which `threads` names
            manual = (select(SummaryRow.thread_id, func.count().label("n"))
                      .where(SummaryRow.meta["trigger"].as_string() == "manual")
                      .group_by(SummaryRow.thread_id).subquery())

            def query(gaps: Any, by_hand: Any, meta_readable: bool) -> Any:
                # a sub-agent's links are read with its import gaps (a damaged meta cell loses both)
                links = [ThreadRow.meta[key].as_string() if meta_readable else sql_text("NULL")
                         for key in SUBAGENT_LINKS]
                q = (
                    select(ThreadRow.id, ThreadRow.title, ThreadRow.source, ThreadRow.updated_at, m.c.n, r.c.n,
                           s.c.n, gaps, by_hand, *links)
                    .outerjoin(m, m.c.thread_id == ThreadRow.id)
                    .outerjoin(r, r.c.thread_id == ThreadRow.id)
                    .outerjoin(s, s.c.thread_id == ThreadRow.id)
                )
                if by_hand is manual.c.n:
                    q = q.outerjoin(manual, manual.c.thread_id == ThreadRow.id)
                return q.order_by(ThreadRow.created_at, ThreadRow.id)

            with self.engine.connect() as conn:
                # a damaged meta cell (text that is not JSON) costs only what it holds, said so
                damaged = {"ci_threads": "import gaps not listed", "ci_summaries": "manual compactions not counted"}
                tries = [((ThreadRow.meta["import_gaps"], manual.c.n), ()),
                         ((ThreadRow.meta["import_gaps"], sql_text("NULL")), ("ci_summaries",)),
                         ((sql_text("NULL"), manual.c.n), ("ci_threads",)),
                         ((sql_text("NULL"), sql_text("NULL")), ("ci_threads", "ci_summaries"))]
                for columns, lost in tries:
                    try:
                        rows = list(conn.execute(query(*columns, "ci_threads" not in lost)))
                    except OperationalError as exc:
                        if "JSON" not in str(exc) or lost == tries[-1][1]:
                            raise
                        conn.rollback()
                        continue
                    for table in lost:
                        self.warnings.append(f"{mask_url(self.url)}: {table} column meta: a row holds text that is "
                                             f"not JSON; {damaged[table]}")
                    break
                derived = self._derived_request_counts(conn, [r[0] for r in rows if not r[5] and r[4]])
                return [
                    ThreadInfo(
                        id=tid, title=cell_text(title, tid, "title", self), source=cell_text(source, tid, "source", self),
                        messages=nm or 0, requests=nr or 0, summaries=ns or 0,
                        updated_at=cell_text(updated, tid, "updated_at", self) or None,
                        derived_requests=derived.get(tid, 0),
                        import_gaps=gaps if isinstance(gaps, dict) and gaps else None,
                        manual_summaries=nmanual if isinstance(nmanual, int) else 0,
                        **subagent_links(dict(zip(SUBAGENT_LINKS, links, strict=True))),
                    )
                    for tid, title, source, updated, nm, nr, ns, gaps, nmanual, *links in rows
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
        """The thread; a damaged cell is repaired or dropped with a line in `warnings` (see `cells`)."""
        found = self.load_threads([thread_id])[thread_id]
        if isinstance(found, StoreError):
            raise found
        return found

    def load_threads(self, thread_ids: Iterable[str]) -> dict[str, Thread | StoreError]:
        """Many threads with one query per table (a fleet sweep's batch), each as `load_thread` reads
        it; a thread that is not there is a StoreError in its place."""
        ids = list(dict.fromkeys(thread_ids))
        if not ids:
            return {}
        with database_errors(self.url, "load a thread"):
            where = mask_url(self.url)
            warn = self.warnings.append
            raw = self.engine.dialect.name == "sqlite"
            with self.engine.connect() as conn:
                def rows(row_cls: Any, *order: Any, columns: Any = None) -> dict[str, list[dict[str, Any]]]:
                    table = row_cls.__table__
                    reader = RowReader(table, where, warn, decoded=not raw)
                    query = (raw_select(table, raw, columns).where(table.c.thread_id.in_(ids))
                             .order_by(table.c.thread_id, *order))
                    out: dict[str, list[dict[str, Any]]] = {}
                    for r in conn.execute(query).mappings():
                        tid = r["thread_id"]
                        out.setdefault(tid, []).append(reader.read(r, partial(row_label, tid, r)))
                    return out

                head_table = ThreadRow.__table__
                heads = {r["id"]: r for r in conn.execute(raw_select(head_table, raw)
                                                          .where(head_table.c.id.in_(ids))).mappings()}
                calls: dict[tuple[str, int], list[ToolCall]] = {}
                for tid, found in rows(ToolCallRow, ToolCallRow.message_seq, ToolCallRow.seq).items():
                    for row in found:
                        calls.setdefault((tid, row["message_seq"]), []).append(
                            ToolCall(id=row["id"] or "", name=row["name"] or "", arguments=row["arguments"]))
                messages = rows(MessageRow, MessageRow.seq)
                requests = rows(RequestRow, RequestRow.seq, columns=self._request_columns)
                summaries = rows(SummaryRow, SummaryRow.seq)
            out: dict[str, Thread | StoreError] = {}
            for thread_id in ids:
                found = heads.get(thread_id)
                if found is None:
                    out[thread_id] = StoreError(f"no thread {thread_id!r} in {where}")
                    continue
                head = RowReader(head_table, where, warn, decoded=not raw).read(found, f"id {thread_id}")
                out[thread_id] = Thread(
                    id=head["id"],
                    title=head["title"] or "",
                    source=head["source"] or "native",
                    system_prompt=head["system_prompt"] or "",
                    tools=tools_from_cell(head["tools"] or (), where, thread_id, warn),
                    messages=tuple(convert.message_from_row(row, tuple(calls.get((thread_id, row["seq"]), ())))
                                   for row in messages.get(thread_id, ())),
                    requests=tuple(convert.request_from_row(row) for row in requests.get(thread_id, ())),
                    summaries=tuple(convert.summary_from_row(summary_cells(row, where, thread_id, warn))
                                    for row in summaries.get(thread_id, ())),
                    window=head["window"],
                    meta=head["meta"] or {},
                )
            return out

    def data_version(self, thread_id: str) -> tuple:
        """Cheap fingerprint that changes when messages, requests or summaries are added (live mode)."""
        self.refresh()
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

    def import_batch(self) -> ImportBatch:
        """The write transaction of an import run (see `ImportBatch`)."""
        return ImportBatch(self)

    def save_thread(self, thread: Thread, *, now: str | None = None) -> bool:
        """Write `thread`, replacing a thread with the same id. Returns True when one was replaced."""
        return self.save_threads([thread], now=now)[0]

    def save_threads(self, threads: Iterable[Thread], *, now: str | None = None) -> list[bool | None]:
        """Write several threads in one transaction; per thread, whether it replaced one.

        A concurrent import of the same threads is waited for (the database's lock), and a
        unique-key clash with what it saved meanwhile is retried (it then replaces). When the batch fails, each thread is written in a
        transaction of its own, so one bad thread never takes the others down: its flag is None and
        `save_errors` says why. When every thread fails, StoreError."""
        self._require_writable()
        threads = list(threads)
        stamp = now or now_iso()
        self.save_errors = []
        failure: BaseException | None = None
        for _ in range(3):
            try:
                with self.engine.begin() as conn:
                    return [_write_thread(conn, thread, stamp) for thread in threads]
            except IntegrityError as exc:  # a concurrent import saved one of them meanwhile: again
                failure = exc
            except (SQLAlchemyError, sqlite3.Error, OverflowError) as exc:
                failure = exc
                break
        if len(threads) <= 1 or "database is locked" in str(failure):
            raise StoreError(f"{mask_url(self.url)}: cannot save threads ({first_line(failure)})") from None
        flags: list[bool | None] = []
        for thread in threads:
            try:
                with self.engine.begin() as conn:
                    flags.append(_write_thread(conn, thread, stamp))
            except (SQLAlchemyError, sqlite3.Error, OverflowError) as exc:
                flags.append(None)
                self.save_errors.append(f"thread {thread.id}: cannot be saved ({first_line(exc)}); thread skipped")
        if all(flag is None for flag in flags):
            raise StoreError(f"{mask_url(self.url)}: cannot save threads ({first_line(failure)})") from None
        return flags

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


class ThreadsRefused(StoreError):
    """The database refused every thread of a file (their data, not the database itself)."""


DATA_ERRORS = (IntegrityError, DataError, OverflowError, sqlite3.IntegrityError, sqlite3.DataError)
"""What the database says of one thread it cannot hold (a value past a column's limit): that thread is
skipped, the others saved. Anything else (a full disk, an I/O error, a lock) stops the import."""

COMMIT_SECONDS = 1.0
"""An import commits its batch of files at least this often (5,000 tiny files are a few commits, not
5,000 fsyncs); each file is a savepoint of the batch."""


class ImportBatch:
    """One write transaction over the files of an import run, committed every `COMMIT_SECONDS`.

    Each file's threads and its import record are written in a savepoint of their own
    (`save_file`): together, or not at all. `save_file` returns per thread whether it replaced one
    (None: the database refused that thread, `errors` says why). A failure that is not about one
    thread's data raises StoreError; the caller then `rollback`s what was not committed."""

    def __init__(self, store: Store, *, seconds: float = COMMIT_SECONDS) -> None:
        store._require_writable()
        self.store = store
        self.seconds = seconds
        self.conn = store.engine.connect()
        self.trans = self.conn.begin()
        self.started = time.monotonic()
        self.errors: list[str] = []

    def save_file(self, threads: list[Thread], *, path: str, sha256: str, fmt: str, skipped: list[str],
                  now: str | None = None, rows: list[bulk.Rows | None] | None = None) -> list[bool | None]:
        """`rows`: per thread, its rows built already (`bulk.thread_rows` for `prebuilt_ascii`), the
        thread then only its header; None for a thread whose rows are built here (from its messages)."""
        stamp = now or now_iso()
        self.errors = []
        url = self.store.url
        with database_errors(url, "save threads"):
            point = self.conn.begin_nested()
            try:
                flags = self._threads(threads, stamp, rows or [None] * len(threads))
                if threads and all(flag is None for flag in flags):
                    raise ThreadsRefused(f"{mask_url(url)}: cannot save threads ({self.errors[0]})")
                saved = [t.id for t, flag in zip(threads, flags, strict=True) if flag is not None]
                self.conn.execute(insert(ImportRecordRow).values(
                    path=path, sha256=sha256, format=fmt, thread_ids=saved,
                    replaced_thread_ids=[t.id for t, flag in zip(threads, flags, strict=True) if flag],
                    skipped=list(skipped), imported_at=stamp))
            except BaseException:
                _quietly_undo(point)
                raise
            point.commit()
        return flags

    def _threads(self, threads: list[Thread], stamp: str, rows: list[bulk.Rows | None]) -> list[bool | None]:
        """All threads in one savepoint; where the database refuses one, each in a savepoint of its own."""
        point = self.conn.begin_nested()
        try:
            flags: list[bool | None] = [_write_thread(self.conn, thread, stamp, built)
                                        for thread, built in zip(threads, rows, strict=True)]
        except DATA_ERRORS as exc:
            point.rollback()
            if len(threads) <= 1:
                self.errors.append(first_line(exc))
                return [None] * len(threads)
        except BaseException:
            _quietly_undo(point)
            raise
        else:
            point.commit()
            return flags
        flags = []
        for thread, built in zip(threads, rows, strict=True):
            point = self.conn.begin_nested()
            try:
                flags.append(_write_thread(self.conn, thread, stamp, built))
            except DATA_ERRORS as exc:
                point.rollback()
                flags.append(None)
                self.errors.append(f"thread {thread.id}: cannot be saved ({first_line(exc)}); thread skipped")
            except BaseException:
                _quietly_undo(point)
                raise
            else:
                point.commit()
        return flags

    def prebuilt_ascii(self) -> bool | None:
        """`bulk.prebuilt_ascii` of the batch's connection: what rows built ahead for `save_file` hold
        (None: they cannot be built ahead for this driver)."""
        with database_errors(self.store.url, "save threads"):
            return bulk.prebuilt_ascii(self.conn)

    def has_thread(self, thread_id: str) -> bool:
        """`Store.has_thread` inside the batch (another connection would wait for the batch's write lock)."""
        with database_errors(self.store.url, "read threads"):
            return self.conn.execute(select(ThreadRow.id).where(ThreadRow.id == thread_id)).first() is not None

    def due(self) -> bool:
        return time.monotonic() - self.started >= self.seconds

    def commit(self) -> None:
        """Commit the files saved so far and begin the next batch."""
        with database_errors(self.store.url, "save threads"):
            self.trans.commit()
            self.trans = self.conn.begin()
        self.started = time.monotonic()

    def rollback(self) -> None:
        """Undo what was not committed (after a failure, SQLite may have undone it already) and begin anew."""
        with contextlib.suppress(SQLAlchemyError, sqlite3.Error):
            if self.trans.is_active:
                self.trans.rollback()
        with contextlib.suppress(SQLAlchemyError, sqlite3.Error):
            self.trans = self.conn.begin()
        self.started = time.monotonic()

    def close(self) -> None:
        with contextlib.suppress(SQLAlchemyError, sqlite3.Error):
            if self.trans.is_active:
                self.trans.rollback()
        self.conn.close()


def _quietly_undo(point: Any) -> None:
    """Roll a savepoint back after a failure; SQLite may have undone the whole transaction already."""
    with warnings.catch_warnings(), contextlib.suppress(SQLAlchemyError, sqlite3.Error):
        warnings.simplefilter("ignore")
        point.rollback()


def _create_tables(engine: Engine, stamp: str) -> None:
    """The tables and the version row in one transaction. SQLite's write transactions begin
    IMMEDIATE (`engine._sqlite_write_engine`): a second import starting meanwhile waits, then finds
    the whole schema (and its version row: a unique-key error the caller expects)."""
    with engine.begin() as conn:
        Base.metadata.create_all(conn)
        conn.execute(insert(SchemaVersionRow).values(version=SCHEMA_VERSION, created_at=stamp))


def _write_thread(conn: Any, thread: Thread, stamp: str, rows: bulk.Rows | None = None) -> bool:
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
    if rows is not None:  # built in an import's parse child (`ImportBatch.prebuilt_ascii`)
        bulk.write_built(conn, rows)
        return created is not None
    if not bulk.write_rows(conn, thread):  # a driver other than SQLite's and psycopg's: SQLAlchemy's inserts
        _insert_many(conn, MessageRow, [convert.message_row(thread.id, i, m) for i, m in enumerate(thread.messages)])
        _insert_many(conn, ToolCallRow, [row for i, m in enumerate(thread.messages)
                                         for row in convert.tool_call_rows(thread.id, i, m)])
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
