"""Import speed against the plain-decode floor (issue 28 item 4), on the real fixtures.

    python -m bench.bench_import [DIR] [--stages]     # default: ../shared/fixtures/real

Every `*.jsonl` transcript of DIR, in the same process, median of 3: (a) the floor, `json.loads` of
every line, in this one process; (b) parsing (detection and the importer, no store); (c) `import_paths`
into a new SQLite store as the CLI's `import` runs it (`--jobs` by default: `default_jobs()` processes
parsing, forked children beside this one, which writes); (c1) the same in one process (`--jobs 1`);
(d) one process with the store's rows written as they were before issue 28 (SQLAlchemy's inserts of
the row dicts, `json.dumps`: tests/reference/store_rows.py); (c), (c1) and (d) alternately. Ratios
against (a); the machine's load is printed, and the CPU time of this process and of its children in
(c). `--stages`: where (c1)'s time goes (the median of 3 one-process imports, each stage timed around
its call; the children's time cannot be timed from here), each against the floor.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"


def _median(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_import(folder: Path = REAL, stages: bool = False) -> None:
    from bench.results import RESULTS
    from inspector.importers import REGISTRY, default_jobs, detect_format_text, import_paths
    from inspector.store import Store, bulk
    from tests.reference import store_rows

    files = sorted(folder.glob("*.jsonl"))
    texts = [(p, p.read_text(encoding="utf-8")) for p in files]
    size = sum(len(t) for _, t in texts) / 2**20

    def floor() -> None:
        for _, text in texts:
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)

    def parse() -> None:
        for path, text in texts:
            REGISTRY[detect_format_text(path.name, text)].parse_text(text, path.name)

    jobs = default_jobs()
    cpu: list[tuple[float, float]] = []

    def full(jobs: int = jobs) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(f"sqlite:///{tmp}/bench.sqlite", read_only=False, create=True)
            try:
                import_paths(files, store, jobs=jobs)
            finally:
                store.close()

    def cli() -> None:
        here, children = time.process_time(), _children_cpu()
        full()
        cpu.append((time.process_time() - here, _children_cpu() - children))

    def before() -> None:
        with mock.patch.object(bulk, "write_rows", store_rows.write_rows):
            full(1)

    base, parsed = _median(floor), _median(parse)
    runs = [(_median(cli, 1), _median(lambda: full(1), 1), _median(before, 1)) for _ in range(3)]
    imported, alone, old = (statistics.median(r[k] for r in runs) for k in range(3))
    load = os.getloadavg()[0]
    what = f"{len(files)} real transcripts, {size:,.1f} MiB"
    cpu.sort()
    print(f"import as the CLI runs it: --jobs {jobs} ({jobs - 1} parse child(ren) beside this process, which "
          f"writes); CPU of this process {cpu[1][0]:.2f} s, of the children {cpu[1][1]:.2f} s (the median run)")
    for label, value in (("parse (detection + importer)", parsed),
                         (f"import into SQLite, as the CLI (--jobs {jobs})", imported),
                         ("import into SQLite, one process (--jobs 1)", alone),
                         ("import into SQLite, one process, the rows written as before (SQLAlchemy inserts)", old)):
        RESULTS.append((f"import: {what}", f"{label}: {value * 1000:,.0f} ms ({size / value:,.1f} MiB/s)",
                        f"json.loads per line: {base * 1000:,.0f} ms", f"{value / base:.2f}x the floor",
                        f"load {load:.1f}; target <= 3x"))
        print(f"{what}: {label} {value:.3f} s = {value / base:.2f}x json.loads per line ({base:.3f} s), "
              f"load {load:.1f}", flush=True)
    if stages:
        _stages(lambda: full(1), base)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _stages(full, base: float) -> None:
    """Each stage of an import timed around its call (nested stages are inside their callers' time; the
    decoding's count includes the detection's sample)."""
    import inspector.importers as importers
    from inspector.importers import _common
    from inspector.store import Store, bulk, native

    spent: dict[str, float] = {}

    def timed(owner, name: str, label: str):
        inner = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start
        return mock.patch.object(owner, name, wrapper)

    built = "    of which built (JSON text, tuples)"

    def rows(self, items, ascii):  # the rows' values (JSON text, tuples), apart from the database's insert
        start = time.perf_counter()
        try:
            return build(self, items, ascii)
        finally:
            spent[built] = spent.get(built, 0.0) + time.perf_counter() - start

    build = bulk._Table._build_all
    patches = [timed(Store, "open", "store: open (the schema)"),
               timed(importers, "read_text_hashed", "read + hash"),
               timed(importers, "detect_format_text", "detection"),
               timed(importers, "find_companions", "sub-agent files looked for"),
               timed(importers, "parse_text", "parse + repair"),
               timed(_common, "_fast_loads", "  of which decoding the lines (msgspec)"),
               timed(importers, "sanitize_thread", "  of which the repair"),
               timed(native.ImportBatch, "save_file", "store: save_file"),
               timed(bulk._Table, "write", "  of which the rows (built + executemany)"),
               timed(native.ImportBatch, "commit", "store: commit"),
               timed(tempfile.TemporaryDirectory, "cleanup", "the bench's database deleted"),
               mock.patch.object(bulk._Table, "_build_all", rows)]
    runs = []
    for _ in range(3):
        spent.clear()
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            start = time.perf_counter()
            full()
            spent["whole import"] = time.perf_counter() - start
        runs.append(dict(spent))
    print(f"stages (median of 3 imports; floor {base:.2f} s, load {os.getloadavg()[0]:.1f}):")
    order = ["store: open (the schema)", "read + hash", "detection", "sub-agent files looked for", "parse + repair",
             "  of which decoding the lines (msgspec)", "  of which the repair", "store: save_file",
             "  of which the rows (built + executemany)", built, "store: commit", "the bench's database deleted",
             "whole import"]
    for label in [*order, *(label for label in runs[0] if label not in order)]:
        value = statistics.median(r.get(label, 0.0) for r in runs)
        print(f"  {label:42s} {value:6.3f} s  {value / base:4.2f}x the floor", flush=True)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--stages"]
    bench_import(Path(args[0]) if args else REAL, stages="--stages" in sys.argv[1:])
