"""opencode's own SQLite store (`opencode.db` under `$XDG_DATA_HOME/opencode`), read in place and
read-only like an Iris database: `context-inspector --db ~/.local/share/opencode/opencode.db`.

Tables as opencode declares them (anomalyco/opencode `packages/opencode/src/session/session.sql.ts`,
commit 063e8306): `session` (id, parent_id, slug, directory, title, version, time_created, ...),
`message` (id, session_id, time_created, data: the message's info as JSON without id and
sessionID), `part` (id, message_id, session_id, data: the part as JSON). One thread per session;
each session's messages in `(time_created, id)` order with their parts in `id` order (as opencode's
own `hydrate` reads them) become a thread through the export's reader
(`inspector.importers.opencode.thread_from_records`). Nothing is ever written.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from sqlalchemy import Engine, MetaData, func, select

from inspector.importers.opencode import thread_from_records
from inspector.model import Thread
from inspector.store.engine import StoreError, database_errors, mask_url
from inspector.store.in_place import ReadInPlace
from inspector.store.native import Store
from inspector.thread_repair import sanitize_thread

TABLES = ("session", "message", "part")


def is_opencode_schema(tables: set[str]) -> bool:
    return {t.lower() for t in tables} >= set(TABLES)


def _data(raw: Any) -> dict[str, Any]:
    if isinstance(raw, (bytes, str)):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return dict(raw) if isinstance(raw, dict) else {}


class OpencodeStore(ReadInPlace):
    """Read-only view of an `opencode.db`; the same interface as Store."""

    source = "opencode"
    described = "an opencode database"

    def __init__(self, engine: Engine, url: str) -> None:
        super().__init__(engine, url)
        metadata = MetaData()
        try:
            metadata.reflect(engine, only=lambda name, _m: name.lower() in TABLES)
        except Exception as exc:  # reflection errors vary by driver
            raise StoreError(f"{mask_url(url)}: cannot read the opencode tables ({exc})") from None
        tables = {name.lower(): table for name, table in metadata.tables.items()}
        self.session, self.message, self.part = (tables[t] for t in TABLES)
        for table, needed in ((self.session, ("id",)), (self.message, ("id", "session_id", "data")),
                              (self.part, ("id", "message_id", "data"))):
            missing = [c for c in needed if c not in table.c]
            if missing:
                raise StoreError(f"{mask_url(url)}: opencode table {table.name} has no column {missing[0]}")

    def _session_order(self) -> list[Any]:
        c = self.session.c
        return [col for col in (c.get("time_created"), c["id"]) if col is not None]

    def thread_ids(self) -> list[str]:
        with database_errors(self.url, "list threads"), self.engine.connect() as conn:
            return [str(v) for (v,) in conn.execute(select(self.session.c["id"]).order_by(*self._session_order()))]

    def _load(self, thread_id: str) -> Thread:
        c = self.session.c
        with self.engine.connect() as conn:
            row = conn.execute(select(self.session).where(c["id"] == thread_id)).mappings().first()
            if row is None:
                raise StoreError(f"no thread {thread_id!r} in {mask_url(self.url)}")
            m = self.message.c
            order = [col for col in (m.get("time_created"), m["id"]) if col is not None]
            messages = conn.execute(select(m["id"], m["data"]).where(m["session_id"] == thread_id)
                                    .order_by(*order)).all()
            p = self.part.c
            ids = [mid for mid, _ in messages]
            parts: dict[str, list[dict[str, Any]]] = {}
            for start in range(0, len(ids), 500):  # bounded IN lists
                chunk = ids[start:start + 500]
                for pid, mid, data in conn.execute(select(p["id"], p["message_id"], p["data"])
                                                   .where(p["message_id"].in_(chunk)).order_by(p["message_id"], p["id"])):
                    parts.setdefault(str(mid), []).append({**_data(data), "id": str(pid)})
        session = {"id": str(row["id"]), "title": row.get("title"), "version": row.get("version"),
                   "directory": row.get("directory"), "parentID": row.get("parent_id"),
                   "projectID": row.get("project_id"), "slug": row.get("slug")}
        records = [({**_data(data), "id": str(mid), "sessionID": thread_id}, parts.get(str(mid), []))
                   for mid, data in messages]
        where = f"{mask_url(self.url)}: session {thread_id}"
        result = thread_from_records({k: v for k, v in session.items() if v is not None}, records, where)
        if result.threads:
            thread = result.threads[0]
        else:
            thread = Thread(id=thread_id, title=str(row.get("title") or thread_id), source="opencode")
        fixed, warnings = sanitize_thread(thread, mask_url(self.url))
        warnings[:0] = [line for line in result.skipped if "no messages found" not in line]
        if warnings:
            fixed = dataclasses.replace(fixed, meta={**fixed.meta, "load_warnings": warnings})
        return fixed

    def _data_version(self, thread_id: str) -> tuple:
        m, p = self.message.c, self.part.c
        with self.engine.connect() as conn:
            out: list[Any] = []
            for table, cols, column in ((self.message, m, "session_id"), (self.part, p, "session_id")):
                if column not in cols:
                    continue
                stamp = cols.get("time_updated")
                query = select(func.count(), func.max(stamp) if stamp is not None else func.count())
                out.extend(conn.execute(query.select_from(table).where(cols[column] == thread_id)).one())
        return tuple(out)


Store.reads_in_place(is_opencode_schema, OpencodeStore)
