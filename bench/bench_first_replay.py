"""The TUI's first replay of the bench thread (issue 28 item 5), in a fresh process each time.

    python -m bench.bench_first_replay [--runs N] [--code DIR]

Each run is a new Python process (as the app's first view is): the bench thread
(`generate_thread(10_000)`, iris, no recorded compactions) is built and the view module imported
(not timed), then `build_view(thread, cfg, cfg, default_simulator)` is timed cold: the calibration's
reference replay, the replay, the prompt cache, with every import they do on the way. The
reference, in the same process after it: one plain timeline of the same thread (the iris replayer
with a new extractive summarizer, no calibration, no cost), the least a first view must do. The
token counts come from the persistent cache (a first run, not counted, fills it).

Then, in this process: `extract_features` over the bench thread's messages against the scan as
first written (`tests/reference/extractive_scan.py`), alternately, medians.

`--code DIR`: time the first replay of another checkout (e.g. the code before this work, extracted
beside with `git worktree add`), the reference being that checkout's own plain timeline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
from bench.generate import generate_thread
from inspector.config import Config
from inspector.screens.view import build_view, default_simulator
thread = generate_thread(10_000)
cfg = Config.for_profile("iris")
start = time.perf_counter()
view = build_view(thread, cfg, cfg, default_simulator)
first = time.perf_counter() - start
loaded = sorted(m for m in ("inspector.importers", "inspector.store", "sqlalchemy") if m in sys.modules)
from inspector.pipeline.context import ReplayContext
from inspector.pipeline.replays import Replay
from inspector.service import counter_with_fallback
from inspector.summarizers.extractive import ExtractiveSummarizer
counter, _ = counter_with_fallback(cfg)
start = time.perf_counter()
plain = Replay(thread, cfg, ReplayContext(counter=counter, summarizer=ExtractiveSummarizer())).timeline
timeline = time.perf_counter() - start
print(json.dumps({"first": first, "timeline": timeline, "loaded": loaded, "requests": len(view.requests),
                  "same_requests": len(plain) == len(view.requests)}))
"""


def _child(code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    run = subprocess.run([sys.executable, "-c", _CHILD], cwd=code, env=env, capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        raise SystemExit(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def bench_first_replay(runs: int = 5, code: Path = ROOT) -> None:
    from bench.results import RESULTS

    _child(code)  # fills the persistent token cache; not counted
    rows = []
    loads = [_load()]
    for _ in range(runs):
        rows.append(_child(code))
        loads.append(_load())
    first = statistics.median(r["first"] for r in rows)
    timeline = statistics.median(r["timeline"] for r in rows)
    ratio = first / timeline
    loaded = ", ".join(rows[0]["loaded"]) or "none of the importers, the store, SQLAlchemy"
    note = (f"{rows[0]['requests']:,} requests; loaded by it: {loaded}; {min(r['first'] for r in rows):.2f}-"
            f"{max(r['first'] for r in rows):.2f} s over {runs} runs; load {min(loads)}-{max(loads)}")
    label = "first replay (cold build_view), bench thread" + ("" if code == ROOT else f" [{code}]")
    RESULTS.append((label, f"{first:.2f} s", f"one plain timeline, same process: {timeline:.2f} s",
                    f"{ratio:.1f}x", note))
    print(f"{label}: {first:.2f} s (median of {runs}) vs one plain timeline {timeline:.2f} s -> {ratio:.1f}x; {note}",
          flush=True)


def bench_features(repeat: int = 5) -> None:
    from bench.generate import generate_thread
    from bench.results import RESULTS
    from inspector.summarizers import extractive_scan as fast
    from tests.reference import extractive_scan as reference

    messages = generate_thread(10_000).messages
    times: dict[str, list[float]] = {"fast": [], "reference": []}
    for _ in range(repeat):
        for name, module in (("reference", reference), ("fast", fast)):
            start = time.perf_counter()
            for message in messages:
                module.extract_features(message)
            times[name].append(time.perf_counter() - start)
    subject, ref = statistics.median(times["fast"]), statistics.median(times["reference"])
    note = f"{len(messages):,} messages, medians of {repeat}, alternately; load {_load()}"
    RESULTS.append(("extract_features, bench thread", f"{subject * 1000:,.0f} ms",
                    f"the scan as first written: {ref * 1000:,.0f} ms", f"{ref / subject:.1f}x faster", note))
    print(f"extract_features, bench thread: {subject * 1000:,.0f} ms vs as first written {ref * 1000:,.0f} ms -> "
          f"{ref / subject:.1f}x; {note}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose first replay is timed")
    args = parser.parse_args()
    bench_first_replay(args.runs, args.code.resolve())
    if args.code.resolve() == ROOT:
        bench_features()


if __name__ == "__main__":
    main()
