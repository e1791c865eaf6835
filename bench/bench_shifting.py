"""Shifting benchmarks: one truncate of a long session, and the whole replay.

    python -m bench.bench_shifting          # or, once registered: python -m bench.run shifting

Truncate: 8,000 messages of `generate_thread` behind a protected system message (8,001
blocks), budgets of 80% / 50% / 10% of the whole prompt. Every message's cost is counted
ONCE, before any timing, and every contender reads those same numbers (the shifting
profile's chars/4 + 4, `tokens.message_costs`):

- `truncate_costs` (the array-level core; what is timed: the call AND turning its cut into
  the list of kept blocks, the same kind of output langchain returns). It receives the costs
  as a list (position i = block i), the int group labels (`group_labels`: position of each
  group's first block), the protected flags and the budget; labels and flags are built with
  the blocks, outside the timed region, as langchain's message objects are.
- `shift_context_reference`: the literal loop recounting the prompt after every removal. It
  receives the blocks and a counter reading the costs from a dict keyed by block key.
- `langchain_core.messages.trim_messages(strategy="last", include_system=True,
  allow_partial=False)`. It receives the langchain messages (built outside the timed region)
  and a list `token_counter` reading the same costs from a dict keyed by message id
  (`sum(map(costs.__getitem__, map(attrgetter("id"), messages)))`: C-level, the cheapest
  form of that lookup). A variant keyed by `id(message)` (never reads the message at all,
  not a realistic counter) is also timed and reported in the note, as langchain's floor.
  `start_on="human"` is not used for the timing: it makes langchain drop everything up to
  the next user message, which our shift does not do (it cuts at any group boundary), so
  the kept sets would differ by design; its kept set is compared and reported all the same.
- the core again, its labels and flags built from the blocks inside the timed region
  (`group_labels` over `Block.group`, `protection is not None`), in its own row.
- the Block-level `truncate` strategy (`shift_context` on the blocks with the dict counter:
  counts each block through the callable, builds the labels and flags, calls the core, builds
  a full ShiftResult with reasons), reported in its own rows.

The kept sets of the core, the Block-level truncate and the literal loop must be identical
(asserted); how langchain's differs is printed and put in the note column. Medians of 31
interleaved runs (core, core + labels/flags, Block-level truncate, langchain, langchain by
identity, in turns), once with the collector run before every call (cold caches) and once
warm; the literal loop, seconds per call, runs 3 times on its own.

Replay: `ShiftingReplayer` on the 10,000-message / ~2,500-request session (absolute), and
against `replay_reference` on a 1,000-message session (ratio; the reference is cubic, so
10,000 messages would take hours).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter, is_not

from bench.generate import generate_thread
from bench.results import RESULTS
from inspector.config import Config
from inspector.model import Message, Role
from inspector.pipeline import ReplayContext
from inspector.pipeline.profiles import REGISTRY
from inspector.pipeline.profiles.shifting.blocks import build_blocks
from inspector.pipeline.profiles.shifting.costcut import group_labels, truncate_costs
from inspector.pipeline.profiles.shifting.replayer import ShiftingReplayer
from inspector.pipeline.profiles.shifting.strategies import StrategyRequest, truncate
from inspector.tokens import Chars4Tokenizer, TokenCounter, message_costs
from tests.reference.shifting import replay_reference, shift_context_reference

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
    costs = message_costs(counter, msgs, REGISTRY["shifting"].message_overhead)  # counted once, read by every contender
    cost = dict(zip([m.id for m in msgs], costs, strict=True))
    roles = {m.id: m.role for m in msgs}
    blocks = build_blocks(msgs)
    labels = group_labels([b.group for b in blocks])
    protected = [b.protected for b in blocks]
    assert [b.key for b in blocks] == [m.id for m in msgs] and [cost[b.key] for b in blocks] == costs
    whole = sum(costs)
    cost_of = cost.__getitem__
    message_id = attrgetter("id")
    group, protection = attrgetter("group"), attrgetter("protection")

    def count(block) -> int:
        return cost[block.key]

    def lc_count(messages: list[BaseMessage]) -> int:
        """trim_messages' list counter: the same costs, looked up by message id."""
        return sum(map(cost_of, map(message_id, messages)))

    lc_messages = [_to_langchain(m) for m in msgs]
    by_identity = dict(zip(map(id, lc_messages), costs, strict=True)).__getitem__

    def lc_count_identity(messages: list[BaseMessage]) -> int:
        """langchain's floor: the costs keyed by object identity, no message attribute read."""
        return sum(map(by_identity, map(id, messages)))

    for share in SHARES:
        budget = int(whole * share)
        request = StrategyRequest(blocks, count, budget)

        def core(budget=budget):
            return truncate_costs(costs, labels, protected, budget).kept_of(blocks)

        def core_from_blocks(budget=budget):
            """The core with its labels and flags derived from the blocks inside the timed region."""
            flags = list(map(is_not, map(protection, blocks), repeat(None)))
            return truncate_costs(costs, group_labels(list(map(group, blocks))), flags, budget).kept_of(blocks)

        def block_level(request=request):
            return truncate(request)

        def literal(budget=budget):
            return shift_context_reference(blocks, count, budget)

        def langchain(budget=budget, start_on=None, token_counter=lc_count):
            return trim_messages(lc_messages, max_tokens=budget, token_counter=token_counter, strategy="last",
                                 include_system=True, allow_partial=False, start_on=start_on)

        def langchain_identity(budget=budget):
            return langchain(budget, token_counter=lc_count_identity)

        contenders = (core, core_from_blocks, block_level, langchain, langchain_identity)
        core_s, derive_s, block_s, lc_s, lc_id_s = interleaved_medians(contenders, 31)
        core_w, derive_w, block_w, lc_w, lc_id_w = interleaved_medians(contenders, 31, warm=True)
        literal_s = median_time(literal, 3)
        reference = literal()
        result = block_level()
        kept = [b.key for b in reference.kept]
        cut = truncate_costs(costs, labels, protected, budget)
        assert [b.key for b in core()] == kept and core_from_blocks() == core() and cut.total == reference.total, "core and literal truncate differ"
        assert cut.excluded_of(blocks) == list(reference.excluded), "core and literal truncate differ"
        assert result == reference and [b.key for b in result.kept] == kept, "Block-level and literal truncate differ"
        assert result.fits and result.total <= budget
        lc_kept = [m.id for m in langchain()]
        assert lc_kept == [m.id for m in langchain_identity()]
        lc_human = [m.id for m in langchain(start_on="human")]
        note_lc = _describe_difference(kept, lc_kept, roles)
        note_human = _describe_difference(kept, lc_human, roles)
        removed = len(result.excluded)
        name = f"shifting: truncate {len(msgs):,} messages, budget {share:.0%} ({removed:,} removed)"
        core_label = f"truncate_costs core: {core_s * 1000:,.3f} ms"
        RESULTS.append((name, core_label, f"langchain trim_messages: {lc_s * 1000:,.1f} ms", f"{lc_s / core_s:,.1f}x",
                        f"costs precomputed for both; warm caches: {core_w * 1000:,.3f} ms vs {lc_w * 1000:,.1f} ms, "
                        f"{lc_w / core_w:,.1f}x; langchain counter keyed by id(message) (its floor): "
                        f"{lc_id_s * 1000:,.2f} ms cold ({lc_id_s / core_s:,.1f}x), {lc_id_w * 1000:,.2f} ms warm "
                        f"({lc_id_w / core_w:,.1f}x); {note_lc}; with start_on=human: {note_human}"))
        RESULTS.append((name, core_label, f"literal loop: {literal_s * 1000:,.0f} ms", f"{literal_s / core_s:,.0f}x",
                        "identical kept/excluded/total"))
        RESULTS.append((name, f"core + labels/flags from blocks: {derive_s * 1000:,.2f} ms",
                        f"langchain trim_messages: {lc_s * 1000:,.1f} ms", f"{lc_s / derive_s:,.1f}x",
                        f"group labels and protected flags built from the blocks inside the timed region; warm caches: "
                        f"{derive_w * 1000:,.2f} ms vs {lc_w * 1000:,.1f} ms, {lc_w / derive_w:,.1f}x; vs langchain "
                        f"keyed by id(message): {lc_id_s / derive_s:,.1f}x cold, {lc_id_w / derive_w:,.1f}x warm"))
        block_label = f"Block-level truncate: {block_s * 1000:,.2f} ms"
        RESULTS.append((name, block_label, f"literal loop: {literal_s * 1000:,.0f} ms", f"{literal_s / block_s:,.0f}x",
                        "Block-level: counts through the callable, full ShiftResult; identical kept/excluded/reasons"))
        RESULTS.append((name, block_label, f"langchain trim_messages: {lc_s * 1000:,.1f} ms",
                        f"{lc_s / block_s:,.1f}x",
                        f"Block-level; warm caches: {block_w * 1000:,.2f} ms vs {lc_w * 1000:,.1f} ms, "
                        f"{lc_w / block_w:,.1f}x"))
        print(f"{name}: core {core_s * 1000:.3f} ms (warm {core_w * 1000:.3f}), core + labels/flags {derive_s * 1000:.2f} ms "
              f"(warm {derive_w * 1000:.2f}), Block-level {block_s * 1000:.2f} ms "
              f"(warm {block_w * 1000:.2f}), literal {literal_s * 1000:.0f} ms, langchain {lc_s * 1000:.1f} ms "
              f"(warm {lc_w * 1000:.1f}), langchain by identity {lc_id_s * 1000:.2f} ms (warm {lc_id_w * 1000:.2f}); "
              f"core vs langchain {lc_s / core_s:.1f}x cold, {lc_w / core_w:.1f}x warm; "
              f"core vs literal {literal_s / core_s:.0f}x", flush=True)
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
    timeline_s = median_time(lambda: ShiftingReplayer(big, config, big_ctx).timeline(), 5)
    replayer = ShiftingReplayer(big, config, big_ctx)
    replayer.timeline()
    last = len(big.requests) - 1
    one_s = median_time(lambda: replayer.audit(last), 5)
    RESULTS.append((f"shifting: timeline of {len(big.messages):,} messages / {len(big.requests):,} requests",
                    f"ShiftingReplayer.timeline: {timeline_s * 1000:,.0f} ms",
                    f"run (every block of every request): {big_s * 1000:,.0f} ms", f"{big_s / timeline_s:,.1f}x",
                    f"the app's path; one request's blocks (the last, audit(k)): {one_s * 1000:,.1f} ms"))
    print(f"shifting timeline 10k: {timeline_s:.3f} s, audit(last) {one_s * 1000:.1f} ms", flush=True)

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
