"""Peak memory of replaying a 100,000-message thread, against the thread's own size."""

from __future__ import annotations

import gc
import sys
import tracemalloc

from bench.generate import generate_thread


def bench_memory(messages: int = 100_000) -> None:
    from bench.results import RESULTS
    from inspector.config import Config
    from inspector.pipeline import ReplayContext
    from inspector.pipeline.profiles.iris.replayer import IrisReplayer
    from inspector.summarizers.extractive import ExtractiveSummarizer
    from inspector.tokens import Chars4Tokenizer, TokenCounter

    gc.collect()
    tracemalloc.start()
    thread = generate_thread(messages, seed=5)
    gc.collect()
    thread_bytes, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    replayer = IrisReplayer(thread, Config.for_profile("iris"), ReplayContext(TokenCounter(Chars4Tokenizer()),
                                                                                ExtractiveSummarizer()))
    timeline = replayer.timeline()
    audit = replayer.audit(len(timeline) - 1)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    extra = peak - thread_bytes
    RESULTS.append((f"memory: replay of {len(thread.messages):,} messages / {len(timeline):,} requests",
                    f"peak above the loaded thread: {extra / 2**20:,.0f} MiB",
                    f"the loaded thread: {thread_bytes / 2**20:,.0f} MiB", f"{extra / thread_bytes:.2f}x",
                    f"timeline + one audit ({len(audit.blocks):,} blocks)"))
    print(f"memory: thread {thread_bytes / 2**20:.0f} MiB, replay peak +{extra / 2**20:.0f} MiB", flush=True)


if __name__ == "__main__":
    bench_memory(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
    from bench.results import RESULTS

    print(RESULTS)
