"""An edit's replay goes on screen before its prices (issue 28 item 1): the status line, the Budget pane
and the diff say "pricing…" where the cost goes, never the previous replay's bill; the pricing starts
once that screen is painted (a worker beside the paint slowed it), the losses after the prices; a newer
edit's view never takes an older edit's prices; a pricing that fails says the cost is unknown, and why.

The simulator here replays as the app does and holds the what-if's pricing at a gate the test opens:
each stage is seen on screen while the next is held. The waits follow the app's progress; the gate has
a generous safety net only."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from textual.app import App
from textual.widgets import Static

from inspector.config import Config
from inspector.importers import parse_text
from inspector.screens.messages import PricesReady
from inspector.screens.source import MemorySource
from inspector.screens.view import build_view, default_simulator, price_view
from tests.paths import REAL
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.budget import BudgetView

SESSION = "claude-code-session-with-compaction.jsonl"
SAFETY_NET = 120  # seconds: only a broken app waits this long at the gate
HELD_WINDOW = 150_000  # the edit whose pricing is held
OTHER_WINDOW = 120_000


def _session():
    text = (REAL / SESSION).read_text(encoding="utf-8")
    return parse_text(text, SESSION)[1].threads[0]


class PricingGate:
    """A simulator whose replays under a held `context.window` price only once that window's gate opens
    (or fail to, with `fail`)."""

    def __init__(self, *windows: int) -> None:
        self.windows = windows or (HELD_WINDOW,)
        self.entered = {w: threading.Event() for w in self.windows}
        self.opened = {w: threading.Event() for w in self.windows}
        self.entered_at = 0.0
        self.fail: str | None = None

    def __call__(self, thread, config, *, compactions):
        replay = default_simulator(thread, config, compactions=compactions)
        window = config["context.window"]
        if window in self.windows:
            computed = replay._computed_costs

            def held() -> tuple:
                self.entered_at = time.monotonic()
                self.entered[window].set()
                assert self.opened[window].wait(SAFETY_NET), "the test never opened the gate"
                if self.fail is not None:
                    raise RuntimeError(self.fail)
                return computed()

            replay._computed_costs = held  # this replay's own pricing (the class is untouched)
        return replay

    async def reached(self, pilot, window: int = HELD_WINDOW) -> None:
        assert await asyncio.to_thread(self.entered[window].wait, SAFETY_NET), "the pricing never started"
        for _ in range(3):
            await pilot.pause()

    def open(self, window: int = HELD_WINDOW) -> None:
        self.opened[window].set()

    def open_all(self) -> None:
        """What a failed test's exit does: no worker stays held until the safety net."""
        for event in self.opened.values():
            event.set()


@contextlib.asynccontextmanager
async def _opened_at_exit(gate: PricingGate):
    try:
        yield
    finally:
        gate.open_all()


def _paints(monkeypatch) -> list[float]:
    """When the screen is rendered (every `App._display` with something to show)."""
    stamps: list[float] = []
    original = App._display

    def display(self, screen, renderable) -> None:
        original(self, screen, renderable)
        if renderable is not None:
            stamps.append(time.monotonic())

    monkeypatch.setattr(App, "_display", display)
    return stamps


def _texts(app) -> tuple[str, str, str]:
    return (plain(app.query_one("#status", Static)), plain(app.query_one(BudgetView)),
            plain(app.query_one("#diff", Static)))


def _priced_view(thread, window: int):
    """The edit's view as the app builds it priced at once (its replays made afresh)."""
    baseline = Config.for_profile("claude-code", {"context.window": thread.window} if thread.window else {})
    first = build_view(thread, baseline, baseline, default_simulator)
    return build_view(thread, baseline, first.config.updated({"context.window": window}), default_simulator,
                      baseline=first.baseline_replay, previous=first)


async def test_an_edit_is_painted_before_its_prices_and_never_with_the_old_bill(tmp_path, monkeypatch):
    thread = _session()
    gate = PricingGate()
    paints = _paints(monkeypatch)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot, _opened_at_exit(gate):
        await settle(app, pilot)
        screen = app.main_screen
        old_bill = f"${screen.view.cost_totals.cost:,.2f}"
        assert old_bill in _texts(app)[0] and "Bill " in _texts(app)[1]
        screen.set_config_value("context.window", HELD_WINDOW)
        await gate.reached(pilot)
        view = screen.view
        assert view.config["context.window"] == HELD_WINDOW and not view.priced
        # painted with the new replay before its pricing started
        assert any(screen.view_shown_at <= stamp <= gate.entered_at for stamp in paints)
        status, budget, diff = _texts(app)
        assert "pricing…" in status and old_bill not in status
        assert "Bill pricing…" in budget and "Cost" in budget and "$" not in budget
        assert "billed tokens, cache breaks and cost: pricing…" in diff and "$" not in diff
        assert f"request {len(view.requests)}/{len(view.requests)}" in plain(app.query_one("#timeline-label", Static))
        assert app.main_screen.loss.view is None or not app.main_screen.loss.view.same_replays(view)  # after the prices
        gate.open()
        await settle(app, pilot)
        view = screen.view
        expected = _priced_view(thread, HELD_WINDOW)
        assert view.priced and view.cost_totals == expected.cost_totals
        status, budget, diff = _texts(app)
        assert "pricing" not in status + budget + diff
        assert f"${expected.cost_totals.cost:,.2f}" in status
        assert expected.diff.cost.line() in diff
        assert screen.loss.view.same_replays(view) and screen.loss.losses_of(view) is not None


