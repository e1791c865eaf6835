"""The real agents' profiles on the 10,003-message bench thread, against iris in the same process.

    python -m bench.bench_agents        # or: python -m bench.run agents

A what-if edit as the app makes it (`run_replay` with the thread's calibration, the same
compaction mode as the baseline, then the diff against the baseline): `context.window` from
150k down, median of 7, each profile against the same edit under iris.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from bench.generate import generate_thread
from bench.results import RESULTS
from inspector.config import AGENT_PROFILES


def _edit_times(thread, profile: str, mode: str, windows) -> list[float]:
    from inspector.compare.between_replays import diff_simulations
    from inspector.service import load_config, run_replay

    config = load_config(profile, {}, thread=thread)
    base = run_replay(thread, config, compactions=mode).simulation(blocks=False)
    times = []
    for window in windows:
        edited = config.updated({"context.window": window})
        t0 = time.perf_counter()
        diff_simulations(base, run_replay(thread, edited, compactions=mode).simulation(blocks=False))
        times.append(time.perf_counter() - t0)
    return times


def bench_agents() -> None:
    os.environ.setdefault("CONTEXT_INSPECTOR_DATA_DIR", tempfile.mkdtemp(prefix="bench-agents-"))
    thread = generate_thread(10_000)
    windows = range(150_000, 80_000, -10_000)
    n = f"{len(thread.messages):,} messages / {len(thread.requests):,} requests"
    for mode in ("recorded", "decide"):
        iris = statistics.median(_edit_times(thread, "iris", mode, windows))
        for profile in AGENT_PROFILES:
            times = _edit_times(thread, profile, mode, windows)
            median = statistics.median(times)
            RESULTS.append((f"agents: config edit + diff under {profile}, compactions {mode} ({n})",
                            f"{median * 1000:,.0f} ms", f"iris, same edit: {iris * 1000:,.0f} ms",
                            f"{median / iris:.2f}x iris", f"median of {len(times)}, slowest {max(times) * 1000:,.0f} ms"))
            print(f"{profile} {mode}: {median * 1000:.0f} ms (iris {iris * 1000:.0f} ms, {median / iris:.2f}x)",
                  flush=True)


if __name__ == "__main__":
    bench_agents()
