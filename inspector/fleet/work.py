"""What one task of a fleet sweep does: read its batch of threads with one query per table and
replay every config on each (`run_batch`); the settings every task shares (`FleetSpec`)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.config import ConfigError
from inspector.model import Thread
from inspector.sweep import SweepRow, sweep_thread


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """A sweep's settings: where the threads are, the profile and overrides, the combinations
    (`sweep.combinations`), the compaction mode, and the config file's profile and values as the
    machine that started the sweep read them (`service.read_config_file`; a worker elsewhere has
    its own file, or none). Sent to every task (small, picklable)."""

    db_url: str
    profile: str | None
    overrides: Mapping[str, Any]
    combos: tuple[Mapping[str, Any], ...]
    compactions: str = "decide"
    file_profile: str | None = None
    file_values: Mapping[str, Any] = field(default_factory=dict)
    config_keys: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "combos", tuple(dict(c) for c in self.combos))
        object.__setattr__(self, "overrides", dict(self.overrides))
        object.__setattr__(self, "file_values", dict(self.file_values))
        object.__setattr__(self, "config_keys", tuple(self.config_key(c) for c in self.combos))

    def settings(self) -> dict[str, Any]:
        """What, beside the combination, decides a row: the profile, the overrides, the mode, the
        config file's values."""
        out = {"profile": self.profile, "overrides": dict(sorted(self.overrides.items())),
               "compactions": self.compactions}
        if self.file_profile is not None or self.file_values:
            out["config_file"] = {"profile": self.file_profile, "values": dict(sorted(self.file_values.items()))}
        return out

    def config_key(self, combo: Mapping[str, Any]) -> str:
        """The results store's key of one combination under these settings (a digest of both, as
        canonical JSON): a second run with the same settings finds the same keys."""
        text = json.dumps({**self.settings(), "config": dict(sorted(combo.items()))}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


GROUP_UNKNOWN = "unknown"


def thread_groups(thread: Thread) -> dict[str, str]:
    """The values `--group-by` splits by: the model most of the thread's requests name (ties: the
    first by name), the day of its first dated message or request, and its source (the agent that
    wrote it). `unknown` where the thread does not say."""
    models = Counter(r.model for r in thread.requests if r.model)
    model = min(models.items(), key=lambda kv: (-kv[1], kv[0]))[0] if models else GROUP_UNKNOWN
    dates = [m.created_at for m in thread.messages if m.created_at] or \
        [r.created_at for r in thread.requests if r.created_at]
    day = min(dates)[:10] if dates else GROUP_UNKNOWN
    return {"model": str(model), "day": day, "source": thread.source or GROUP_UNKNOWN}


@dataclass(frozen=True, slots=True)
class ThreadResult:
    """One thread's rows in a batch: (combination index, row) pairs, or a one-line error."""

    thread_id: str
    groups: Mapping[str, str]
    rows: tuple[tuple[int, SweepRow], ...] = ()
    error: str | None = None


Work = Sequence[tuple[str, Sequence[int]]]
"""A batch: (thread id, the indices of the combinations still to replay on it)."""


def run_batch(spec: FleetSpec, work: Work) -> list[ThreadResult]:
    """Every combination asked for on every thread of `work`, the threads read with one query per
    table. Runs in a worker (a pool's process or a Dask worker): imports only what it needs, and
    forgets the batch's threads at the end (a worker's memory is bounded by one batch)."""
    from inspector.service import forget_threads

    try:
        return _run_batch(spec, work)
    finally:
        forget_threads()


def _run_batch(spec: FleetSpec, work: Work) -> list[ThreadResult]:
    import inspector.importers  # noqa: F401 - registers the readers of agents' own databases (opencode.db)
    from inspector.service import load_config
    from inspector.store import Store, StoreError

    ids = [tid for tid, _ in work]
    try:
        with Store.open(spec.db_url, read_only=True) as store:
            threads = store.load_threads(ids)
    except StoreError as exc:
        line = _one_line(exc)
        return [ThreadResult(tid, {}, error=line) for tid in ids]
    out: list[ThreadResult] = []
    for thread_id, wanted in work:
        thread = threads.get(thread_id)
        if not isinstance(thread, Thread):
            out.append(ThreadResult(thread_id, {}, error=_one_line(thread or KeyError(thread_id))))
            continue
        groups = thread_groups(thread)
        try:
            base = load_config(spec.profile, spec.overrides, thread=thread,
                               file=(spec.file_profile, spec.file_values))
            rows = sweep_thread(thread, base, [spec.combos[i] for i in wanted], compactions=spec.compactions)
        except (KeyError, ConfigError, ValueError, RuntimeError) as exc:
            out.append(ThreadResult(thread_id, groups, error=_one_line(exc)))
            continue
        out.append(ThreadResult(thread_id, groups, tuple(zip(wanted, rows, strict=True))))
    return out


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or exc.__class__.__name__
