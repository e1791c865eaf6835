"""The thread store: any SQLAlchemy database (or a file path), returning frozen model dataclasses.

`Store.open` is the one way in. Viewing and simulating open read-only (the default): for
SQLite the file is opened with `mode=ro` and `PRAGMA query_only=ON`, so no journal or WAL
file appears beside it and the file stays byte-identical; for PostgreSQL the session is
read-only. A database holding Laravel's `conversations` and `conversation_summaries` tables
(an Iris-style app database) is read in place (see `inspector.store.iris_db`).
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, delete, event, func, insert, inspect, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, OperationalError, SQLAlchemyError

from inspector.model import Message, Request, Summary, Thread, ThreadInfo, ToolCall, ToolDef
from inspector.store import convert
from inspector.store.cells import RowReader, raw_select
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
from inspector.store.sqlite_open import SqliteOpenError, SqliteSource, regular_file_problem

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "Store",
    "StoreError",
    "default_demo_path",
    "mask_url",
    "resolve_db_url",
    "sqlite_path",
]

ENV_VAR = "CONTEXT_INSPECTOR_DB"
APP_NAME = "context-inspector"


class StoreError(Exception):
    """A one-line, user-facing problem with a database (URL passwords already masked)."""


@contextmanager
def database_errors(url: str, action: str) -> Iterator[None]:
    """Turn a driver error (locked, missing table or column, bad value) into a one-line StoreError."""
    try:
        yield
    except StoreError:
        raise
    except (SQLAlchemyError, sqlite3.Error, OverflowError) as exc:
        raise StoreError(f"{mask_url(url)}: cannot {action} ({_first_line(exc)})") from None
    except (ValueError, TypeError) as exc:  # a row the model cannot hold (e.g. an unknown role)
        raise StoreError(f"{mask_url(url)}: cannot {action}: damaged row ({_first_line(exc)})") from None


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def mask_url(url: str) -> str:
    """The URL with any password replaced by ***; a URL that does not parse cleanly shows its scheme only."""
    if url_problem(url) is not None:
        return url.split("://", 1)[0] + "://***" if "://" in url else "***"
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def url_problem(url: str) -> str | None:
    """Why a database URL does not parse cleanly (checked before any connection), else None.

    More than one `@` before the host, an `@` or a space in the host, or a port that is not a
    number: SQLAlchemy would split such a URL somewhere inside the password and connect (or look
    up a host) named by part of it. Characters like `@ / :` in a user name or password must be
    percent-encoded (`%40 %2F %3A`)."""
    if "://" not in url or url.startswith("sqlite"):
        return None
    rest = url.split("://", 1)[1].split("?", 1)[0]
    if rest.count("@") > 1:
        return "more than one '@' (percent-encode '@' in a user name or password as %40)"
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return "not a database URL (characters such as @ / : in a user name or password must be percent-encoded)"
    host = parsed.host or ""
    if any(c in host for c in "@ \t/"):
        return "the host name holds '@', '/' or a space"
    return None


def default_demo_path() -> Path:
    """Where the demo database lives: platformdirs' user data dir (or $CONTEXT_INSPECTOR_DATA_DIR)."""
    from platformdirs import user_data_dir

    return Path(os.environ.get("CONTEXT_INSPECTOR_DATA_DIR") or user_data_dir(APP_NAME)) / "demo.sqlite"


