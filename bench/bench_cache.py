"""The prompt-cache model against the real Claude Code sessions, and the speed of a sweep.

    python -m bench.bench_cache [FIXTURES_DIR]      # accuracy on every claude-code*.jsonl there
    python -m bench.bench_cache --sweep             # sweep of the 10,000-message thread, 10 values,
                                                    # and what the cache model adds to one edit

Accuracy: each session (Claude Code, and Codex rollouts apart) is imported, replayed at its
baseline in recorded mode (the thread's own profile and config, its recorded compactions
followed), and every request that recorded its cache read is compared: recorded share =
cache_read / billed prompt as the provider billed it; predicted share = `budget.cache_read_tokens` / billed prompt tokens. The
figures: requests within 5 percentage points, and recorded compactions that the model marks
as a cache break. Sub-agent threads of a file are reported in their own rows.

Sweep: `sweep.sweep_thread` over 10 values of `context.compaction_threshold` on the
10,003-message thread of `bench/generate.py`, against the reference of 10 plain replays of
the same configs (timeline only, no cache model) measured in the same process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.results import RESULTS

DEFAULT_FIXTURES = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "real"
WITHIN = 0.05
COMPACTION_WITHIN = 0.10  # at a compaction: the system prefix read, everything past it written (issue 22)


@dataclass
class Figures:
    name: str
    requests: int = 0
    within: int = 0
    compactions: int = 0
    compaction_breaks: int = 0
    cost: float | None = 0.0
    recorded_cost: float | None = 0.0
    summarization_cost: float | None = 0.0
    compactions_read: int = 0  # recorded compactions with a recorded cache read
    compactions_within: int = 0  # of those, the replayed cache-read share within 10 pp of the recorded one

    @property
    def share_within(self) -> float:
        return self.within / self.requests if self.requests else 0.0


def thread_figures(name: str, replay) -> Figures:
    from inspector.pipeline.accounting import billed_prompt_tokens

    fig = Figures(name)
    sim = replay.simulation(blocks=False)
    for r in sim.requests:
        b = r.budget
        if r.compaction is not None:
            fig.compactions += 1
            fig.compaction_breaks += b.cache_break is not None
        if r.failed or b.recorded_cache_read_tokens is None or not b.recorded_prompt_tokens:
            continue
        billed = billed_prompt_tokens(b)
        recorded = b.recorded_cache_read_tokens / b.recorded_prompt_tokens
        predicted = (b.cache_read_tokens or 0) / billed if billed else 0.0
        fig.requests += 1
        fig.within += abs(recorded - predicted) <= WITHIN
        if r.compaction is not None:
            fig.compactions_read += 1
            fig.compactions_within += abs(recorded - predicted) <= COMPACTION_WITHIN
    totals = replay.cost_totals()
    fig.cost = totals.cost if totals else None
    fig.recorded_cost = totals.recorded_cost if totals else None
    fig.summarization_cost = totals.summarization_cost if totals else None
    return fig


def accuracy(fixtures: Path) -> list[Figures]:
    from inspector.importers import import_paths
    from inspector.service import load_config, run_replay
    from inspector.store import Store

    out: list[Figures] = []
    files = sorted(fixtures.glob("claude-code*.jsonl")) + sorted(fixtures.glob("codex*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            db = Path(tmp) / (path.stem + ".sqlite")
            with Store.open(str(db), read_only=False, create=True) as store:
                import_paths([str(path)], store, fmt="codex" if path.name.startswith("codex") else "claude-code")
            with Store.open(str(db)) as store:
                threads = [store.load_thread(i.id) for i in store.list_threads()]
            for thread in threads:
                config = load_config(None, {}, thread=thread)
                replay = run_replay(thread, config, baseline=True)
                label = path.stem if not thread.meta.get("parent_thread_id") else f"{path.stem} / {thread.id[-14:]}"
                out.append(thread_figures(label, replay))
    return out


def report_accuracy(figures: list[Figures]) -> None:
    total = Figures("all Claude Code")
    for f in figures:
        if f.name.startswith("codex"):
            continue
        total.requests += f.requests
        total.within += f.within
        total.compactions += f.compactions
        total.compaction_breaks += f.compaction_breaks
        total.compactions_read += f.compactions_read
        total.compactions_within += f.compactions_within
    print("| session | requests with a recorded cache read | predicted share within 5 pp | recorded compactions "
          "marked as cache breaks | compactions' read share within 10 pp | replayed cost (summarization calls) "
          "| recorded cost |")
    print("|---|---|---|---|---|---|---|")
    for f in [*figures, total]:
        if not f.requests and not f.compactions:
            continue  # nothing recorded to compare (a rollout without token counts)
        cost = "-" if f.cost is None or f is total else f"${f.cost:,.2f}"
        if f is not total and f.summarization_cost:
            cost += f" (${f.summarization_cost:,.2f})"
        rec = "-" if f.recorded_cost is None or f is total else f"${f.recorded_cost:,.2f}"
        at = f"{f.compactions_within} of {f.compactions_read}" if f.compactions_read else "-"
        print(f"| {f.name} | {f.requests} | {f.within} ({f.share_within:.0%}) | "
              f"{f.compaction_breaks} of {f.compactions} | {at} | {cost} | {rec} |")
    RESULTS.append(("cache: predicted cache-read share within 5 pp, real Claude Code sessions",
                    f"{total.within} of {total.requests} requests", "recorded shares", f"{total.share_within:.0%}",
                    f"{total.compaction_breaks} of {total.compactions} compactions marked as breaks"))


def bench_sweep() -> None:
    import statistics

    from bench.generate import generate_thread
    from inspector import sweep
    from inspector.service import load_config, run_replay

    thread = generate_thread(10_000)
    base = load_config("iris", {}, path=Path("/nonexistent/config.toml"), thread=thread)
    values = [round(0.45 + 0.05 * i, 2) for i in range(10)]
    combos = sweep.combinations([("context.compaction_threshold", values)])
    run_replay(thread, base)  # the summarizer's first scan and the token counts, as in the app: not timed
    sweep_times, plain_times = [], []
    for _ in range(3):
        start = time.perf_counter()
        rows = sweep.sweep_thread(thread, base, combos)
        sweep_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        for combo in combos:
            run_replay(thread, base.updated(combo)).timeline  # noqa: B018 - the work is the replay
        plain_times.append(time.perf_counter() - start)
    s, p = statistics.median(sweep_times), statistics.median(plain_times)
    print(f"sweep of {len(thread.messages):,} messages x {len(values)} values: {s:.2f} s "
          f"(plain replays of the same configs {p:.2f} s; cache model and cost x{s / p:.2f}); "
          f"compactions {rows[0].compactions}..{rows[-1].compactions}", flush=True)
    RESULTS.append((f"sweep: {len(thread.messages):,} messages x 10 thresholds", f"sweep_thread: {s * 1000:,.0f} ms",
                    f"10 plain replays: {p * 1000:,.0f} ms", f"{s / p:.2f}x the plain replays",
                    "cache model and cost on every request of every row"))


def bench_edit_cost() -> None:
    """What the cache model adds to one config edit: `Replay.costs` against the replay itself
    (timeline, calibration), CPU time, median of 9, on the 10,003-message thread."""
    import statistics

    from bench.generate import generate_thread
    from inspector.service import load_config, run_replay

    thread = generate_thread(10_000)
    base = load_config("iris", {}, path=Path("/nonexistent/config.toml"), thread=thread)
    run_replay(thread, base).costs  # noqa: B018 - per-thread tables and the summarizer's scan, not timed
    replays, costs = [], []
    for i in range(9):
        config = base.updated({"context.compaction_threshold": round(0.6 + 0.01 * i, 2)})
        c0 = time.process_time()
        replay = run_replay(thread, config)
        c1 = time.process_time()
        replay.costs  # noqa: B018 - the work measured
        c2 = time.process_time()
        replays.append(c1 - c0)
        costs.append(c2 - c1)
    r, c = statistics.median(replays), statistics.median(costs)
    print(f"cache model per edit: {c * 1000:.0f} ms CPU (the replay itself {r * 1000:.0f} ms)", flush=True)
    RESULTS.append((f"cache: the prompt cache and cost of every request of one edit ({len(thread.messages):,} "
                    "messages)", f"Replay.costs: {c * 1000:,.0f} ms CPU", f"the replay: {r * 1000:,.0f} ms CPU",
                    f"{c / r:.2f}x the replay", "median of 9 edits of context.compaction_threshold"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fixtures", nargs="?", default=str(DEFAULT_FIXTURES))
    parser.add_argument("--sweep", action="store_true", help="time the sweep of the 10,000-message thread")
    args = parser.parse_args(argv)
    if args.sweep:
        bench_sweep()
        bench_edit_cost()
        return 0
    fixtures = Path(args.fixtures)
    if not fixtures.is_dir():
        print(f"no fixtures directory {fixtures}", file=sys.stderr)
        return 2
    report_accuracy(accuracy(fixtures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
