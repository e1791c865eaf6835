"""A config edit's worker time on the bench thread under the agents' profiles (issue 28 item 1,
engine side), in a fresh process per profile.

    python -m bench.bench_edit_engine [--edits N] [--rounds R] [--code DIR] [--profiles P,...] [--no-gc]

In each child: the bench thread (`generate_thread(10_000)`), its iris view, then the switch to the
profile (`controllers.replay.switch_profile`), not timed; then `--edits` edits of `context.window`
(150,000 down by 10,000), each timed as the TUI's worker does it: `build_view(...)` against the
baseline and the previous view, and the audit of the last request (the panes' selected one). The
reference, in the same process after each round of edits: one plain timeline of the same thread
under the profile's config (its replayer on the same counter and summarizer, whose per-thread tables
it reuses, in the view's compaction mode, no calibration, no cost, no blocks): the least an edit's replay does.
`--rounds` rounds of the edits, each 1,000 tokens below the one before (no window twice: the
summarizer remembers the summaries it made); medians. `--no-gc`: the cyclic collector off during
each timed edit (a full collection after it, untimed): what the collections cost the edit.

`--code DIR`: time another checkout (e.g. main before this work, `git archive main | tar -x -C DIR`),
the reference being that checkout's own plain timeline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ("claude-code", "codex", "opencode")

_CHILD = r"""
import json, statistics, sys, time
from bench.generate import generate_thread
from inspector.config import Config
from inspector.controllers.replay import switch_profile
from inspector.pipeline.context import ReplayContext
from inspector.pipeline.profiles import REGISTRY
from inspector.screens.view import build_view, default_simulator
import gc
profile, edits, rounds, no_gc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
thread = generate_thread(10_000)
cfg = Config.for_profile("iris")
view = build_view(thread, cfg, cfg, default_simulator)
edited = switch_profile(cfg, profile, thread)
view = build_view(thread, cfg, edited, default_simulator, baseline=view.baseline_replay, previous=view)
counter, summarizer = view.replay.ctx.counter, view.replay.ctx.summarizer
times, plain = [], []
for r in range(rounds):  # windows not seen before in each round (a summary once made is remembered)
    for w in range(150_000 - 1_000 * r, 150_000 - 1_000 * r - 10_000 * edits, -10_000):
        if no_gc:
            gc.disable()
        start = time.perf_counter()
        new = build_view(thread, cfg, edited.updated({"context.window": w}), default_simulator,
                         baseline=view.baseline_replay, previous=view)
        new.audit(len(new.requests) - 1)
        times.append(time.perf_counter() - start)
        if no_gc:  # the collections the edit would have made, untimed
            gc.enable()
            gc.collect()
    start = time.perf_counter()
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=view.compactions == "recorded")
    REGISTRY[profile].replayer(thread, edited, ctx).timeline()
    plain.append(time.perf_counter() - start)
print(json.dumps({"edit": statistics.median(times), "edits": times, "timeline": statistics.median(plain),
                  "requests": len(view.requests)}))
"""


def _child(code: Path, profile: str, edits: int, rounds: int, no_gc: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    run = subprocess.run([sys.executable, "-c", _CHILD, profile, str(edits), str(rounds), "1" if no_gc else "0"], cwd=code, env=env,
                         capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise SystemExit(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def bench_edit_engine(edits: int = 7, code: Path = ROOT, profiles=PROFILES, rounds: int = 3,
                      no_gc: bool = False) -> None:
    from bench.results import RESULTS

    for profile in profiles:
        before = _load()
        row = _child(code, profile, edits, rounds, no_gc)
        load = f"{before}-{_load()}"
        ratio = row["edit"] / row["timeline"]
        label = f"config edit's worker time, {profile}, bench thread" + ("" if code == ROOT else f" [{code}]") + (
            ", collector off during the edit" if no_gc else "")
        note = (f"{row['requests']:,} requests; median of {rounds} x {edits} edits "
                f"({min(row['edits']) * 1000:,.0f}-{max(row['edits']) * 1000:,.0f} ms); load {load}")
        RESULTS.append((label, f"{row['edit'] * 1000:,.0f} ms",
                        f"one plain timeline, same process: {row['timeline'] * 1000:,.0f} ms", f"{ratio:.2f}x", note))
        print(f"{label}: {row['edit'] * 1000:,.0f} ms vs one plain timeline {row['timeline'] * 1000:,.0f} ms -> "
              f"{ratio:.2f}x; {note}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=7)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose edits are timed")
    parser.add_argument("--profiles", default=",".join(PROFILES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-gc", action="store_true", help="the cyclic collector off during each edit")
    args = parser.parse_args()
    bench_edit_engine(args.edits, args.code.resolve(), tuple(p for p in args.profiles.split(",") if p),
                      args.rounds, args.no_gc)


if __name__ == "__main__":
    main()
