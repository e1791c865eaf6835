"""The TUI on long threads, measured with Pilot (App.run_test), against a short thread in the same run.

    python -m bench.bench_tui            # or: python -m bench.run tui

- start-up: app start to the first painted screen, and to the first replay shown;
- `right`: one keypress to the next request, until every pane shows it;
- config edit: a new `context.compaction_threshold` until the replay and every pane are updated;
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

SIZE = (160, 48)


def _app(thread, tmp: Path):
    from inspector.app import create_app
    from inspector.screens.source import MemorySource

    return create_app(source=MemorySource([thread]), live=False, pane_throttle=0, config_file=tmp / "config.toml",
                      export_dir=tmp, screenshot_dir=tmp)


async def _settle(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _measure(thread, steps: int = 25, edits: int = 7) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        app = _app(thread, tmp)
        start = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            painted = time.perf_counter() - start
            await _settle(app, pilot)
            ready = time.perf_counter() - start
            assert app.view is not None and app.view.thread.id == thread.id
            await pilot.press("home")
            await _settle(app, pilot)
            # Latency = key press (or edit) to the moment the app finished updating the panes
            # (`panes_updated_at`, stamped at the end of the pane update); Pilot's own waiting is excluded.
            step_times = []
            for _ in range(steps):
                before = app.request_index
                t0 = time.monotonic()
                await pilot.press("right")
                await _settle(app, pilot)
                step_times.append(app.panes_updated_at - t0)
                assert app.request_index == before + 1
            edit_times = []
            for i in range(edits):
                value = round(0.60 + 0.03 * i, 2)
                t0 = time.monotonic()
                app.set_config_value("context.compaction_threshold", value)
                await _settle(app, pilot)
                edit_times.append(app.panes_updated_at - t0)
                assert app.view.config["context.compaction_threshold"] == value
    return {"painted": painted, "ready": ready, "right": statistics.median(step_times),
            "edit": statistics.median(edit_times)}


def bench_tui() -> None:
    big = generate_thread(10_000)
    small = generate_thread(100, seed=2)
    ref = asyncio.run(_measure(small))
    out = asyncio.run(_measure(big))
    n, r = f"{len(big.messages):,} messages / {len(big.requests):,} requests", f"{len(small.messages)} messages"
    for key, label in (("right", "`right` to the next request, all panes updated"),
                       ("edit", "config edit to all panes updated"),
                       ("painted", "start-up to first paint"),
                       ("ready", "start-up to the first replay shown")):
        RESULTS.append((f"TUI: {label} ({n})", f"{out[key] * 1000:,.0f} ms", f"{r}: {ref[key] * 1000:,.0f} ms",
                        f"{out[key] / ref[key]:.1f}x the short thread", "median" if key in ("right", "edit") else ""))
        print(f"TUI {key}: {out[key] * 1000:.0f} ms (short thread {ref[key] * 1000:.0f} ms)", flush=True)


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
    bench_tui()
    bench_tui_memory()
    for row in RESULTS:
        print(row)
