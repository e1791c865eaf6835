"""tests/pilot_wait.py: Pilot's waits end when the app has nothing left to do, and not before."""

from __future__ import annotations

import asyncio
import threading

import textual.app
import textual.events
import textual.pilot
from textual import work
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests import pilot_wait


class Busy(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.total = 0

    def compose(self) -> ComposeResult:
        yield Static("idle", id="out")

    def on_key(self, event) -> None:
        if event.key == "k":
            self.compute()
        elif event.key == "b":
            self.blocked()
        elif event.key == "m":
            self.query_one("#out", Static).update("pressed")

    @work(thread=True, group="compute")
    def compute(self) -> None:
        total = sum(i * i for i in range(2_000_000))  # a worker's thread computing
        self.call_from_thread(self.show, total)

    @work(thread=True, group="blocked")
    def blocked(self) -> None:
        self.gate.wait()  # a worker's thread waiting: it moves nothing

    def show(self, total: int) -> None:
        self.total = total
        self.query_one("#out", Static).update(f"total {total}")


def test_the_pilot_s_waits_are_the_quiet_ones():
    assert textual.pilot.wait_for_idle is pilot_wait.wait_for_quiet
    assert textual.app.wait_for_idle is pilot_wait.wait_for_quiet


async def test_a_key_s_wait_covers_a_worker_computing_and_what_it_hands_back():
    app = Busy()
    async with app.run_test() as pilot:
        await pilot.press("k")  # no settle: the key's own wait
        assert app.total == sum(i * i for i in range(2_000_000))
        assert str(app.query_one("#out", Static).render()) == f"total {app.total}"


async def test_queued_messages_a_dirty_screen_and_computing_threads_are_not_quiet():
    app = Busy()
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            loop = asyncio.get_running_loop()
            assert pilot_wait.is_quiet(loop)
            app.query_one("#out", Static).update("changed")  # the screen needs a repaint
            assert not pilot_wait.is_quiet(loop)
            await pilot.pause()
            assert pilot_wait.is_quiet(loop)
            app.post_message(textual.events.Key("m", "m"))  # a message queued
            assert not pilot_wait.is_quiet(loop)
            await pilot.pause()
            assert pilot_wait.is_quiet(loop) and "pressed" in str(app.query_one("#out", Static).render())
            await pilot.press("b")  # a worker's thread that waits: quiet unless the other threads use CPU
            await pilot.pause()  # (it ends: the waiting thread uses no CPU)
            assert pilot_wait.is_quiet(loop, threads_busy=False)
            assert not pilot_wait.is_quiet(loop, threads_busy=True)
            app.gate.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert pilot_wait.is_quiet(loop, threads_busy=True)
    finally:
        app.gate.set()  # a failed assertion leaves no thread waiting
