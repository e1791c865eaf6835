"""Background housekeeping for long threads: freezing their objects (gcpolicy) and scanning them for summaries."""

from __future__ import annotations

import gc

from inspector.gcpolicy import FULL_PASS_EVERY, LONG_THREAD_MESSAGES, LongLivedObjects, settled


def test_a_long_thread_is_frozen_and_released():
    before = gc.get_threshold()
    policy = LongLivedObjects()
    try:
        assert policy.settle(LONG_THREAD_MESSAGES) is True
        assert policy.settled and settled() and gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] == max(before[2], FULL_PASS_EVERY)
        assert policy.settle(LONG_THREAD_MESSAGES) is True  # settling again thaws first: no double counting
        assert gc.get_threshold()[2] == max(before[2], FULL_PASS_EVERY)
    finally:
        policy.release()
    assert not policy.settled and not settled() and gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_the_shifting_replay_pauses_the_collector_only_where_nothing_is_frozen(monkeypatch):
    """Its timeline pauses the collector (a pass in the middle would walk the long-lived thread again and
    again) unless the app froze the long-lived objects: there the pause only moved the passes onto the
    paint of the edit. The replay is the same either way."""
    from bench.generate import generate_thread
    from inspector.config import Config
    from inspector.service import run_replay

    thread = generate_thread(300, seed=3)
    config = Config.for_profile("shifting")
    paused: list[bool] = []
    disable = gc.disable
    monkeypatch.setattr(gc, "disable", lambda: (paused.append(True), disable())[1])
    free = run_replay(thread, config, compactions="decide")
    assert len(free.timeline) > 1 and paused == [True] and gc.isenabled()
    policy = LongLivedObjects()
    try:
        policy.settle(LONG_THREAD_MESSAGES)
        frozen = run_replay(thread, config, compactions="decide")
        assert len(frozen.timeline) == len(free.timeline) and paused == [True]  # not paused again
    finally:
        policy.release()
    assert frozen.timeline == free.timeline


def test_a_short_thread_changes_nothing_and_thaws_a_previous_long_one():
    before = gc.get_threshold()
    policy = LongLivedObjects()
    assert policy.settle(LONG_THREAD_MESSAGES - 1) is False
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    policy.settle(LONG_THREAD_MESSAGES)
    assert policy.settle(10) is False
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


async def test_the_app_settles_a_long_thread_and_thaws_it_on_the_next_and_on_exit(tmp_path):
    from inspector.screens.source import MemorySource
    from tests.tui.app_support import coding_thread, long_thread, make_app, settle

    before = gc.get_threshold()
    app = make_app(tmp_path, MemorySource([long_thread(LONG_THREAD_MESSAGES + 2), coding_thread()]),
                   thread_id="long")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view is not None and app.main_screen.view.thread.id == "long"
        assert app.main_screen.long_lived.settled and gc.get_freeze_count() > 0
        app.main_screen.load_thread("coding")
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == "coding"
        assert not app.main_screen.long_lived.settled and gc.get_freeze_count() == 0
        app.main_screen.load_thread("long")
        await settle(app, pilot)
        assert app.main_screen.long_lived.settled
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


async def test_the_app_scans_a_shown_thread_for_summaries_in_the_background(tmp_path):
    """ExtractiveSummarizer.prepare runs over every message once the thread is shown."""
    from inspector.screens.source import MemorySource
    from inspector.service import make_summarizer
    from tests.tui.app_support import coding_thread, make_app, settle

    thread = coding_thread("scan-me", turns=12)
    app = make_app(tmp_path, MemorySource([thread]), thread_id="scan-me")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        summarizer = make_summarizer(app.main_screen.view.config)
        assert all(summarizer._by_object.get(id(m), (None,))[0] is m for m in app.main_screen.view.thread.messages)


async def test_an_edit_frees_the_previous_view_without_waiting_for_a_full_collection(tmp_path):
    """The views handed to workers are taken out of them (`controllers.handoff`): Textual keeps a
    finished worker in a reference cycle, and a view in its arguments waited for a full collection."""
    import weakref

    from inspector.screens.source import MemorySource
    from tests.tui.app_support import coding_thread, make_app, settle

    app = make_app(tmp_path, MemorySource([coding_thread()]))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 150_000)
        await settle(app, pilot)
        gc.collect()
        gc.disable()
        try:
            shown = weakref.ref(app.main_screen.view)
            replay = weakref.ref(app.main_screen.view.replay)
            app.main_screen.set_config_value("context.window", 140_000)
            await settle(app, pilot)
            assert app.main_screen.view is not None and app.main_screen.view.config["context.window"] == 140_000
            assert shown() is None and replay() is None  # freed by their last reference, no collection ran
        finally:
            gc.enable()
