"""Import speed against the plain-decode floor (issue 28 item 4), on the real fixtures.

    python -m bench.bench_import [DIR]      # default: ../shared/fixtures/real

Every `*.jsonl` transcript of DIR, in the same process, median of 3: (a) the floor, `json.loads` of
every line; (b) parsing (detection and the importer, no store); (c) `import_paths` into a new SQLite
store (parsing, repair, the store's writes). Ratios against (a); the machine's load is printed.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"


def _median(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_import(folder: Path = REAL) -> None:
    from bench.results import RESULTS
    from inspector.importers import REGISTRY, detect_format_text, import_paths
    from inspector.store import Store

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

    def full() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(f"sqlite:///{tmp}/bench.sqlite", read_only=False, create=True)
            try:
                import_paths(files, store)
            finally:
                store.close()

    base, parsed, imported = _median(floor), _median(parse), _median(full)
    load = os.getloadavg()[0]
    what = f"{len(files)} real transcripts, {size:,.1f} MiB"
    for label, value in (("parse (detection + importer)", parsed), ("import into SQLite", imported)):
        RESULTS.append((f"import: {what}", f"{label}: {value * 1000:,.0f} ms ({size / value:,.1f} MiB/s)",
                        f"json.loads per line: {base * 1000:,.0f} ms", f"{value / base:.1f}x the floor",
                        f"load {load:.1f}; target <= 3x"))
        print(f"{what}: {label} {value:.2f} s = {value / base:.1f}x json.loads per line ({base:.2f} s), "
              f"load {load:.1f}", flush=True)


if __name__ == "__main__":
    bench_import(Path(sys.argv[1]) if len(sys.argv) > 1 else REAL)
