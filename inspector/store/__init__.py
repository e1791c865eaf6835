"""The thread store: any SQLAlchemy database (or a file path), returning frozen model dataclasses.

`Store.open` is the one way in. Viewing and simulating open read-only (the default): for
SQLite the file is opened with `mode=ro`, `immutable=1` or as a private snapshot copy (WAL-mode
files, hot journals: `inspector.store.sqlite_open`), always with `PRAGMA query_only=ON`, so
nothing is created or changed beside it and the file stays byte-identical; for PostgreSQL the
session is read-only. A database holding Laravel's `conversations` and `conversation_summaries` tables
(an Iris-style app database) is read in place (see `inspector.store.iris_db`).
"""

from inspector.store.engine import (
    ENV_VAR,
    StoreError,
    database_errors,
    make_engine,
    mask_url,
    now_iso,
    resolve_db_url,
    sqlite_path,
    sqlite_url,
)
from inspector.store.iris_db import IrisStore, is_iris_schema
from inspector.store.native import Store
from inspector.store.schema import SCHEMA_VERSION

Store.reads_in_place(is_iris_schema, IrisStore)

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "Store",
    "StoreError",
    "database_errors",
    "make_engine",
    "mask_url",
    "now_iso",
    "resolve_db_url",
    "sqlite_path",
    "sqlite_url",
]