def resolve_db_url(arg: str | None) -> str | None:
    """A SQLAlchemy URL from `--db` (URL or file path), else $CONTEXT_INSPECTOR_DB, else None (the demo)."""
    value = arg if arg else os.environ.get(ENV_VAR) or None
    if value is None:
        return None
    if "://" in value:
        return value
    return "sqlite:///" + str(Path(value).expanduser().resolve())


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL; None for other drivers and in-memory databases."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def _sqlite_write_engine(path: Path, wal: bool) -> Engine:
    engine = create_engine("sqlite:///" + str(path), connect_args={"check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=5000")
        if wal:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    return engine


CONNECT_TIMEOUT_ENV = "CONTEXT_INSPECTOR_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 10
"""Seconds a database server may take to answer a connection (libpq's connect_timeout)."""


def connect_timeout() -> int:
    try:
        return max(2, int(os.environ.get(CONNECT_TIMEOUT_ENV) or DEFAULT_CONNECT_TIMEOUT))
    except ValueError:
        return DEFAULT_CONNECT_TIMEOUT


def make_engine(url: str, *, read_only: bool, create: bool, wal: bool = False) -> Engine:
    """An engine for `url`, with the one-line errors of the brief for missing files and bad drivers."""
    return open_engine(url, read_only=read_only, create=create, wal=wal)[0]


def open_engine(url: str, *, read_only: bool, create: bool, wal: bool = False) -> tuple[Engine, SqliteSource | None]:
    """(engine, the SqliteSource of a file opened read-only, else None); see `make_engine`."""
    path = sqlite_path(url)
    if path is not None:
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, not a database file")
        problem = regular_file_problem(path)
        if problem:
            raise StoreError(problem)
        if not path.exists():
            if not create:
                raise StoreError(f"{path}: no such database file")
            path.parent.mkdir(parents=True, exist_ok=True)
        if read_only and not create:
            source = SqliteSource(path)
            try:
                return source.open(), source
            except SqliteOpenError as exc:
                source.close()
                raise StoreError(str(exc)) from None
            except OSError as exc:
                source.close()
                raise StoreError(f"{path}: cannot open database ({exc.strerror or exc})") from None
        return _sqlite_write_engine(path, wal), None
    problem = url_problem(url)
    if problem is not None:
        raise StoreError(f"{mask_url(url)}: malformed database URL: {problem}")
    try:
        parsed = make_url(url)
        options: dict[str, Any] = {}
        if read_only and not create and parsed.get_backend_name() == "postgresql":
            options["execution_options"] = {"postgresql_readonly": True}
        if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
            options["connect_args"] = {"connect_timeout": connect_timeout()}
        return create_engine(parsed, **options), None
    except NoSuchModuleError:
        raise StoreError(f"{mask_url(url)}: unknown database driver") from None
    except (ArgumentError, ValueError) as exc:
        raise StoreError(f"{mask_url(url)}: not a database URL ({type(exc).__name__})") from None
    except ImportError as exc:
        raise StoreError(f"{mask_url(url)}: database driver not installed ({exc})") from None


class Store:
    """Repository over the `ci_*` tables; returns `inspector.model` dataclasses only."""

    read_only: bool

    def __init__(self, engine: Engine, url: str, *, read_only: bool) -> None:
        self.engine = engine
        self.url = url
        self.read_only = read_only
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
        """Reopen a snapshot or immutable SQLite view when its files changed (live tailing)."""
        if self.sqlite_source is not None:
            try:
                engine = self.sqlite_source.refresh()
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
        """Open a database: a SQLAlchemy URL, a file path, or None for the demo database.

        `create=True` (write mode) creates the file and the tables when missing (`now` stamps
        the version row, for reproducible files); `wal=True` writes SQLite in WAL mode. A database
        holding Laravel `conversations` + `conversation_summaries` tables opens as an IrisStore.
        """
        if create:
            read_only = False
        url = resolve_db_url(url_or_path)
        if url is None:
            from inspector.demo import ensure_demo_db

            url = ensure_demo_db()
        engine, source = open_engine(url, read_only=read_only, create=create, wal=wal)
        try:
            try:
                tables = set(inspect(engine).get_table_names())
            except SQLAlchemyError as exc:
                raise StoreError(f"{mask_url(url)}: cannot open database ({_first_line(exc)})") from None
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
            return store
        from inspector.store.iris_db import IrisStore, is_iris_schema

        if is_iris_schema(tables):
            return IrisStore(engine, url)
        if not create:
            engine.dispose()
            if not tables:
                raise StoreError(f"{mask_url(url)}: empty database (import threads into it first)")
            raise StoreError(f"{mask_url(url)}: not a context-inspector database (no ci_schema_version table)")
        try:
            Base.metadata.create_all(engine)
            with engine.begin() as conn:
                conn.execute(insert(SchemaVersionRow).values(version=SCHEMA_VERSION, created_at=now or now_iso()))
        except (IntegrityError, OperationalError) as exc:
            # Another process (a second import of the same file) created the tables meanwhile: use them.
            if "already exists" not in str(exc) and "UNIQUE" not in str(exc) and "duplicate" not in str(exc):
                raise StoreError(f"{mask_url(url)}: cannot create the tables ({_first_line(exc)})") from None
            store = cls(engine, url, read_only=False)
            with database_errors(url, "read the schema version"):
                store._check_version()
            return store
        return cls(engine, url, read_only=False)

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            versions = [v for (v,) in conn.execute(select(SchemaVersionRow.version))]
        found = max(versions) if versions else None
        if found is not None and found < SCHEMA_VERSION and not self.read_only and all(
            v in UPGRADES for v in range(found, SCHEMA_VERSION)
        ):
            with self.engine.begin() as conn:
                for version in range(found, SCHEMA_VERSION):
                    for statement in UPGRADES[version]:
                        conn.execute(sql_text(statement))
                conn.execute(insert(SchemaVersionRow).values(version=SCHEMA_VERSION, created_at=now_iso()))
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
            query = (
                select(ThreadRow.id, ThreadRow.title, ThreadRow.source, ThreadRow.updated_at, m.c.n, r.c.n, s.c.n)
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
                        id=tid, title=_cell_text(title, tid, "title", self), source=_cell_text(source, tid, "source", self),
                        messages=nm or 0, requests=nr or 0, summaries=ns or 0,
                        updated_at=_cell_text(updated, tid, "updated_at", self) or None,
                        derived_requests=derived.get(tid, 0),
                    )
                    for tid, title, source, updated, nm, nr, ns in rows
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
        with database_errors(self.url, "load a thread"):
            where = mask_url(self.url)
            warn = self.warnings.append
            raw = self.engine.dialect.name == "sqlite"
            with self.engine.connect() as conn:
                def rows(row_cls: Any, *order: Any) -> list[dict[str, Any]]:
                    table = row_cls.__table__
                    reader = RowReader(table, where, warn, decoded=not raw)
                    query = raw_select(table, raw).where(table.c.thread_id == thread_id).order_by(*order)
                    return [reader.read(r, _row_label(thread_id, r)) for r in conn.execute(query).mappings()]

                head_table = ThreadRow.__table__
                query = raw_select(head_table, raw).where(head_table.c.id == thread_id)
                found = conn.execute(query).mappings().first()
                if found is None:
                    raise StoreError(f"no thread {thread_id!r} in {mask_url(self.url)}")
                head = RowReader(head_table, where, warn, decoded=not raw).read(found, f"id {thread_id}")
                calls: dict[int, list[ToolCall]] = {}
                for row in rows(ToolCallRow, ToolCallRow.message_seq, ToolCallRow.seq):
                    calls.setdefault(row["message_seq"], []).append(
                        ToolCall(id=row["id"] or "", name=row["name"] or "", arguments=row["arguments"])
                    )
                messages = tuple(
                    convert.message_from_row(row, tuple(calls.get(row["seq"], ())))
                    for row in rows(MessageRow, MessageRow.seq)
                )
                requests = tuple(convert.request_from_row(row) for row in rows(RequestRow, RequestRow.seq))
                summaries = tuple(
                    convert.summary_from_row(_summary_cells(row, where, thread_id, warn))
                    for row in rows(SummaryRow, SummaryRow.seq)
                )
            return Thread(
                id=head["id"],
                title=head["title"] or "",
                source=head["source"] or "native",
                system_prompt=head["system_prompt"] or "",
                tools=_tools(head["tools"] or (), where, thread_id, warn),
                messages=messages,
                requests=requests,
                summaries=summaries,
                window=head["window"],
                meta=head["meta"] or {},
            )

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
            raise StoreError(f"{mask_url(self.url)}: cannot save threads ({_first_line(failure)})") from None
        flags: list[bool | None] = []
        for thread in threads:
            try:
                with self.engine.begin() as conn:
                    flags.append(_write_thread(conn, thread, stamp))
            except (SQLAlchemyError, sqlite3.Error, OverflowError) as exc:
                flags.append(None)
                self.save_errors.append(f"thread {thread.id}: cannot be saved ({_first_line(exc)}); thread skipped")
        if all(flag is None for flag in flags):
            raise StoreError(f"{mask_url(self.url)}: cannot save threads ({_first_line(failure)})") from None
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


def _cell_text(value: Any, thread_id: Any, column: str, store: Store) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        store.warnings.append(f"{mask_url(store.url)}: ci_threads row (id {thread_id}) column {column}: "
                              "a BLOB, not text; decoded as UTF-8")
        return bytes(value).decode("utf-8", "replace")
    store.warnings.append(f"{mask_url(store.url)}: ci_threads row (id {thread_id}) column {column}: "
                          f"a {type(value).__name__}, not text; read as its text")
    return str(value)


def _row_label(thread_id: str, row: Any) -> str:
    seq = row.get("seq") if hasattr(row, "get") else None
    label = f"thread {thread_id}, seq {seq}"
    if "message_seq" in row:
        label = f"thread {thread_id}, message seq {row['message_seq']}, seq {seq}"
    return label


def _tools(raw: Any, where: str, thread_id: str, warn: Any) -> tuple[ToolDef, ...]:
    out: list[ToolDef] = []
    for index, item in enumerate(raw):
        try:
            out.append(convert.tool_def_from_dict(item))
        except (ValueError, TypeError) as exc:
            warn(f"{where}: ci_threads row (id {thread_id}) column tools: entry {index}: {exc}; entry dropped")
    return tuple(out)


def _summary_cells(row: dict[str, Any], where: str, thread_id: str, warn: Any) -> dict[str, Any]:
    """Emotional-marker entries that are not objects with a finite intensity are repaired (cells.py does the rest)."""
    markers = []
    for index, entry in enumerate(row.get("emotional_markers") or ()):
        label = f"{where}: ci_summaries row (thread {thread_id}, seq {row.get('seq')}) column emotional_markers"
        if not isinstance(entry, dict):
            warn(f"{label}: entry {index} is not an object; entry dropped")
            continue
        intensity = entry.get("intensity", 0.0)
        if isinstance(intensity, bool) or not isinstance(intensity, (int, float)) or not math.isfinite(intensity):
            warn(f"{label}: entry {index}: intensity {intensity!r} is not a finite number; set to 0")
            entry = {**entry, "intensity": 0.0}
        markers.append(entry)
    for key in ("id", "first_message_id", "last_message_id"):
        if row.get(key) is None:
            warn(f"{where}: ci_summaries row (thread {thread_id}, seq {row.get('seq')}) column {key}: empty; set to ''")
            row[key] = ""
    return {**row, "emotional_markers": markers}


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc)
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "database is locked" in line:
        line += "; another program holds a lock on it: try again when it is done"
    return line
