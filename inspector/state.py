"""The inspector's own state database: caches that make a replay never pay twice.

SQLite in the data directory (`inspector.paths.data_dir()`), never the database being
inspected. Two tables:
- `summary_cache`: structured summaries written by an API summarizer, by cache key;
- `token_cache`: token counts by (tokenizer, sha256 of the text); the text itself is not stored.
No secret is ever stored here.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspector.paths import data_dir

STATE_FILE = "state.sqlite3"
SCHEMA_VERSION = 1
_CHUNK = 500  # SQLite variables per IN (...) query

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS summary_cache (
    cache_key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    fields TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS token_cache (
    tokenizer TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (tokenizer, text_sha256)
) WITHOUT ROWID;
"""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def default_state_path() -> Path:
    return data_dir() / STATE_FILE


PROBLEMS: list[str] = []
"""One line per state database that could not be used in this process (the replay notices show them)."""


class StateDB:
    """One SQLite file shared by the process's threads (one connection behind a lock)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.problem: str | None = None
        """Why the file could not be used (damaged, unwritable): the caches then live in memory."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._open(str(self.path))
        except (sqlite3.Error, OSError) as exc:
            # A cache is an optimisation: a damaged or unwritable file never stops a replay. The file is
            # left as it is (delete it to start afresh).
            self.problem = (f"{self.path}: state database unusable ({' '.join(str(exc).split())}); caches kept "
                            "in memory for this run (delete the file to start afresh)")
            PROBLEMS.append(self.problem)
            self._conn = self._open(":memory:")

    def _open(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, check_same_thread=False, timeout=10.0)
        try:
            with self._lock:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
                conn.commit()
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    _shared: dict[Path, StateDB] = {}
    _shared_lock = threading.Lock()

    @classmethod
    def default(cls) -> StateDB:
        """The state database of the current data directory (one instance per path per process)."""
        path = default_state_path().resolve()
        with cls._shared_lock:
            db = cls._shared.get(path)
            if db is None or db._conn is None:
                db = cls._shared[path] = cls(path)
            return db

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    # -- summaries -------------------------------------------------------------------------
    def get_summary(self, cache_key: str) -> dict[str, Any] | None:
        """The cached fields, or None (also when the row is damaged: the summary is then asked for again)."""
        try:
            with self._lock:
                row = self._conn.execute("SELECT fields FROM summary_cache WHERE cache_key = ?", (cache_key,)).fetchone()
            fields = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError, TypeError):
            return None
        return fields if isinstance(fields, dict) else None

    def put_summary(self, cache_key: str, model: str, fields: dict[str, Any]) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        payload = json.dumps(fields, ensure_ascii=False, sort_keys=True)
        with self._lock, self._damage("store a summary"):
            self._conn.execute(
                "INSERT OR REPLACE INTO summary_cache (cache_key, model, fields, created_at) VALUES (?, ?, ?, ?)",
                (cache_key, model, payload, stamp),
            )
            self._conn.commit()

    @contextmanager
    def _damage(self, action: str) -> Iterator[None]:
        """A damaged page met later than the open: the cache write or read is skipped, once said."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            line = f"{self.path}: state database damaged, cannot {action} ({exc}); continuing without that cache"
            if line not in PROBLEMS:
                PROBLEMS.append(line)

    def summary_count(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM summary_cache").fetchone()[0]

    # -- token counts ----------------------------------------------------------------------
    def token_cache(self) -> TokenCountCache:
        """The `inspector.tokens.PersistentCache` backed by this database."""
        return TokenCountCache(self)

    def get_token_counts(self, tokenizer: str, digests: Iterable[str]) -> dict[str, int]:
        digests = list(digests)
        found: dict[str, int] = {}
        with self._lock, self._damage("read token counts"):
            for start in range(0, len(digests), _CHUNK):
                chunk = digests[start:start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT text_sha256, tokens FROM token_cache WHERE tokenizer = ? AND text_sha256 IN ({marks})",
                    (tokenizer, *chunk),
                )
                found.update(rows.fetchall())
        return found

    def put_token_counts(self, tokenizer: str, counts: dict[str, int]) -> None:
        with self._lock, self._damage("store token counts"):
            self._conn.executemany(
                "INSERT OR REPLACE INTO token_cache (tokenizer, text_sha256, tokens) VALUES (?, ?, ?)",
                [(tokenizer, digest, int(tokens)) for digest, tokens in counts.items()],
            )
            self._conn.commit()


class TokenCountCache:
    """Token counts keyed by (tokenizer, sha256 of text): `get_many` / `put_many` speak texts."""

    def __init__(self, db: StateDB) -> None:
        self._db = db

    def get_many(self, tokenizer: str, texts: list[str]) -> dict[str, int]:
        by_digest: dict[str, list[str]] = {}
        for text in texts:
            by_digest.setdefault(text_sha256(text), []).append(text)
        found = self._db.get_token_counts(tokenizer, by_digest)
        return {text: tokens for digest, tokens in found.items() for text in by_digest[digest]}

    def put_many(self, tokenizer: str, counts: dict[str, int]) -> None:
        if counts:
            self._db.put_token_counts(tokenizer, {text_sha256(t): n for t, n in counts.items()})
