"""The TUI on long threads, measured with Pilot (App.run_test), against a short thread in the same run.

    python -m bench.bench_tui            # or: python -m bench.run tui

- start-up: app start to the first painted screen, to the thread's recorded counts on the chart, to
  its first replay painted, and to every worker done;
- "painted": the first render of the screen (`App._display`, stamped) after the panes were filled;
- `right`: one keypress to the next request, until every pane shows it;
- config edit: a new `context.compaction_threshold` until the replay is in every pane (before its
  prices: `MainScreen.view_shown_at`), then painted, then its full result painted (its prices and
  its losses, whichever came last), once with an early request selected and once with the last one
  (where the app opens);
- peak memory of the app on a 100,000-message thread (tracemalloc).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.generate import generate_thread
from bench.results import RESULTS
from inspector.config import AGENT_PROFILES

SIZE = (160, 48)


def _app(thread, tmp: Path):
    from inspector.app import create_app
    from inspector.screens.source import MemorySource

    return create_app(source=MemorySource([thread]), live=False, pane_throttle=0, config_file=tmp / "config.toml",
                      export_dir=tmp, screenshot_dir=tmp)


async def _settle(app, pilot) -> None:
    """Until every worker is done and nothing waits for a paint (an edit's prices and losses), painted."""
    from inspector.tui.settle import settle

    await settle(app, pilot)
    await app.screen.wait_for_refresh()  # what the last messages changed, painted


def _edit_values(baseline: float, start: float, count: int) -> list[float]:
    """`count` distinct compaction thresholds from `start` in steps of 0.02, skipping the baseline
    (an edit back to the baseline replays nothing)."""
    out: list[float] = []
    value = start
    while len(out) < count:
        if abs(value - baseline) > 1e-9:
            out.append(round(value, 2))
        value += 0.02
    return out


PAINTS: list[float] = []  # when the app's screen was rendered (each `App._display`), in order


def _stamp_paints() -> None:
    """Stamp every render of the screen: what the panes show is painted at the first render after they
    were filled (the compositor renders the dirty widgets there; headless, it skips only the writing)."""
    from textual.app import App

    if getattr(App._display, "stamps_paints", False):
        return
    original = App._display

    def display(self, screen, renderable) -> None:
        original(self, screen, renderable)
        if renderable is not None:
            PAINTS.append(time.monotonic())

    display.stamps_paints = True
    App._display = display


def _painted_after(moment: float) -> float:
    """The first paint at or after `moment`; `moment` itself where nothing was painted after it (the
    update changed nothing on screen: what it shows was already there)."""
    from bisect import bisect_left

    at = bisect_left(PAINTS, moment)
    return PAINTS[at] if at < len(PAINTS) else moment


PAINTED: dict[str, list[float]] = {}  # bench key -> edit until the screen was laid out and painted
FULL: dict[str, list[float]] = {}  # bench key -> edit until its whole answer was shown (the diff's loss line)


def _full(app, t0: float) -> float:
    """Edit to its whole answer painted: the losses of its view (`LossTracker.shown_at`, the diff's loss
    line) and its prices (`MainScreen.prices_shown_at`, which follow the replay), whichever came last."""
    screen = app.main_screen
    assert screen.view.priced and screen.loss.view.same_replays(screen.view) and screen.loss.shown_at >= t0
    last = screen.loss.shown_at
    if screen.view.is_what_if and screen.prices_shown_at >= t0:
        last = max(last, screen.prices_shown_at)
    return _painted_after(last) - t0


async def _edits(app, pilot, values: list[float], painted: list[float] | None = None,
                 full: list[float] | None = None) -> list[float]:
    times = []
    for value in values:
        t0 = time.monotonic()
        app.main_screen.set_config_value("context.compaction_threshold", value)
        await _settle(app, pilot)
        shown = app.main_screen.view_shown_at  # the edit's replay in every pane (its prices follow)
        times.append(shown - t0)
        if painted is not None:  # the panes' layout and paint, which `view_shown_at` precedes
            painted.append(_painted_after(shown) - t0)
        if full is not None:
            full.append(_full(app, t0))
        assert app.main_screen.view.config["context.compaction_threshold"] == value
    return times


def _painted_note(key: str) -> str:
    values, full = PAINTED.get(key), FULL.get(key)
    note = f"; to the screen laid out and painted: {statistics.median(values) * 1000:,.0f} ms" if values else ""
    if full:
        note += (f"; to the full result (loss line included): {statistics.median(full) * 1000:,.0f} ms "
                 f"(slowest {max(full) * 1000:,.0f} ms)")
    return note


async def _measure(thread, steps: int = 25, edits: int = 9) -> dict[str, list[float] | float]:
    _stamp_paints()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        app = _app(thread, tmp)
        start = time.monotonic()
        async with app.run_test(size=SIZE) as pilot:
            await _settle(app, pilot)
            ready = time.monotonic() - start
            painted = _painted_after(start) - start
            screen = app.main_screen
            # the thread's recorded counts on the chart, then its first replay on screen (issue 28 item 5)
            recorded = _painted_after(screen.recorded_shown_at) - start if screen.recorded_shown_at else float("nan")
            first_view = _painted_after(screen.first_view_at) - start
            assert app.main_screen.view is not None and app.main_screen.view.thread.id == thread.id
            baseline = float(app.main_screen.view.baseline_config["context.compaction_threshold"])
            await pilot.press("home")
            await _settle(app, pilot)
            # Latency = key press (or edit) to the moment the app finished updating the panes
            # (`panes_updated_at`, stamped at the end of the pane update); Pilot's own waiting is excluded.
            step_times = []
            tag = "big" if len(thread.messages) > 1_000 else "small"
            right_painted = PAINTED.setdefault(f"{tag}:right", [])
            for _ in range(steps):
                before = app.main_screen.request_index
                t0 = time.monotonic()
                await pilot.press("right")
                await _settle(app, pilot)
                step_times.append(app.main_screen.panes.updated_at - t0)
                right_painted.append(_painted_after(app.main_screen.panes.updated_at) - t0)
                assert app.main_screen.request_index == before + 1
            # Config edits with an early request selected (its blocks are few) ...
            edit_early = await _edits(app, pilot, _edit_values(baseline, 0.60, edits), PAINTED.setdefault(f"{tag}:edit", []),
                                      FULL.setdefault(f"{tag}:edit", []))
            # ... and with the last request selected, where the app opens (its blocks are the whole thread).
            await pilot.press("end")
            await _settle(app, pilot)
            assert app.main_screen.request_index == len(app.main_screen.view.requests) - 1
            edit_last = await _edits(app, pilot, _edit_values(baseline, 0.61, edits),
                                     PAINTED.setdefault(f"{tag}:edit_last", []), FULL.setdefault(f"{tag}:edit_last", []))
            # ... and from the Config tab, where a user edits: the form and the diff panel on screen
            from textual.widgets import TabbedContent

            app.query_one(TabbedContent).active = "config"
            await _settle(app, pilot)
            edit_config = await _edits(app, pilot, _edit_values(baseline, 0.62, edits),
                                       PAINTED.setdefault(f"{tag}:edit_config", []),
                                       FULL.setdefault(f"{tag}:edit_config", []))
    return {"painted": painted, "recorded": recorded, "first_view": first_view, "ready": ready,
            "right": step_times, "edit": edit_early, "edit_last": edit_last, "edit_config": edit_config}


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def bench_tui() -> None:
    big = generate_thread(10_000)
    small = generate_thread(100, seed=2)
    ref = asyncio.run(_measure(small))
    out = asyncio.run(_measure(big))
    n, r = f"{len(big.messages):,} messages / {len(big.requests):,} requests", f"{len(small.messages)} messages"
    for key, label in (("right", "`right` to the next request, all panes updated"),
                       ("edit", "config edit to all panes updated, request 26 selected"),
                       ("edit_last", "config edit to all panes updated, last request selected"),
                       ("edit_config", "config edit from the Config tab (form and diff shown), last request"),
                       ("painted", "start-up to first paint"),
                       ("recorded", "start-up to the recorded counts on the chart"),
                       ("first_view", "start-up to the first replay shown"),
                       ("ready", "start-up to every worker done (reproduction, summaries' scan)")):
        big_value, small_value = out[key], ref[key]
        note = ""
        if isinstance(big_value, list):
            note = (f"median of {len(big_value)}; 90th percentile {_p90(big_value) * 1000:,.0f} ms, "
                    f"slowest {max(big_value) * 1000:,.0f} ms{_painted_note('big:' + key)}")
            big_value, small_value = statistics.median(big_value), statistics.median(small_value)
        RESULTS.append((f"TUI: {label} ({n})", f"{big_value * 1000:,.0f} ms", f"{r}: {small_value * 1000:,.0f} ms",
                        f"{big_value / small_value:.1f}x the short thread", note))
        print(f"TUI {key}: {big_value * 1000:.0f} ms (short thread {small_value * 1000:.0f} ms) {note}", flush=True)


def _profile_edits(only: tuple[str, ...] | None = None) -> list[tuple[str, range]]:
    """Each profile the bench edits, with the `context.window` values it sets (`only`: those profiles)."""
    pairs = [("harness", range(150_000, 80_000, -10_000)), ("shifting", range(6_000, 9_500, 500)),
             *((p, range(150_000, 80_000, -10_000)) for p in AGENT_PROFILES)]
    return [(p, w) for p, w in pairs if only is None or p in only]


async def _measure_profiles(thread, edits: int = 7, only: tuple[str, ...] | None = None) -> dict[str, list[float]]:
    """Switching the profile, then editing `context.window`, with the last request selected."""
    out: dict[str, list[float]] = {}
    _stamp_paints()
    with tempfile.TemporaryDirectory() as tmpdir:
        app = _app(thread, Path(tmpdir))
        async with app.run_test(size=SIZE) as pilot:
            await _settle(app, pilot)
            for profile, windows in _profile_edits(only):
                t0 = time.monotonic()
                app.main_screen.set_profile(profile)
                await _settle(app, pilot)
                assert app.main_screen.view.config.profile == profile and app.main_screen.request_index == len(app.main_screen.view.requests) - 1
                out[f"{profile}_switch"] = [app.main_screen.view_shown_at - t0]
                times = []
                tag = f"{'big' if len(thread.messages) > 1_000 else 'small'}:{profile}_edit"
                painted, full = PAINTED.setdefault(tag, []), FULL.setdefault(tag, [])
                for window in list(windows)[:edits]:
                    t0 = time.monotonic()
                    app.main_screen.set_config_value("context.window", window)
                    await _settle(app, pilot)
                    assert app.main_screen.view.config["context.window"] == window
                    shown = app.main_screen.view_shown_at
                    times.append(shown - t0)
                    painted.append(_painted_after(shown) - t0)
                    full.append(_full(app, t0))
                out[f"{profile}_edit"] = times
    return out


def bench_tui_profiles(only: tuple[str, ...] | None = None) -> None:
    big = generate_thread(10_000)
    small = generate_thread(100, seed=2)
    ref, out = asyncio.run(_measure_profiles(small, only=only)), asyncio.run(_measure_profiles(big, only=only))
    n, r = f"{len(big.messages):,} messages / {len(big.requests):,} requests", f"{len(small.messages)} messages"
    labels = [(f"{p}_{what}", f"switch to profile {p}" if what == "switch" else
               f"config edit under {p} (`context.window`)")
              for p, _ in _profile_edits(only) for what in ("switch", "edit")]
    for key, label in labels:
        big_value, small_value = statistics.median(out[key]), statistics.median(ref[key])
        note = "last request selected" + (f"; median of {len(out[key])}, slowest {max(out[key]) * 1000:,.0f} ms"
                                          if len(out[key]) > 1 else "") + _painted_note("big:" + key)
        RESULTS.append((f"TUI: {label} ({n})", f"{big_value * 1000:,.0f} ms", f"{r}: {small_value * 1000:,.0f} ms",
                        f"{big_value / small_value:.1f}x the short thread", note))
        print(f"TUI {key}: {big_value * 1000:.0f} ms (short thread {small_value * 1000:.0f} ms) {note}", flush=True)


def bench_tui_memory(messages: int = 100_000) -> None:
    thread = generate_thread(messages, seed=5)
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()

    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmpdir:
            app = _app(thread, Path(tmpdir))
            async with app.run_test(size=SIZE) as pilot:
                await _settle(app, pilot)
                await pilot.press("2")  # the blocks table of the last request
                await _settle(app, pilot)

    asyncio.run(run())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = sum(len(m.content) for m in thread.messages)
    RESULTS.append((f"TUI: peak memory on {len(thread.messages):,} messages",
                    f"{(peak - base) / 2**20:,.0f} MiB above the loaded thread",
                    f"thread text: {size / 2**20:,.0f} MiB", f"{(peak - base) / size:.2f}x", "tracemalloc"))
    print(f"TUI memory: +{(peak - base) / 2**20:.0f} MiB for {size / 2**20:.0f} MiB of text", flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--profiles", help="comma-separated: only the profile edits of these profiles")
    parser.add_argument("--parts", default="tui,profiles,memory",
                        help="comma-separated, of: tui (start-up, right, edits), profiles, memory")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if args.profiles:
        bench_tui_profiles(tuple(args.profiles.split(",")))
    else:
        if "tui" in parts:
            bench_tui()
        if "profiles" in parts:
            bench_tui_profiles()
        if "memory" in parts:
            bench_tui_memory()
    for row in RESULTS:
        print(row)
