"""Reaching a database: URLs and paths (a URL that does not parse cleanly is refused before any
connection), engines (SQLite read-only through `inspector.store.sqlite_open`: `mode=ro`,
`immutable=1` or a private snapshot, always `query_only`; PostgreSQL read-only sessions with a
connect timeout), and the one-line `StoreError` every driver problem becomes. Shared by the
native store and the Iris reader."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from inspector.store import sqlite_open
from inspector.store.sqlite_open import SqliteOpenError, SqliteSource, regular_file_problem

ENV_VAR = "CONTEXT_INSPECTOR_DB"


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
        raise StoreError(f"{mask_url(url)}: cannot {action} ({first_line(exc)})") from None
    except (ValueError, TypeError) as exc:  # a row the model cannot hold (e.g. an unknown role)
        raise StoreError(f"{mask_url(url)}: cannot {action}: damaged row ({first_line(exc)})") from None


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


def resolve_db_url(arg: str | None) -> str | None:
    """A SQLAlchemy URL from `--db` (URL or file path), else $CONTEXT_INSPECTOR_DB, else None
    (the caller then opens the demo database, `inspector.demo.ensure_demo_db`)."""
    value = arg if arg else os.environ.get(ENV_VAR) or None
    if value is None:
        return None
    if "://" in value:
        return value
    return sqlite_url(Path(value).expanduser().resolve())


def sqlite_url(path: Path | str) -> str:
    """The SQLite URL of a file path, `%`, `?` and `#` percent-encoded: SQLAlchemy reads a URL's path
    percent-decoded and cut at `?` (`--db 'a?b.sqlite'` would open `./a`, `%41.sqlite` `./A.sqlite`)."""
    text = str(path).replace("%", "%25").replace("?", "%3F").replace("#", "%23")
    return "sqlite:///" + text


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL; None for other drivers and in-memory databases."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


SQLITE_PRAGMAS: list[str] = []
"""Extra PRAGMAs run on every write connection (tests use `max_page_count` to fill the disk)."""


def _sqlite_write_engine(path: Path, wal: bool) -> Engine:
    """A write engine whose transactions are SQLAlchemy's own, begun `BEGIN IMMEDIATE`: the write lock
    is taken (or waited for) at the start, so two imports never interleave, and SAVEPOINTs work (an
    import commits each file in a savepoint of its own; pysqlite's implicit transactions break them)."""
    engine = create_engine(sqlite_url(path), connect_args={"check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(sqlite_open.BUSY_TIMEOUT_S * 1000)}")
        if wal:
            cursor.execute("PRAGMA journal_mode=WAL")
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


CONNECT_TIMEOUT_ENV = "CONTEXT_INSPECTOR_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 10
"""Seconds a database server may take to answer a connection (libpq's connect_timeout)."""


def connect_timeout() -> int:
    """`$CONTEXT_INSPECTOR_CONNECT_TIMEOUT` (whole seconds, at least 2) or 10; StoreError naming the variable
    when it is set to anything else."""
    value = os.environ.get(CONNECT_TIMEOUT_ENV)
    if value is None or not value.strip():
        return DEFAULT_CONNECT_TIMEOUT
    try:
        seconds = int(value)
    except ValueError:
        seconds = 0
    if seconds < 1:
        raise StoreError(f"{CONNECT_TIMEOUT_ENV} must be a whole number of seconds (1 or more): got {value!r}")
    return max(2, seconds)


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


def first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc)
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "database is locked" in line:
        line += "; another program holds a lock on it: try again when it is done"
    return line
