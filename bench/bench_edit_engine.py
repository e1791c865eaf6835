"""A config edit's worker time on the bench thread under the agents' profiles (issue 28 item 1,
engine side), in a fresh process per profile.

    python -m bench.bench_edit_engine [--edits N] [--rounds R] [--code DIR] [--profiles P,...]

In each child: the bench thread (`generate_thread(10_000)`), its iris view, then the switch to the
profile (`controllers.replay.switch_profile`), not timed; then `--edits` edits of `context.window`
(150,000 down by 10,000), each timed as the TUI's worker does it: `build_view(...)` against the
baseline and the previous view, and the audit of the last request (the panes' selected one). The
reference, in the same process after each round of edits: one plain timeline of the same thread
under the profile's config (its replayer on the same counter and summarizer, whose per-thread tables
it reuses, in the view's compaction mode, no calibration, no cost, no blocks): the least an edit's replay does.
`--rounds` rounds of the edits; medians.

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
profile, edits, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
thread = generate_thread(10_000)
cfg = Config.for_profile("iris")
view = build_view(thread, cfg, cfg, default_simulator)
edited = switch_profile(cfg, profile, thread)
view = build_view(thread, cfg, edited, default_simulator, baseline=view.baseline_replay, previous=view)
counter, summarizer = view.replay.ctx.counter, view.replay.ctx.summarizer
times, plain = [], []
for _ in range(rounds):
    for w in range(150_000, 150_000 - 10_000 * edits, -10_000):
        start = time.perf_counter()
        new = build_view(thread, cfg, edited.updated({"context.window": w}), default_simulator,
                         baseline=view.baseline_replay, previous=view)
        new.audit(len(new.requests) - 1)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=view.compactions == "recorded")
    REGISTRY[profile].replayer(thread, edited, ctx).timeline()
    plain.append(time.perf_counter() - start)
print(json.dumps({"edit": statistics.median(times), "edits": times, "timeline": statistics.median(plain),
                  "requests": len(view.requests)}))
"""


def _child(code: Path, profile: str, edits: int, rounds: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    run = subprocess.run([sys.executable, "-c", _CHILD, profile, str(edits), str(rounds)], cwd=code, env=env,
                         capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise SystemExit(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def bench_edit_engine(edits: int = 7, code: Path = ROOT, profiles=PROFILES, rounds: int = 3) -> None:
    from bench.results import RESULTS

    for profile in profiles:
        before = _load()
        row = _child(code, profile, edits, rounds)
        load = f"{before}-{_load()}"
        ratio = row["edit"] / row["timeline"]
        label = f"config edit's worker time, {profile}, bench thread" + ("" if code == ROOT else f" [{code}]")
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
    args = parser.parse_args()
    bench_edit_engine(args.edits, args.code.resolve(), tuple(p for p in args.profiles.split(",") if p),
                      args.rounds)


if __name__ == "__main__":
    main()