async def test_a_newer_edit_never_takes_an_older_edit_s_prices(tmp_path):
    thread = _session()
    gate = PricingGate(HELD_WINDOW, OTHER_WINDOW)
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot, _opened_at_exit(gate):
        await settle(app, pilot)
        screen = app.main_screen
        screen.set_config_value("context.window", HELD_WINDOW)
        await gate.reached(pilot, HELD_WINDOW)
        older = screen.view
        (older_pricing,) = [w for w in app.workers if w.group == "pricing" and w.is_running]
        screen.set_config_value("context.window", OTHER_WINDOW)  # shown while the older edit's pricing runs
        await gate.reached(pilot, OTHER_WINDOW)
        newer = screen.view
        assert newer.config["context.window"] == OTHER_WINDOW and not newer.priced
        assert older_pricing.is_cancelled  # the newer view's pricing took its place
        gate.open(HELD_WINDOW)
        for _ in range(50):  # until the older pricing is done (each pause waits for the interpreter to idle)
            if older.replay.priced:
                break
            await pilot.pause()
        assert older.replay.priced
        # its prices, late (a worker's message can cross its cancellation), for a view no longer shown
        screen.post_message(PricesReady(older, price_view(older)))
        for _ in range(3):
            await pilot.pause()
        assert screen.view.same_replays(newer) and not screen.view.priced
        assert "pricing…" in _texts(app)[0]
        gate.open(OTHER_WINDOW)
        await settle(app, pilot)
        assert screen.view.same_replays(newer) and screen.view.priced
        expected = _priced_view(thread, OTHER_WINDOW)
        assert screen.view.cost_totals == expected.cost_totals
        assert f"${expected.cost_totals.cost:,.2f}" in _texts(app)[0]


async def test_a_pricing_that_fails_says_the_cost_is_unknown_and_why(tmp_path):
    thread = _session()
    gate = PricingGate()
    gate.fail = "no price table\x1b[31m for model X"
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot, _opened_at_exit(gate):
        await settle(app, pilot)
        screen = app.main_screen
        screen.set_config_value("context.window", HELD_WINDOW)
        await gate.reached(pilot)
        gate.open()
        await settle(app, pilot)
        view = screen.view
        assert view.config["context.window"] == HELD_WINDOW and not view.priced
        status, budget, diff = _texts(app)
        for text in (status, budget, diff):
            assert "cost unknown: pricing failed: no price table" in text.replace("\n", " ")
            assert "\x1b" not in text and "pricing…" not in text
        assert "$" not in budget
        assert screen.loss.view.same_replays(view)  # the losses came all the same


async def test_the_diff_panel_keeps_its_height_until_the_prices_and_always_holds_its_whole_text(tmp_path, monkeypatch):
    """In the Config tab the next edit's text is shorter than the last one's until its prices come: it keeps
    the panel's height (no layout of the screen for it: blank lines under it; `RenderedOnce.keeps_size`
    pins the rule line by line), its whole text is always within its height, and the next layout of the
    screen (here a resize) gives it its text's height again."""
    from textual.screen import Screen
    from textual.widgets import TabbedContent

    from inspector.screens.status import DiffPanel

    thread = _session()
    gate = PricingGate()
    app = make_app(tmp_path, MemorySource([thread]), thread_id=thread.id, simulator=gate)
    async with app.run_test(size=SIZE) as pilot, _opened_at_exit(gate):
        await settle(app, pilot)
        app.query_one(TabbedContent).active = "config"
        screen, diff = app.main_screen, app.query_one(DiffPanel)

        def lines() -> int:  # of the panel's last paint (`RenderedOnce`: what the panel rendered, as it did)
            painted = diff.content._last
            assert painted is not None
            return painted[2]

        screen.set_config_value("context.window", OTHER_WINDOW)  # priced at once, its losses after
        await settle(app, pilot)
        tall = diff.content_size.height
        assert diff.is_on_screen and tall == lines() and "cost" in plain(diff) and "pricing…" not in plain(diff)
        layouts: list[float] = []
        original = Screen._refresh_layout

        def counted(self, *args, **kwargs):
            layouts.append(time.monotonic())
            return original(self, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        screen.set_config_value("context.window", HELD_WINDOW)
        await gate.reached(pilot)
        for _ in range(20):  # what the screen had left to do while the gate holds the prices: done
            if not (screen._layout_required or diff._layout_required or screen._dirty_widgets
                    or not screen._message_queue.empty()):
                break
            await screen.wait_for_refresh()
            await pilot.pause()
        assert "pricing…" in plain(diff) and lines() < tall  # the held edit's text, shorter
        assert diff.content_size.height == tall and layouts == []  # kept its height: nothing laid out
        gate.open()
        await settle(app, pilot)
        assert not diff.content_size.height < lines()  # the prices and losses: within its height, or laid out
        await pilot.resize_terminal(SIZE[0] + 1, SIZE[1])
        await settle(app, pilot)
        assert diff.content_size.height == lines()
