"""The fleet sweep's throughput: threads per second on the local pool and on a local Dask cluster
of 1, 2 and 4 workers, the peak memory of a worker, and 100,000 threads extrapolated.

    python -m bench.bench_fleet                      # 60 threads in a temporary SQLite file
    python -m bench.bench_fleet --threads 200 --db postgresql+psycopg://...   # an empty database
    python -m bench.bench_fleet --thread-sweep       # issue 28: sweep --thread of 10 values, --jobs 1 and 2

The threads are synthetic (`bench.generate`: tool outputs log-normal as in the Claude Code fixture),
each as long as a real session: message counts drawn from the Claude Code sessions of
`shared/fixtures/real` (read here by a parser of its own; their rate of recorded compactions is
printed beside the replayed one). Each run sweeps 5 values of `context.compaction_threshold` under
`iris` (which also compacts past `summarization.threshold` messages: more often than the agents).
The reference is the same sweep in this process, one thread after another (`--jobs 1`), measured in
the same run; the load average is said beside every figure (2 shared cores: 4 workers cannot be 4x).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
VALUES = [0.5, 0.6, 0.7, 0.8, 0.9]
WINDOW = 200_000


def real_sessions(folder: Path = FIXTURES) -> list[tuple[int, int]]:
    """(messages, compactions) of each Claude Code session file: user and assistant records, and
    `compact_boundary` records; a parser of its own, not the importer."""
    out = []
    for path in sorted(folder.glob("claude-code-*.jsonl")):
        messages = compactions = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            messages += record.get("type") in ("user", "assistant")
            compactions += record.get("subtype") == "compact_boundary"
        out.append((messages, compactions))
    return out


def build(url: str, count: int, sessions: list[tuple[int, int]], seed: int = 7) -> dict[str, float]:
    """`count` synthetic threads in the store at `url`; their size figures."""
    from bench.generate import generate_thread
    from inspector.store import Store

    rng = random.Random(seed)
    sizes = [rng.choice(sessions)[0] for _ in range(count)]
    with Store.open(url, read_only=False, create=True) as store:
        store.save_threads(generate_thread(n, seed=i, thread_id=f"fleet-{i:06d}", window=WINDOW)
                           for i, n in enumerate(sizes))
    return {"messages_median": statistics.median(sizes), "messages_total": sum(sizes)}


def peak_rss_mib() -> float:
    """This process's peak resident memory: Linux's VmHWM, the high-water mark of its own address
    space (ru_maxrss would also count the parent's memory at the fork a worker was spawned by)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def run_once(url: str, ids: list[str], executor, batch: int | None) -> tuple[float, list, dict]:
    from inspector.fleet import FleetSpec, run_fleet
    from inspector.sweep import combinations

    spec = FleetSpec(url, "iris", {}, combinations([("context.compaction_threshold", VALUES)]))
    start = time.perf_counter()
    result = run_fleet(spec, ids, executor, batch_threads=batch)
    seconds = time.perf_counter() - start
    assert not result.errors, result.errors[:3]
    return seconds, result.rows, result.executor


def thread_sweep(runs: int = 3) -> None:
    """`sweep --thread` of 10 thresholds on the 10,003-message bench thread at `--jobs 1` and `--jobs 2`,
    against one `simulate` of it (one replay), each a fresh process, medians of `runs`."""
    import subprocess
    import sys

    from bench.generate import generate_thread
    from bench.results import RESULTS
    from inspector.store import Store, sqlite_url

    tmp = tempfile.TemporaryDirectory()
    url = sqlite_url(Path(tmp.name) / "bench.sqlite")
    thread = generate_thread(10_000)
    with Store.open(url, read_only=False, create=True) as store:
        store.save_thread(thread)
    base = [sys.executable, "-m", "inspector"]
    values = ",".join(str(round(0.45 + 0.05 * i, 2)) for i in range(10))
    commands = {
        "simulate": [*base, "simulate", "--thread", thread.id, "--db", url, "--profile", "iris"],
        "sweep --jobs 1": [*base, "sweep", "--thread", thread.id, "--db", url, "--profile", "iris", "--jobs", "1",
                           "--key", f"context.compaction_threshold={values}"],
        "sweep --jobs 2": [*base, "sweep", "--thread", thread.id, "--db", url, "--profile", "iris", "--jobs", "2",
                           "--key", f"context.compaction_threshold={values}"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    loads = [load()]
    for _ in range(runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - start)
        loads.append(load())
    one = statistics.median(times["simulate"])
    for name in ("sweep --jobs 1", "sweep --jobs 2"):
        t = statistics.median(times[name])
        print(f"{name}: {t:.2f} s, simulate {one:.2f} s: {t / one:.2f}x (load {loads[0]}-{loads[-1]})", flush=True)
        RESULTS.append((f"sweep --thread: {len(thread.messages):,} messages x 10 thresholds (a fresh process)",
                        f"{name}: {t * 1000:,.0f} ms", f"simulate (one replay): {one * 1000:,.0f} ms",
                        f"{t / one:.2f}x one replay", f"median of {runs}; load {loads[0]}-{loads[-1]}; target at "
                        "--jobs 2: 1.5x"))
    for row in RESULTS:
        print("| " + " | ".join(row) + " |")
    tmp.cleanup()


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=60)
    parser.add_argument("--db", help="an empty database URL (default: a temporary SQLite file)")
    parser.add_argument("--workers", default="1,2,4", help="Dask cluster sizes")
    parser.add_argument("--memory-threads", type=int, default=0,
                        help="also measure a 1-worker cluster's peak memory at this many threads (flat in N?)")
    parser.add_argument("--thread-sweep", action="store_true", help="time sweep --thread instead (issue 28)")
    args = parser.parse_args()
    if args.thread_sweep:
        thread_sweep()
        return
    from bench.results import RESULTS
    from inspector.fleet.executors import DaskExecutor, LocalExecutor
    from inspector.store import Store, sqlite_url

    sessions = real_sessions()
    assert sessions, f"no Claude Code sessions in {FIXTURES}"
    tmp = tempfile.TemporaryDirectory()
    url = args.db or sqlite_url(Path(tmp.name) / "fleet.sqlite")
    shape = build(url, args.threads, sessions)
    with Store.open(url) as store:
        ids = store.thread_ids()[: args.threads]
    real_rate = sum(c for _, c in sessions) / sum(m for m, _ in sessions)
    print(f"{len(ids)} threads, median {shape['messages_median']:.0f} messages (real sessions: "
          f"{sorted(m for m, _ in sessions)}; {real_rate * 1000:.1f} compactions per 1,000 messages)", flush=True)

    figures: list[tuple[str, float, dict, str]] = []
    ref_load = load()
    reference, ref_rows, _ = run_once(url, ids, LocalExecutor(1), None)
    ref_rate = len(ids) / reference
    compactions = next(r for _, r in ref_rows).compactions
    print(f"reference (this process, one thread after another): {ref_rate:.2f} threads/s, load {ref_load}", flush=True)
    before = load()
    seconds, rows, info = run_once(url, ids, LocalExecutor(2), None)
    assert rows == ref_rows
    figures.append(("local pool, 2 processes", len(ids) / seconds, info, f"load {before}-{load()}"))
    memory: dict[int, float] = {}
    for n in [int(w) for w in args.workers.split(",")]:
        executor = DaskExecutor(workers=n)
        try:
            before = load()
            seconds, rows, info = run_once(url, ids, executor, None)
            assert rows == ref_rows
            peaks = executor.client.run(peak_rss_mib)
            memory[n] = max(peaks.values())
            figures.append((f"Dask local cluster, {n} worker{'s' if n > 1 else ''}", len(ids) / seconds, info,
                            f"load {before}-{load()}; peak per worker {memory[n]:.0f} MiB"))
        finally:
            executor.close()
        print(f"{figures[-1][0]}: {figures[-1][1]:.2f} threads/s ({figures[-1][3]})", flush=True)
    by_n = {}
    if args.memory_threads:
        for n_threads in (args.threads, args.memory_threads):
            url2 = sqlite_url(Path(tmp.name) / f"m{n_threads}.sqlite")
            build(url2, n_threads, sessions, seed=11)
            with Store.open(url2) as store:
                ids2 = store.thread_ids()
            executor = DaskExecutor(workers=1)
            try:
                run_once(url2, ids2, executor, 10)
                by_n[n_threads] = max(executor.client.run(peak_rss_mib).values())
            finally:
                executor.close()
        print(f"peak memory of one worker, batches of 10 threads: {by_n}", flush=True)

    label = f"fleet: {len(ids)} threads (median {shape['messages_median']:.0f} messages) x {len(VALUES)} thresholds"
    for name, rate, info, note in figures:
        hours = 100_000 / rate / 3600
        RESULTS.append((label, f"{name}: {rate:.2f} threads/s", f"this process, one after another: {ref_rate:.2f}/s",
                        f"{rate / ref_rate:.2f}x", f"{note}; 100,000 threads in {hours:.1f} h at this rate; "
                        f"{info['workers']} workers"))
    one = next((r for n, r, _, _ in figures if n.endswith(" 1 worker")), None)
    four = next((r for n, r, _, _ in figures if n.endswith(" 4 workers")), None)
    if one and four:
        RESULTS.append((label, f"Dask 4 workers: {four:.2f} threads/s", f"Dask 1 worker: {one:.2f} threads/s",
                        f"{four / one:.2f}x", f"target 3x needs 4 cores; this machine has {os.cpu_count()}"))
    if by_n:
        (n1, m1), (n2, m2) = sorted(by_n.items())
        RESULTS.append(("fleet: peak memory of one Dask worker, batches of 10 threads",
                        f"{n2} threads: {m2:.0f} MiB", f"{n1} threads: {m1:.0f} MiB", f"{m2 / m1:.2f}x",
                        "flat in N: bounded by the batch"))
    print(f"replayed compactions at threshold {VALUES[0]}: {compactions * 1000 / shape['messages_total']:.1f} per "
          f"1,000 messages (real sessions: {real_rate * 1000:.1f})")
    print("\n| benchmark | subject | reference | ratio | note |\n|---|---|---|---|---|")
    for row in RESULTS:
        print("| " + " | ".join(row) + " |")
    tmp.cleanup()


if __name__ == "__main__":
    main()
