"""What every reader of another program's database shares (an app's Iris tables, opencode.db, a
LangGraph checkpointer): read in place, never written, no schema version of ours, a thread loaded
again only when its rows changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from sqlalchemy import Engine

from inspector.model import Thread, ThreadInfo, subagent_links
from inspector.store.engine import StoreError, database_errors, mask_url
from inspector.store.native import Store


class ReadInPlace(Store):
    """A foreign database behind the Store interface. Subclasses give `thread_ids()`, `_load(thread_id)`
    (the thread, repaired) and `_data_version(thread_id)` (what changes when its rows do)."""

    source: ClassVar[str] = "app"
    described: ClassVar[str] = "an app's database"

    def __init__(self, engine: Engine, url: str) -> None:
        super().__init__(engine, url, read_only=True)
        self._cache: dict[str, tuple[tuple, Thread]] = {}

    @property
    def kind(self) -> str:
        return self.source

    def _check_version(self) -> None:  # another program's database carries no version of ours
        return None

    def has_thread(self, thread_id: str) -> bool:
        return thread_id in self.thread_ids()

    def load_thread(self, thread_id: str) -> Thread:
        """The thread, repaired like an import; read again only when its rows changed."""
        with database_errors(self.url, "load a thread"):
            version = self._data_version(thread_id)
            hit = self._cache.get(thread_id)
            if hit is not None and hit[0] == version:
                return hit[1]
            thread = self._load(thread_id)
        self._cache[thread_id] = (version, thread)
        return thread

    def load_threads(self, thread_ids: Iterable[str]) -> dict[str, Thread | StoreError]:
        """Thread by thread (another program's schema: its tables are read as `load_thread` reads them)."""
        out: dict[str, Thread | StoreError] = {}
        for thread_id in dict.fromkeys(thread_ids):
            try:
                out[thread_id] = self.load_thread(thread_id)
            except StoreError as exc:
                out[thread_id] = exc
        return out

    def list_threads(self) -> list[ThreadInfo]:
        """Every thread, its counts those of the thread `load_thread` gives (each thread is read)."""
        infos = []
        for thread_id in self.thread_ids():
            try:
                t = self.load_thread(thread_id)
            except StoreError:
                continue
            infos.append(ThreadInfo(id=t.id, title=t.title, source=self.source, messages=len(t.messages),
                                    requests=len(t.requests), summaries=len(t.summaries),
                                    **subagent_links(t.meta)))
        return infos

    def data_version(self, thread_id: str) -> tuple:
        self.refresh()
        with database_errors(self.url, "read a thread"):
            return self._data_version(thread_id)

    def import_records(self) -> list[dict[str, Any]]:
        return []

    def save_thread(self, thread: Thread, *, now: str | None = None) -> bool:
        raise StoreError(f"{mask_url(self.url)}: {self.described} is read in place and never written")


__all__ = ["ReadInPlace"]
