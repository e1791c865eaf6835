"""Where a fleet sweep's batches run: `local`, a process pool on this machine, or `dask`, a Dask
cluster (`distributed`): a local one it starts itself, or an existing one at a scheduler's address
(`dask scheduler` and `dask worker`, or any deployment that gives one).

An executor takes a function and its batches and yields each batch's result as it finishes; it
says where it ran (`info`: kind, scheduler, workers) and, for Dask, the dashboard's address.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, Protocol

EXECUTORS = ("local", "dask")

DASK_EXTRA = 'pip install "context-inspector[dask]"'


class DaskUnavailable(RuntimeError):
    """`--executor dask` without the `dask` extra installed (one line: what to install)."""


class Executor(Protocol):
    kind: str
    dashboard: str | None

    def info(self) -> dict[str, Any]: ...

    def run(self, fn: Callable[..., Any], first: Any, batches: Sequence[Any],
            stop: Callable[[], bool] | None = None) -> Iterator[Any]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """A process pool of `jobs` workers (in this process when `jobs` is 1)."""

    kind = "local"
    dashboard: str | None = None

    def __init__(self, jobs: int = 2) -> None:
        self.jobs = max(1, jobs)

    def info(self) -> dict[str, Any]:
        return {"kind": self.kind, "scheduler": None, "workers": self.jobs}

    def run(self, fn: Callable[..., Any], first: Any, batches: Sequence[Any],
            stop: Callable[[], bool] | None = None) -> Iterator[Any]:
        if self.jobs <= 1 or len(batches) <= 1:
            for batch in batches:
                if stop is not None and stop():
                    return
                yield fn(first, batch)
            return
        from inspector.sweep import default_signals

        with ProcessPoolExecutor(max_workers=min(self.jobs, len(batches)), initializer=default_signals) as pool:
            futures: list[Future] = [pool.submit(fn, first, batch) for batch in batches]
            try:
                for future in as_completed(futures):
                    yield future.result()
                    if stop is not None and stop():
                        return
            finally:
                for future in futures:
                    future.cancel()

    def close(self) -> None:
        pass


def _dask():
    try:
        import distributed
    except ImportError:
        raise DaskUnavailable(f"--executor dask needs Dask: {DASK_EXTRA}") from None
    return distributed


class DaskExecutor:
    """A Dask client: of an existing cluster at `scheduler` (tcp://HOST:PORT), or of a local cluster
    of `workers` single-threaded worker processes started here (and stopped by `close`)."""

    kind = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *,
                 timeout: float = 30, memory_limit: str | None = None) -> None:
        distributed = _dask()
        import logging

        self._cluster = None
        if scheduler is None:
            n = workers or os.cpu_count() or 1
            self._cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, silence_logs=logging.ERROR,
                dashboard_address=":0" if _has_dashboard() else None,
                memory_limit=memory_limit or "auto")
            self.client = distributed.Client(self._cluster, timeout=timeout)
        else:
            try:
                self.client = distributed.Client(scheduler, timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise RuntimeError(f"--scheduler {scheduler}: cannot reach the Dask scheduler "
                                   f"({' '.join(str(exc).split()) or type(exc).__name__})") from None
            if workers:
                self.client.wait_for_workers(workers, timeout=timeout)
        self.scheduler: str = self.client.scheduler.address
        link = self.client.dashboard_link if self._cluster is None or _has_dashboard() else None
        self.dashboard: str | None = link or None

    def workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def info(self) -> dict[str, Any]:
        return {"kind": self.kind, "scheduler": self.scheduler, "workers": self.workers()}

    def run(self, fn: Callable[..., Any], first: Any, batches: Sequence[Any],
            stop: Callable[[], bool] | None = None) -> Iterator[Any]:
        distributed = _dask()
        if not batches:
            return
        spec = self.client.scatter(first, broadcast=True, hash=False)  # a key of its own per run
        futures = self.client.map(fn, [spec] * len(batches), list(batches), pure=False)
        try:
            for future in distributed.as_completed(futures):
                yield future.result()
                future.release()
                if stop is not None and stop():
                    return
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def _has_dashboard() -> bool:
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return False
    return True


def make_executor(kind: str, *, jobs: int = 2, scheduler: str | None = None) -> Executor:
    """`local` (a pool of `jobs` processes) or `dask` (a local cluster of `jobs` workers, or the
    cluster at `scheduler`); DaskUnavailable, one line, when Dask is not installed."""
    if scheduler is not None and kind != "dask":
        raise ValueError("--scheduler needs --executor dask")
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(scheduler, None if scheduler else jobs)
    raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}: got {kind!r}")
