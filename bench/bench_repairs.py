"""Repairs and long texts at scale (issue 15): linear repairs, chunked tokenization.

Each figure is a ratio in one process: the repair at size 2N against the same repair at size N
(linear: about 2x; the quadratic and cubic versions they replace were 4x and 8x), and counting a
20 M-character text in chunks against tiktoken encoding it whole (time, and peak memory measured
by tracemalloc).
"""

from __future__ import annotations

import tracemalloc

from bench.results import RESULTS
from inspector.model import Message, Role, Summary, Thread
from inspector.thread_repair import sanitize_thread


def _median_time(fn, repeat: int = 3) -> float:
    from bench.run import median_time

    return median_time(fn, repeat)


def _dups(n: int) -> Thread:
    return Thread(id="t", messages=tuple(Message(id="x", role=Role.USER, content=str(i)) for i in range(n)))


def _chain(n: int) -> Thread:
    messages = tuple(Message(id=f"m{i}", role=Role.USER, content="c") for i in range(n))
    summaries = tuple(Summary(id=f"s{i}", first_message_id=f"m{i}", last_message_id=f"m{i}", summary="s",
                              previous_summary_id=f"s{i - 1}" if i else None) for i in range(n))
    return Thread(id="t", messages=messages, summaries=summaries)


def _scaling(name: str, build, n: int) -> None:
    small, large = build(n), build(2 * n)
    t_small = _median_time(lambda: sanitize_thread(small, "bench"))
    t_large = _median_time(lambda: sanitize_thread(large, "bench"))
    RESULTS.append((f"repairs: {name}", f"{2 * n:,}: {t_large * 1000:,.1f} ms", f"{n:,}: {t_small * 1000:,.1f} ms",
                    f"{t_large / t_small:,.2f}x for 2x the input", "linear: about 2x (quadratic 4x, cubic 8x)"))
    print(RESULTS[-1], flush=True)


def _peak(fn) -> tuple[float, int]:
    import time

    tracemalloc.start()
    try:
        start = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert value is not None
    return elapsed, peak


def bench_repairs() -> None:
    _scaling("repeated message ids renamed", _dups, 20_000)
    _scaling("summary chain walked for cycles", _chain, 1_500)

    from inspector.encodings import TiktokenTokenizer

    tok = TiktokenTokenizer("cl100k_base")
    line = "The quick brown fox, jumping 12 times; naïve café über.\n"
    text = (line * (20_000_000 // len(line) + 1))[:20_000_000]
    tok.count_many(["warm up"])
    chunked_s, chunked_peak = _peak(lambda: tok.count_many([text]))
    whole_s, whole_peak = _peak(lambda: [len(tok.encoding.encode(text, disallowed_special=()))])
    assert tok.count_many([text]) == [len(tok.encoding.encode(text, disallowed_special=()))]
    RESULTS.append(("tokens: one 20 M-character text, cl100k_base",
                    f"chunks of 1 MiB: {chunked_s * 1000:,.0f} ms, peak {chunked_peak / 1e6:,.0f} MB",
                    f"encode whole: {whole_s * 1000:,.0f} ms, peak {whole_peak / 1e6:,.0f} MB",
                    f"{whole_peak / chunked_peak:,.1f}x less memory, {whole_s / chunked_s:,.2f}x time",
                    "identical counts"))
    print(RESULTS[-1], flush=True)
