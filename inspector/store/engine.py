"""Reaching a database: URLs and paths, engines (SQLite read-only by `mode=ro` and
`query_only`, PostgreSQL read-only sessions), and the one-line `StoreError` every driver
problem becomes. Shared by the native store and the Iris reader."""

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
from sqlalchemy.pool import QueuePool

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
    """The URL with any password replaced by ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def resolve_db_url(arg: str | None) -> str | None:
    """A SQLAlchemy URL from `--db` (URL or file path), else $CONTEXT_INSPECTOR_DB, else None
    (the caller then opens the demo database, `inspector.demo.ensure_demo_db`)."""
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
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def _sqlite_engine(path: Path, read_only: bool, wal: bool) -> Engine:
    if read_only:
        escaped = path.resolve().as_posix().replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        uri = "file:" + escaped + "?mode=ro"

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            conn.execute("PRAGMA query_only=ON")
            return conn

        # "sqlite://" would pick SingletonThreadPool, which closes (and garbage-collects) one thread's
        # connection from another: with the app's worker threads that crashed the interpreter. A queue pool
        # hands each connection to one thread at a time.
        return create_engine("sqlite://", creator=connect, poolclass=QueuePool)
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


def make_engine(url: str, *, read_only: bool, create: bool, wal: bool = False) -> Engine:
    """An engine for `url`, with the one-line errors of the brief for missing files and bad drivers."""
    path = sqlite_path(url)
    if path is not None:
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, not a database file")
        if not path.exists():
            if not create:
                raise StoreError(f"{path}: no such database file")
            path.parent.mkdir(parents=True, exist_ok=True)
        return _sqlite_engine(path, read_only and not create, wal)
    try:
        parsed = make_url(url)
        options: dict[str, Any] = {}
        if read_only and not create and parsed.get_backend_name() == "postgresql":
            options["execution_options"] = {"postgresql_readonly": True}
        return create_engine(parsed, **options)
    except NoSuchModuleError:
        raise StoreError(f"{mask_url(url)}: unknown database driver") from None
    except (ArgumentError, ValueError) as exc:
        raise StoreError(f"{mask_url(url)}: not a database URL ({exc})") from None
    except ImportError as exc:
        raise StoreError(f"{mask_url(url)}: database driver not installed ({exc})") from None


def first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc)
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "database is locked" in line:
        line += "; another program holds a lock on it: try again when it is done"
    return line
