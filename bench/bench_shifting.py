"""Shifting benchmarks: one truncate of a long session, and the whole replay.

    python -m bench.bench_shifting          # or, once registered: python -m bench.run shifting

Truncate: 8,000 messages of `generate_thread` behind a protected system message, every
block's cost known in advance (the same per-message costs for every contender: the
shifting profile's chars/4 + 4). Contenders, same process, medians:
- `truncate` (`shift_context`: running total, C-level passes when groups are runs),
- `shift_context_reference`: the literal loop, recounting the prompt after every removal,
- `langchain_core.messages.trim_messages(strategy="last", include_system=True,
  allow_partial=False)` with a per-message `token_counter` reading the same costs.
  `start_on="human"` is not used for the timing: it makes langchain drop everything up to
  the next user message, which our shift does not do (it cuts at any group boundary), so
  the kept sets would differ by design; its kept set is compared and reported all the same.
The kept sets of `truncate` and the literal loop must be identical (asserted); how
langchain's differs is printed and put in the note column.

Replay: `ShiftingReplayer` on the 10,000-message / ~2,500-request session (absolute), and
against `replay_reference` on a 1,000-message session (ratio; the reference is cubic, so
10,000 messages would take hours).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

from bench.generate import generate_thread
from bench.results import RESULTS
from inspector.config import Config
from inspector.model import Message, Role
from inspector.pipeline import ReplayContext
from inspector.pipeline.shifting import build_blocks, replay_reference, shift_context_reference
from inspector.pipeline.shifting_fast import ShiftingReplayer
from inspector.pipeline.strategies import StrategyRequest, truncate
from inspector.tokens import Chars4Tokenizer, TokenCounter, message_costs

MESSAGES = 8_000
SHARES = (0.8, 0.5, 0.1)  # budget = this share of the whole prompt: ~1,600 / ~4,000 / ~7,200 messages removed


def median_time(fn: Callable[[], object], repeat: int) -> float:
    return interleaved_medians((fn,), repeat)[0]


def interleaved_medians(fns: tuple[Callable[[], object], ...], repeat: int, *, warm: bool = False) -> list[float]:
    """Median time of each function, run in turns (a, b, a, b, ...) so that load changes on a
    shared machine hit every contender alike. By default the collector runs before each call,
    as in `bench.run.median_time` (which also leaves the CPU caches cold); `warm` instead
    pauses the collector during the calls and runs them back to back, as `timeit` does."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times, strict=True):
            if warm:
                fn()  # the same call just before: caches warm
                gc.disable()
            else:
                gc.collect()
            try:
                start = time.perf_counter()
                fn()
                out.append(time.perf_counter() - start)
            finally:
                gc.enable()
    return [statistics.median(t) for t in times]


def _to_langchain(message: Message):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    if message.role is Role.SYSTEM:
        return SystemMessage(message.content, id=message.id)
    if message.role is Role.USER:
        return HumanMessage(message.content, id=message.id)
    if message.role is Role.TOOL:
        return ToolMessage(message.content, tool_call_id=message.tool_call_id or "", id=message.id)
    calls = [{"name": c.name, "args": dict(c.arguments or {}), "id": c.id} for c in message.tool_calls]
    return AIMessage(message.content, id=message.id, tool_calls=calls)


def _describe_difference(ours: list[str], theirs: list[str], roles: dict[str, Role]) -> str:
    only_ours = [k for k in ours if k not in set(theirs)]
    only_theirs = [k for k in theirs if k not in set(ours)]
    if not only_ours and not only_theirs:
        return "langchain keeps the same set"
    parts = []
    if only_theirs:
        kinds = sorted({str(roles[k]) for k in only_theirs})
        parts.append(f"langchain also keeps {len(only_theirs)} ({', '.join(kinds)})")
    if only_ours:
        kinds = sorted({str(roles[k]) for k in only_ours})
        parts.append(f"langchain drops {len(only_ours)} we keep ({', '.join(kinds)})")
    first = next((k for k in theirs if roles[k] is not Role.SYSTEM), None)
    if first is not None and roles[first] is Role.TOOL:
        parts.append("its prompt starts on a tool result whose call it dropped")
    return "; ".join(parts)


