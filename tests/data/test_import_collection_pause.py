"""An import runs with the collector paused (`gcpolicy.CollectionPause`): no automatic collection walks
its records and rows while it runs; each commit collects what was made since (so a reference cycle the
run makes is gone at the next commit); the rows are the ones the run writes with the collector on; and
the collector is left as the run found it (off where the caller had turned it off, never paused where
the long-lived objects are frozen)."""

from __future__ import annotations

import gc
import os
import weakref
from unittest import mock

from inspector import gcpolicy, importers
from inspector.importers import import_paths
from inspector.store import Store
from tests.data.test_bulk_rows import store_pair, table_rows
from tests.paths import REAL

FILES = sorted(REAL.glob("*.jsonl"))


def _collections(run) -> list[tuple[int, bool]]:
    """(generation, whether the collector was on) of every collection made while `run()` runs with the
    collector paused (between `CollectionPause.__enter__` and `__exit__`: an import's files, not its set-up)."""
    seen: list[tuple[int, bool]] = []
    window = [False]
    enter, leave = gcpolicy.CollectionPause.__enter__, gcpolicy.CollectionPause.__exit__

    def entered(self):
        got = enter(self)
        window[0] = True
        return got

    def left(self, *exc):
        window[0] = False
        return leave(self, *exc)

    def callback(phase, info):
        if phase == "start" and window[0]:
            seen.append((info["generation"], gc.isenabled()))

    gc.collect()
    gc.callbacks.append(callback)
    try:
        with mock.patch.object(gcpolicy.CollectionPause, "__enter__", entered), \
                mock.patch.object(gcpolicy.CollectionPause, "__exit__", left):
            run()
    finally:
        gc.callbacks.remove(callback)
    return seen


def test_an_import_collects_only_at_its_commits_and_turns_the_collector_back_on(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path}/a.sqlite", read_only=False, create=True, now="t0")
    commits: list[bool] = []
    commit = importers._Run.commit

    def counted(self):
        commits.append(True)
        return commit(self)

    try:
        with mock.patch.object(importers._Run, "commit", counted):
            seen = _collections(lambda: import_paths(FILES, store, jobs=1))
    finally:
        store.close()
    assert gc.isenabled()
    # only the commits' own collections (of the youngest generation, the collector off): none by itself
    assert seen and all(generation == 0 and not enabled for generation, enabled in seen)
    assert len(seen) == len(commits)


def test_the_same_import_with_the_collector_on_collects_by_itself(tmp_path):
    """The companion: without the pause (the objects frozen, as the app settles them) the same import
    is collected automatically, many times (what the pause saves)."""
    store = Store.open(f"sqlite:///{tmp_path}/a.sqlite", read_only=False, create=True, now="t0")
    try:
        with mock.patch.object(gcpolicy, "settled", lambda: True):
            seen = _collections(lambda: import_paths(FILES, store, jobs=1))
    finally:
        store.close()
    assert sum(1 for _, enabled in seen if enabled) > 20


def test_the_rows_are_the_same_with_and_without_the_pause(tmp_path):
    with store_pair("sqlite", tmp_path) as (paused, collected):
        got = import_paths(FILES, paused, now="t1")
        with mock.patch.object(gcpolicy, "settled", lambda: True):
            expected = import_paths(FILES, collected, now="t1")
        assert got == expected and len(got.threads) >= 10 and not got.errors
        assert table_rows(paused.url) == table_rows(collected.url)


def test_a_reference_cycle_made_during_a_run_is_collected_at_its_next_commit(tmp_path):
    class Node:
        pass

    refs: list[weakref.ref] = []
    alive_after_commit: list[bool] = []
    save_one, commit = importers._save_one, importers._Run.commit

    def cyclic_save(parsed, path, run):
        node = Node()
        node.self = node  # a cycle: only a collection frees it
        refs.append(weakref.ref(node))
        return save_one(parsed, path, run)

    def checked_commit(self):
        done = commit(self)
        alive_after_commit.append(any(r() is not None for r in refs))
        return done

    store = Store.open(f"sqlite:///{tmp_path}/a.sqlite", read_only=False, create=True, now="t0")
    try:
        with mock.patch.object(importers, "_save_one", cyclic_save), \
                mock.patch.object(importers._Run, "commit", checked_commit):
            import_paths(FILES[:3], store, jobs=1)
    finally:
        store.close()
    assert len(refs) == 3 and alive_after_commit == [False]


def test_the_collector_is_left_as_the_caller_had_it(tmp_path):
    states: list[bool] = []
    save_one = importers._save_one

    def watched(parsed, path, run):
        states.append(gc.isenabled())
        return save_one(parsed, path, run)

    store = Store.open(f"sqlite:///{tmp_path}/a.sqlite", read_only=False, create=True, now="t0")
    gc.disable()
    try:
        with mock.patch.object(importers, "_save_one", watched):
            import_paths(FILES[:2], store, jobs=1)
        assert not gc.isenabled()  # the caller's choice stays
    finally:
        gc.enable()
        store.close()
    with mock.patch.object(gcpolicy, "settled", lambda: True), mock.patch.object(importers, "_save_one", watched):
        store = Store.open(f"sqlite:///{tmp_path}/b.sqlite", read_only=False, create=True, now="t0")
        try:
            import_paths(FILES[:2], store, jobs=1)
        finally:
            store.close()
    assert states == [False, False, True, True]  # off (the caller's), then on (frozen objects: no pause)


def test_a_parse_child_parses_each_file_with_the_collector_paused(tmp_path):
    """With `--jobs 2` the children parse and build rows with the collector paused too (each file said
    here in a warning line naming the process: the child's lines reach the report as they are)."""
    prebuilt = importers._prebuilt

    def said(parsed, ascii):
        if not isinstance(parsed, str):
            parsed.result.skipped.insert(0, f"pid {os.getpid()} collector on: {gc.isenabled()}")
        return prebuilt(parsed, ascii)

    store = Store.open(f"sqlite:///{tmp_path}/a.sqlite", read_only=False, create=True, now="t0")
    try:
        with mock.patch.object(importers, "_prebuilt", said):
            report = import_paths(FILES, store, jobs=2)
    finally:
        store.close()
    lines = [s for s in report.skipped if s.startswith("pid ")]
    assert lines and all(s.endswith("collector on: False") for s in lines)
    assert any(not s.startswith(f"pid {os.getpid()} ") for s in lines)  # some were parsed in a child
    assert gc.isenabled()
