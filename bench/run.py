"""Benchmarks: every figure is a ratio against a reference run in the same process.

    python -m bench.run                 # all
    python -m bench.run tokens replay   # some

Prints a markdown table of medians and ratios (copied into bench/RESULTS.md).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable

from bench.generate import generate_thread
from bench.results import RESULTS  # noqa: E402


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def record(name: str, subject: str, subject_s: float, reference: str, reference_s: float) -> None:
    ratio = reference_s / subject_s if subject_s else float("inf")
    RESULTS.append((name, f"{subject}: {subject_s * 1000:,.1f} ms", f"{reference}: {reference_s * 1000:,.1f} ms",
                    f"{ratio:,.1f}x", ""))
    print(f"{name}: {subject} {subject_s * 1000:,.1f} ms vs {reference} {reference_s * 1000:,.1f} ms -> {ratio:,.2f}x",
          flush=True)


def bench_tokens() -> None:
    """First tokenization of a 10,000-message thread: TokenCounter vs tiktoken directly."""
    from inspector.encodings import TiktokenTokenizer
    from inspector.tokens import TokenCounter

    thread = generate_thread(10_000)
    texts = [m.text_for_count() for m in thread.messages]
    tokenizer = TiktokenTokenizer("cl100k_base")
    enc = tokenizer.encoding
    direct = median_time(lambda: [len(x) for x in enc.encode_batch(texts, disallowed_special=())], 3)
    ours = median_time(lambda: TokenCounter(tokenizer).count_all(texts), 3)
    assert TokenCounter(tokenizer).count_all(texts) == [len(enc.encode(t, disallowed_special=())) for t in texts]
    overhead = ours / direct
    RESULTS.append(("tokens: first count, 10k messages, cl100k_base", f"TokenCounter: {ours * 1000:,.0f} ms",
                    f"tiktoken encode_batch: {direct * 1000:,.0f} ms", f"overhead {overhead:.2f}x", "<= 1.3x"))
    print(f"tokens: overhead {overhead:.2f}x ({ours:.2f}s vs {direct:.2f}s)", flush=True)
    try:
        from inspector.state import StateDB
    except ImportError:
        return
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        db = StateDB(Path(tmp) / "state.sqlite")
        cached = median_time(lambda: TokenCounter(tokenizer, persistent=db.token_cache()).count_all(texts), 3)
        RESULTS.append(("tokens: with the persistent cache (1st run fills, then hits)",
                        f"TokenCounter+state DB: {cached * 1000:,.0f} ms", f"tiktoken encode_batch: {direct * 1000:,.0f} ms",
                        f"{direct / cached:.2f}x faster", "median of 3: 1 fill + 2 hits"))


def bench_replay() -> None:
    """Timeline of a 10,000-message, ~2,500-request thread under a new config, against the reference.

    Two set-ups for the summarizer, which both sides call for every compaction:
    - as in the app: it has seen the thread's messages (the baseline replay scanned them) but
      writes every summary of the new config afresh;
    - cold: a new summarizer per run, so both sides also scan every message once.
    """
    from inspector.config import Config
    from inspector.pipeline import ReplayContext
    from inspector.pipeline.profiles.iris.replayer import IrisReplayer
    from inspector.summarizers.extractive import ExtractiveSummarizer
    from inspector.tokens import Chars4Tokenizer, TokenCounter
    from tests.reference.iris import replay_reference

    thread = generate_thread(10_000)
    config = Config.for_profile("iris", {"context.compaction_threshold": 0.6, "context.prune_protect_turns": 3})
    counter = TokenCounter(Chars4Tokenizer())
    counter.count_all(m.text_for_count() for m in thread.messages)  # both sides start with counted texts
    seen = ExtractiveSummarizer()
    IrisReplayer(thread, Config.for_profile("iris"), ReplayContext(counter, seen)).timeline()  # the baseline

    in_app = 0.0
    for label, ctx in (("as in the app", lambda: ReplayContext(counter, seen.sharing_features())),
                       ("cold summarizer", lambda: ReplayContext(counter, ExtractiveSummarizer()))):
        fast_result: list = []
        fast = median_time(lambda ctx=ctx, out=fast_result: out.append(IrisReplayer(thread, config, ctx()).timeline()),
                           5)
        ref_result: list = []
        reference = median_time(lambda ctx=ctx, out=ref_result: out.append(replay_reference(thread, config, ctx())[0]),
                                1)
        same = [r.timeline_json() for r in fast_result[-1]] == [r.timeline_json() for r in ref_result[-1]]
        assert same, "fast and reference timelines differ"
        compactions = sum(1 for r in ref_result[-1] if r.compaction is not None)
        RESULTS.append((f"replay: timeline of {len(thread.messages):,} messages / {len(thread.requests):,} requests, "
                        f"{label}", f"IrisReplayer: {fast * 1000:,.0f} ms", f"reference: {reference * 1000:,.0f} ms",
                        f"{reference / fast:,.0f}x", f">= 20x, identical timelines; {compactions} compactions"))
        print(f"replay ({label}): {reference / fast:,.1f}x ({fast:.3f}s vs {reference:.1f}s)", flush=True)
        in_app = fast if label == "as in the app" else in_app
    replayer = IrisReplayer(thread, config, ReplayContext(counter, seen.sharing_features()))
    replayer.timeline()
    last = len(thread.requests) - 1
    one = median_time(lambda: replayer.audit(last), 5)
    RESULTS.append(("replay: one request's full audit (last request)", f"audit(k): {one * 1000:,.1f} ms",
                    f"timeline (as in the app): {in_app * 1000:,.0f} ms", f"{in_app / one:,.1f}x",
                    "arrow-key stepping: blocks of one request, 10,000 here"))
    bench_replay_harness(thread, counter, seen)


def bench_replay_harness(thread, counter, seen) -> None:
    """The harness profile's timeline on the same thread: HarnessReplayer vs the reference (tests/reference/harness.py)."""
    from inspector.config import Config
    from inspector.pipeline import ReplayContext
    from inspector.pipeline.profiles.harness.replayer import HarnessReplayer
    from tests.reference.harness import replay_reference

    # A 100k window with triggers read from the replay itself (the recorded prompt sizes were
    # measured under a 200k window); the summarizer as in the app (see bench_replay).
    config = Config.for_profile("harness", {"context.window": 100_000, "context.trigger_tokens": "estimated"})

    def ctx():
        return ReplayContext(counter, seen.sharing_features())

    fast_result: list = []
    fast = median_time(lambda: fast_result.append(HarnessReplayer(thread, config, ctx()).timeline()), 5)
    ref_result: list = []
    reference = median_time(lambda: ref_result.append(replay_reference(thread, config, ctx())[0]), 1)
    same = [r.timeline_json() for r in fast_result[-1]] == [r.timeline_json() for r in ref_result[-1]]
    assert same, "fast and reference harness timelines differ"
    compactions = sum(1 for r in ref_result[-1] if r.compaction is not None)
    RESULTS.append((f"replay (harness): timeline of {len(thread.messages):,} messages / {len(thread.requests):,} "
                    "requests", f"HarnessReplayer: {fast * 1000:,.0f} ms", f"reference: {reference * 1000:,.0f} ms",
                    f"{reference / fast:,.0f}x", f"identical timelines; {compactions} compactions, window 100k, "
                    "summarizer as in the app"))
    print(f"replay harness: {reference / fast:,.1f}x ({fast:.3f}s vs {reference:.1f}s), identical={same}", flush=True)
    replayer = HarnessReplayer(thread, config, ctx())
    replayer.timeline()
    last = len(thread.requests) - 1
    one = median_time(lambda: replayer.audit(last), 5)
    RESULTS.append(("replay (harness): one request's full audit (last request)", f"audit(k): {one * 1000:,.1f} ms",
                    f"timeline: {fast * 1000:,.0f} ms", f"{fast / one:,.1f}x", "arrow-key stepping"))