def bench_truncate() -> None:
    from langchain_core.messages import BaseMessage, trim_messages

    thread = generate_thread(MESSAGES)
    msgs = (Message("sys", Role.SYSTEM, thread.system_prompt), *thread.messages)
    counter = TokenCounter(Chars4Tokenizer())
    cost = dict(zip([m.id for m in msgs], message_costs(counter, msgs, "shifting"), strict=True))
    roles = {m.id: m.role for m in msgs}
    blocks = build_blocks(msgs)
    whole = sum(cost.values())

    def count(block) -> int:
        return cost[block.key]

    def lc_count(messages: list[BaseMessage]) -> int:
        """What trim_messages makes of a per-message counter: the sum over the messages."""
        return sum(cost[m.id] for m in messages)

    lc_messages = [_to_langchain(m) for m in msgs]
    for share in SHARES:
        budget = int(whole * share)
        request = StrategyRequest(blocks, count, budget)

        def ours(request=request):
            return truncate(request)

        def literal(budget=budget):
            return shift_context_reference(blocks, count, budget)

        def langchain(budget=budget, start_on=None):
            return trim_messages(lc_messages, max_tokens=budget, token_counter=lc_count, strategy="last",
                                 include_system=True, allow_partial=False, start_on=start_on)

        fast_s, lc_s = interleaved_medians((ours, langchain), 31)
        fast_warm, lc_warm = interleaved_medians((ours, langchain), 31, warm=True)
        literal_s = median_time(literal, 3)
        result = ours()
        reference = literal()
        kept = [b.key for b in result.kept]
        assert result == reference and kept == [b.key for b in reference.kept], "fast and literal truncate differ"
        assert result.fits and result.total <= budget
        lc_kept = [m.id for m in langchain()]
        lc_human = [m.id for m in langchain(start_on="human")]
        note_lc = _describe_difference(kept, lc_kept, roles)
        note_human = _describe_difference(kept, lc_human, roles)
        removed = len(result.excluded)
        name = f"shifting: truncate {len(msgs):,} messages, budget {share:.0%} ({removed:,} removed)"
        RESULTS.append((name, f"truncate: {fast_s * 1000:,.2f} ms", f"literal loop: {literal_s * 1000:,.0f} ms",
                        f"{literal_s / fast_s:,.0f}x", "identical kept/excluded/reasons"))
        warm = f"warm caches: {fast_warm * 1000:,.2f} ms vs {lc_warm * 1000:,.1f} ms, {lc_warm / fast_warm:,.1f}x"
        RESULTS.append((name, f"truncate: {fast_s * 1000:,.2f} ms", f"langchain trim_messages: {lc_s * 1000:,.1f} ms",
                        f"{lc_s / fast_s:,.1f}x", f"{warm}; {note_lc}; with start_on=human: {note_human}"))
        print(f"{name}: truncate {fast_s * 1000:.2f} ms, literal {literal_s * 1000:.0f} ms "
              f"({literal_s / fast_s:.0f}x), langchain {lc_s * 1000:.1f} ms ({lc_s / fast_s:.1f}x); {warm}", flush=True)
        print(f"  langchain: {note_lc}\n  langchain start_on=human: {note_human}", flush=True)


def bench_replay() -> None:
    config = Config.for_profile("shifting")  # window 8192, reserve 1024, truncate

    def ctx(thread) -> ReplayContext:
        counter = TokenCounter(Chars4Tokenizer())
        counter.count_all(m.text_for_count() for m in thread.messages)  # both sides start with counted texts
        return ReplayContext(counter, None)

    big = generate_thread(10_000)
    big_ctx = ctx(big)
    big_s = median_time(lambda: ShiftingReplayer(big, config, big_ctx).run(), 5)
    RESULTS.append((f"shifting: replay {len(big.messages):,} messages / {len(big.requests):,} requests",
                    f"ShiftingReplayer: {big_s * 1000:,.0f} ms", "-", "-", "full audits, every block of every request"))
    print(f"shifting replay 10k: {big_s:.3f} s", flush=True)

    small = generate_thread(1_000)
    small_ctx = ctx(small)
    fast: list = []
    fast_s = median_time(lambda: fast.append(ShiftingReplayer(small, config, small_ctx).run()[0]), 5)
    ref: list = []
    ref_s = median_time(lambda: ref.append(replay_reference(small, config, small_ctx)[0]), 1)
    assert fast[-1] == ref[-1], "fast and reference replays differ"
    RESULTS.append((f"shifting: replay {len(small.messages):,} messages / {len(small.requests):,} requests",
                    f"ShiftingReplayer: {fast_s * 1000:,.0f} ms", f"replay_reference: {ref_s * 1000:,.0f} ms",
                    f"{ref_s / fast_s:,.0f}x", "identical audits"))
    print(f"shifting replay 1k: {fast_s:.3f} s vs reference {ref_s:.2f} s ({ref_s / fast_s:.0f}x)", flush=True)


def bench_shifting() -> None:
    bench_truncate()
    bench_replay()


if __name__ == "__main__":
    bench_shifting()
    print("\n| benchmark | subject (median) | reference (median) | ratio | note |\n|---|---|---|---|---|")
    for row in RESULTS:
        print("| " + " | ".join(row) + " |")
