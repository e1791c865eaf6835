"""The results store of a fleet sweep (`sweep --all --out FILE|URL`): one row per (thread, config),
written as each batch finishes, so a run that is killed loses only the batches in flight and a second
run with the same settings skips the pairs already there.

Any SQLAlchemy database (a file path is SQLite). It holds one table, `sweep_results`; a database
holding other tables (the threads' own database, say) is refused: a sweep never writes into the
database it reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    insert,
    inspect,
    select,
    tuple_,
)
from sqlalchemy.exc import SQLAlchemyError

from inspector.fleet.work import ThreadResult
from inspector.store import StoreError, make_engine, mask_url, now_iso, resolve_db_url, sqlite_path
from inspector.sweep import SweepRow

TABLE = "sweep_results"
_meta = MetaData()
results_table = Table(
    TABLE, _meta,
    Column("thread_id", String(255), primary_key=True),
    Column("config_key", String(64), primary_key=True),
    Column("config", Text, nullable=False),  # the combination, JSON
    Column("settings", Text, nullable=False),  # profile, overrides, compaction mode, JSON
    Column("model", Text), Column("day", Text), Column("source", Text),
    Column("requests", Integer, nullable=False), Column("compactions", Integer, nullable=False),
    Column("back_to_back", Integer, nullable=False), Column("failures", Integer, nullable=False),
    Column("prompt_tokens", Integer, nullable=False), Column("cache_read_tokens", Integer, nullable=False),
    Column("cache_breaks", Integer, nullable=False),
    Column("cost", Float(53)), Column("summarization_cost", Float(53)),  # dollars; NULL: unknown
    Column("unpriced", Integer, nullable=False),
    Column("facts_lost", Integer),
    Column("baseline", Boolean, nullable=False),
    Column("finished_at", Text, nullable=False),
)


@dataclass(frozen=True, slots=True)
class StoredRow:
    thread_id: str
    config_key: str
    groups: dict[str, str]
    row: SweepRow


class ResultsStore:
    """`open(target, source_url)`: the results store at `target` (path or URL), created if missing."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url

    @classmethod
    def open(cls, target: str, *, source_url: str | None = None) -> ResultsStore:
        url = resolve_db_url(target)
        assert url is not None
        if source_url is not None and _same_database(url, source_url):
            raise StoreError(f"--out {mask_url(url)} is the database being swept: give another file")
        engine = make_engine(url, read_only=False, create=True)
        try:
            tables = set(inspect(engine).get_table_names())
            others = sorted(tables - {TABLE})
            if others:
                raise StoreError(f"--out {mask_url(url)} holds other tables ({', '.join(others[:3])}"
                                 f"{', ...' if len(others) > 3 else ''}): not a sweep results store; give another file")
            _meta.create_all(engine)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"--out {mask_url(url)}: {_first_line(exc)}") from None
        except StoreError:
            engine.dispose()
            raise
        return cls(engine, url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, thread_ids: Sequence[str], config_keys: Sequence[str], chunk: int = 500) -> Iterator[StoredRow]:
        """The stored rows among these threads and keys (chunks of threads per query)."""
        keys = list(dict.fromkeys(config_keys))
        t = results_table
        try:
            with self.engine.connect() as conn:
                for start in range(0, len(thread_ids), chunk):
                    ids = list(thread_ids[start:start + chunk])
                    query = select(t).where(t.c.thread_id.in_(ids), t.c.config_key.in_(keys))
                    for r in conn.execute(query).mappings():
                        yield StoredRow(r["thread_id"], r["config_key"],
                                        {"model": r["model"], "day": r["day"], "source": r["source"]},
                                        SweepRow(json.loads(r["config"]), 1, r["requests"], r["compactions"],
                                                 r["failures"], r["prompt_tokens"], r["cache_read_tokens"],
                                                 r["cache_breaks"], r["cost"], r["facts_lost"], bool(r["baseline"]),
                                                 r["summarization_cost"], r["back_to_back"], r["unpriced"]))
        except SQLAlchemyError as exc:
            raise StoreError(f"--out {mask_url(self.url)}: {_first_line(exc)}") from None

    def write(self, results: Iterable[ThreadResult], config_keys: Sequence[str], settings: dict[str, Any]) -> int:
        """One batch's rows in one transaction (a pair already there is replaced); how many."""
        stamp = now_iso()
        settings_json = json.dumps(settings, sort_keys=True, default=str)
        records = []
        for result in results:
            for index, row in result.rows:
                records.append({
                    "thread_id": result.thread_id, "config_key": config_keys[index],
                    "config": json.dumps(row.config, sort_keys=True, default=str), "settings": settings_json,
                    "model": result.groups.get("model"), "day": result.groups.get("day"),
                    "source": result.groups.get("source"), "requests": row.requests,
                    "compactions": row.compactions, "back_to_back": row.back_to_back, "failures": row.failures,
                    "prompt_tokens": row.prompt_tokens, "cache_read_tokens": row.cache_read_tokens,
                    "cache_breaks": row.cache_breaks, "cost": row.cost, "summarization_cost": row.summarization_cost,
                    "unpriced": row.unpriced_threads, "facts_lost": row.facts_lost, "baseline": row.baseline,
                    "finished_at": stamp})
        if not records:
            return 0
        t = results_table
        try:
            with self.engine.begin() as conn:
                pairs = [(r["thread_id"], r["config_key"]) for r in records]
                conn.execute(t.delete().where(tuple_(t.c.thread_id, t.c.config_key).in_(pairs)))
                conn.execute(insert(t), records)
        except SQLAlchemyError as exc:
            raise StoreError(f"--out {mask_url(self.url)}: cannot write results: {_first_line(exc)}") from None
        return len(records)


def _same_database(a: str, b: str) -> bool:
    pa, pb = sqlite_path(a), sqlite_path(b)
    if pa is not None and pb is not None:
        try:
            return pa.resolve() == pb.resolve() or (pa.exists() and pb.exists() and pa.samefile(pb))
        except OSError:
            return False
    return a == b


def _first_line(exc: BaseException) -> str:
    from inspector.store.engine import first_line

    return first_line(exc)