def bench_memory() -> None:
    from bench.bench_memory import bench_memory as run

    run()


def bench_shifting() -> None:
    from bench.bench_shifting import bench_shifting as run

    run()


def bench_tui() -> None:
    from bench.bench_tui import bench_tui as run
    from bench.bench_tui import bench_tui_memory, bench_tui_profiles

    run()
    bench_tui_profiles()
    bench_tui_memory()


def bench_first_replay() -> None:
    from bench.bench_first_replay import bench_features
    from bench.bench_first_replay import bench_first_replay as run

    run()
    bench_features()


def bench_repairs() -> None:
    from bench.bench_repairs import bench_repairs as run

    run()


def bench_reliability() -> None:
    from bench.bench_reliability import bench_reliability as run

    run()


def bench_agents() -> None:
    from bench.bench_agents import bench_agents as run

    run()


def bench_calibration() -> None:
    from bench.bench_calibration import run

    run()


def bench_cache() -> None:
    from bench.bench_cache import DEFAULT_FIXTURES, accuracy, bench_edit_cost, bench_sweep, report_accuracy

    bench_sweep()
    bench_edit_cost()
    if DEFAULT_FIXTURES.is_dir():
        report_accuracy(accuracy(DEFAULT_FIXTURES))


def bench_budget_pane() -> None:
    from bench.bench_budget_pane import bench_budget_pane as run

    run()


BENCHES: dict[str, Callable[[], None]] = {
    "tokens": bench_tokens,
    "replay": bench_replay,
    "shifting": bench_shifting,
    "memory": bench_memory,
    "tui": bench_tui,
    "first-replay": bench_first_replay,
    "repairs": bench_repairs,
    "reliability": bench_reliability,
    "agents": bench_agents,
    "calibration": bench_calibration,
    "cache": bench_cache,
    "budget-pane": bench_budget_pane,
}


def main(argv: list[str]) -> None:
    names = argv or list(BENCHES)
    for name in names:
        BENCHES[name]()
    print()
    print("| benchmark | subject (median) | reference (median) | ratio | note |")
    print("|---|---|---|---|---|")
    for row in RESULTS:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
