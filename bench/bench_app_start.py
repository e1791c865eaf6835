"""The app's start on the bench thread, up to its first replay painted (issue 28 item 5), in a fresh
process each time, alternately for this checkout and another (`--code DIR`: e.g. main before a change).

    python -m bench.bench_app_start [--runs N] [--code DIR]

Each run: the bench thread (`generate_thread(10_000)`, iris) in a `MemorySource`, the app started with
Pilot (`bench.bench_tui`'s app and paint stamps, 160x48); from the start, the first paint, the
recorded counts on the chart painted, the first replay painted (the first render after
`MainScreen.first_view_at`), and, inside it, the first replay's `build_view` (the worker's engine
part, wrapped) and the Config form's rows made (`ConfigForm.build`, where the checkout has it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import asyncio, json, tempfile, time
from pathlib import Path
import bench.bench_tui as bt
from bench.generate import generate_thread
import inspector.controllers.replay as rp
T = {}
def stamp(name, f):
    def wrapped(*a, **k):
        T.setdefault(name + "_start", time.monotonic()); r = f(*a, **k); T.setdefault(name + "_end", time.monotonic())
        return r
    return wrapped
rp.build_view = stamp("build_view", rp.build_view)
from widgets.config_form import ConfigForm
if hasattr(ConfigForm, "build"):
    build = ConfigForm.build
    async def built(self):
        T.setdefault("form_start", time.monotonic()); await build(self); T.setdefault("form_end", time.monotonic())
    ConfigForm.build = built
async def main():
    thread = generate_thread(10_000)
    bt._stamp_paints()
    with tempfile.TemporaryDirectory() as d:
        app = bt._app(thread, Path(d))
        start = time.monotonic()
        async with app.run_test(size=bt.SIZE) as pilot:
            await bt._settle(app, pilot)
            s = app.main_screen
            out = {k: v - start for k, v in T.items()}
            out.update(painted=bt._painted_after(start) - start, recorded=bt._painted_after(s.recorded_shown_at) - start,
                       first_view=bt._painted_after(s.first_view_at) - start, widgets=len(list(app.screen.query("*"))))
            print(json.dumps(out))
asyncio.run(main())
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


KEYS = ("painted", "recorded", "build_view_start", "build_view_end", "first_view", "form_start", "form_end")


def bench_app_start(runs: int, other: Path | None) -> None:
    codes = [ROOT] + ([other] if other else [])
    _child(ROOT)  # fills the persistent token cache; not counted
    rows: dict[Path, list[dict]] = {code: [] for code in codes}
    loads = [_load()]
    for _ in range(runs):
        for code in codes:
            rows[code].append(_child(code))
            loads.append(_load())
    for code in codes:
        got = rows[code]
        parts = []
        for key in KEYS:
            values = [r[key] for r in got if key in r]
            if values:
                parts.append(f"{key} {statistics.median(values) * 1000:,.0f} ms "
                             f"({min(values) * 1000:,.0f}-{max(values) * 1000:,.0f})")
        engine = statistics.median(r["build_view_end"] - r["build_view_start"] for r in got)
        print(f"[{code}] medians of {runs}: " + "; ".join(parts) + f"; build_view itself {engine * 1000:,.0f} ms; "
              f"widgets at the end {got[0]['widgets']}", flush=True)
    print(f"load {min(loads)}-{max(loads)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", type=Path, default=None, help="another checkout, run alternately with this one")
    args = parser.parse_args()
    bench_app_start(args.runs, args.code.resolve() if args.code else None)


if __name__ == "__main__":
    main()
