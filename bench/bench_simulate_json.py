"""`simulate --json` streamed: peak memory and time against the output's size (issue 28 item 2).

    python -m bench.bench_simulate_json [MESSAGES ...]     # default: 2500 5000 10000

Each thread (bench/generate.py, 10,003 messages for the bench thread) is saved to a SQLite store and
`context-inspector simulate --json` runs in a child process writing to /dev/null: its peak RSS (the
child's ru_maxrss) and wall time, with `--blocks all`, `changed` and `none`. The reference, in the same
run: `--blocks none` (one replay and the timeline, no block lists). "Linear in the output": the time
per MB written stays flat as the thread grows (the output itself grows as requests x blocks).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.generate import generate_thread


def _run(db: Path, thread_id: str, blocks: str) -> tuple[float, int, int]:
    """(seconds, peak RSS bytes, bytes written) of one `simulate --json --blocks BLOCKS` in a child."""
    code = (
        "import os, resource, sys, time\n"
        "from inspector.cli import main\n"
        "class Sink:\n"
        "    n = 0\n"
        "    def write(self, s):\n"
        "        self.n += len(s.encode('utf-8', 'surrogatepass'))\n"
        "        return len(s)\n"
        "    def flush(self): pass\n"
        "    def isatty(self): return False\n"
        "sink = Sink(); real = sys.stdout; sys.stdout = sink\n"
        "t0 = time.perf_counter()\n"
        "try:\n"
        f"    main(['simulate', '--thread', {thread_id!r}, '--db', {str(db)!r}, '--json', '--blocks', {blocks!r}],"
        " standalone_mode=False)\n"
        "finally:\n"
        "    sys.stdout = real\n"
        "print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, sink.n)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TIKTOKEN_CACHE_DIR": "/nonexistent-offline"})
    seconds, rss, written = out.stdout.split()[-3:]
    return float(seconds), int(rss), int(written)


def bench_simulate_json(sizes: tuple[int, ...] = (2_500, 5_000, 10_000)) -> None:
    from bench.results import RESULTS
    from inspector.store import Store

    for messages in sizes:
        thread = generate_thread(messages)
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.sqlite"
            store = Store.open(f"sqlite:///{db}", read_only=False, create=True)
            try:
                store.save_thread(thread)
            finally:
                store.close()
            ref_s, ref_rss, ref_bytes = _run(db, thread.id, "none")
            n = f"{len(thread.messages):,} messages / {len(thread.requests):,} requests"
            for blocks in ("all", "changed"):
                seconds, rss, written = _run(db, thread.id, blocks)
                per_mb = seconds / (written / 2**20)
                RESULTS.append((f"simulate --json --blocks {blocks} ({n})",
                                f"{seconds:,.1f} s, peak {rss / 2**20:,.0f} MiB, {written / 2**20:,.0f} MiB written",
                                f"--blocks none: {ref_s:,.1f} s, peak {ref_rss / 2**20:,.0f} MiB",
                                f"{seconds / ref_s:.1f}x the time, {rss / ref_rss:.2f}x the memory",
                                f"{per_mb * 1000:,.0f} ms per MiB written; target peak < 400 MB"))
                print(f"{n} --blocks {blocks}: {seconds:.1f} s, peak {rss / 2**20:.0f} MiB, "
                      f"{written / 2**20:.0f} MiB, {per_mb * 1000:.0f} ms/MiB (none: {ref_s:.1f} s, "
                      f"{ref_rss / 2**20:.0f} MiB, {ref_bytes / 2**20:.1f} MiB)", flush=True)


if __name__ == "__main__":
    bench_simulate_json(tuple(int(a) for a in sys.argv[1:]) or (2_500, 5_000, 10_000))
