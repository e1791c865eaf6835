"""Where the app's threads come from: the store, or an in-memory source (tests, a single imported file)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from inspector.model import Thread, ThreadInfo, effective_requests, subagent_links


@runtime_checkable
class ThreadSource(Protocol):
    def list_threads(self) -> list[ThreadInfo]: ...

    def load_thread(self, thread_id: str) -> Thread: ...

    def data_version(self, thread_id: str) -> tuple: ...


def thread_info(thread: Thread) -> ThreadInfo:
    return ThreadInfo(
        id=thread.id,
        title=thread.title,
        source=thread.source,
        messages=len(thread.messages),
        requests=len(thread.requests) or len(effective_requests(thread)),
        summaries=len(thread.summaries),
        import_gaps=thread.meta.get("import_gaps") if isinstance(thread.meta.get("import_gaps"), dict) else None,
        **subagent_links(thread.meta),
    )


class MemorySource:
    """Threads held in memory; `replace` swaps one in (as a live database would gain rows)."""

    def __init__(self, threads: Iterable[Thread]) -> None:
        self.threads: dict[str, Thread] = {t.id: t for t in threads}

    def list_threads(self) -> list[ThreadInfo]:
        return [thread_info(t) for t in self.threads.values()]

    def load_thread(self, thread_id: str) -> Thread:
        try:
            return self.threads[thread_id]
        except KeyError:
            raise KeyError(f"no thread {thread_id!r}") from None

    def data_version(self, thread_id: str) -> tuple:
        t = self.threads.get(thread_id)
        if t is None:
            return ()
        return (len(t.messages), len(t.requests), len(t.summaries))

    def replace(self, thread: Thread) -> None:
        self.threads[thread.id] = thread
