"""The shifting replay at scale: identical audits to the seed-literal reference, built once.

The reference (`tests/reference/shifting.py`) rebuilds every request from scratch: the blocks of the whole history, the
host guard's passes, the audit rows, each O(history) in Python objects. Here:

- `PrefixBlocks` keeps the blocks of the prefix `messages[: end + 1]` as `end` grows and
  patches only the blocks whose prefix-dependent fields change (a tool result joining its
  call's group, a group becoming protected, the current input moving). A request's blocks
  are then one C-level copy of that list.
- For the built-in `truncate` with no interceptors (the default), the result of the host
  guard is computed directly: removing "the oldest unprotected groups until it fits" means
  excluding every removable group whose first block is at or before some position t. The
  removable cost per first-block position is kept in a list from one request to the next
  (`shifting.truncate_costs`, the array-level core of `truncate`, would redo an O(n) pass per
  request), and t is searched from the end (`prefix.oldest_cut`): the kept window after t is
  short and walked anyway to list the kept messages (a Fenwick tree made the search O(log n),
  but its updates, one or two per changed block, cost more than the walk). None of the
  prefix's blocks depends on the budget: they are traced once per thread and counter
  (`trace.PrefixTrace`, with the thread's requests and turns: `trace.ThreadFacts`) and every
  replay (every config edit) reads the trace.
- Any other strategy, a plugin or an interceptor goes through the ordinary host guard on the
  incrementally built blocks.
- `run()` returns every audit with its blocks (the CLI, `simulate`); its audit rows are
  shared between requests (frozen): only the kept rows and the rows that changed are made
  again. The app calls `timeline()`, which makes no rows at all and records only each
  request's kept messages, and `audit(k)` for the request on screen: every message's latest
  change in the trace (from the trace's last checkpoint before k) holds its excluded row and
  its kept row's fields. On a 10,000-message thread the block lists hold 12.9 million
  references, and the garbage collector walking them cost as much as the replay; making the
  kept rows of every request (their positions move whenever the cut moves) and recording
  them was another 30% of the replay (line_profiler, bench thread).

`tests/engine/test_shifting_fast.py` checks every audit against the reference.
"""

from __future__ import annotations

import gc
from bisect import bisect_right, insort
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from msgspec.structs import replace  # the audits are msgspec Structs

from inspector.gcpolicy import settled
from inspector.model import Summary, Thread
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit
from inspector.pipeline.calibration import SENT_STATUSES
from inspector.pipeline.profiles.base import ReplayerBase
from inspector.pipeline.profiles.shifting.audits import ReplaySetup, audit_summaries, guarded_request_audit
from inspector.pipeline.profiles.shifting.blocks import (
    Block,
    build_blocks,
)
from inspector.pipeline.profiles.shifting.prefix import PrefixBlocks, oldest_cut
from inspector.pipeline.profiles.shifting.strategies import (
    truncate,
)
from inspector.pipeline.profiles.shifting.trace import Change, PrefixTrace, prefix_trace, thread_facts

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings


def replay(
    thread: Thread,
    config: Settings,
    ctx,
    *,
    registry=None,
    interceptors: Sequence[Callable[[tuple[Block, ...]], Sequence[Block]]] | None = None,
) -> tuple[list[RequestAudit], list[Summary]]:
    """One audit per request of `effective_requests(thread)` under `config["context.strategy"]`.

    `registry` (a StrategyRegistry; default: the built-ins) and `interceptors` may also
    come from `ctx.strategies` / `ctx.interceptors`. Returns the audits and the summaries
    the summarize strategy sent (one per request at most; they do not chain). Identical to
    the reference (tests/reference/shifting.py), in about linear time per request (see
    `.replayer`).
    """
    return ShiftingReplayer(thread, config, ctx, registry=registry, interceptors=interceptors).run()


class ShiftingReplayer(ReplayerBase):
    """Replays a thread under the shifting profile; `run()` returns what `replay` returns."""

    def __init__(
        self,
        thread: Thread,
        config: Settings,
        ctx,
        *,
        registry=None,
        interceptors: Sequence[Callable[[tuple[Block, ...]], Sequence[Block]]] | None = None,
    ) -> None:

        self.thread = thread
        self.config = config
        self.ctx = ctx
        facts = thread_facts(thread, ctx.counter)  # what no config changes, once per thread
        self.setup = ReplaySetup.of(thread, config, ctx, registry, interceptors, turns=facts.turns)
        self.requests = facts.requests
        self.unique_ids = facts.unique_ids
        setup = self.setup
        try:
            builtin = setup.registry.resolve(setup.strategy) is truncate
        except Exception:  # unknown: the guard reports it and falls back
            builtin = False
        self.fast = self.unique_ids and not setup.interceptors and builtin
        # The built-in truncate's budgets carry calibrated_prompt_tokens (Replay need not make every
        # audit again to add them); the guarded paths leave that to Replay.
        self.fills_calibration = self.fast
        self.chain: list[Summary] = []  # what the summarize strategy sent (Replay's `summaries`)
        self._timeline: list[RequestAudit] | None = None
        self._full: list[RequestAudit] | None = None  # every audit with its blocks (the guarded paths)
        self._kept: list[list[int]] = []  # timeline(): per request, the indices of the messages it kept
        self._trace: PrefixTrace | None = None  # the thread's traced prefix (`_truncate`)

    def timeline(self) -> list[RequestAudit]:
        """Every request's audit; for the built-in truncate without their block lists, which
        `audit(k)` rebuilds from the trace and the messages the request kept (the app's path: a
        long thread's block lists are millions of references, and walking them cost more than
        the replay)."""
        if self._timeline is None:
            if self.requests and self.fast:
                self._timeline = self._without_collection(lambda: self._truncate(materialize=False))[0]
            else:
                self._full, self.chain = self.run()
                self._timeline = self._full
        return self._timeline

    def audit(self, k: int) -> RequestAudit:
        """Request `k` with every block."""
        timeline = self.timeline()
        if self._full is not None:
            return self._full[k]
        agg = timeline[k]
        # Every message of the request's prefix has its rows in its latest change of the trace:
        # excluded, or kept at its position in the request's kept list.
        trace = self._trace
        assert trace is not None  # set by the timeline's `_truncate`
        costs, failed = trace.costs, agg.failed
        latest = trace.latest(k)
        rows = [change[3] for change in latest]
        for position, i in enumerate(self._kept[k]):
            _, _, args, _, group = latest[i]
            rows[i] = BlockAudit(*args, 0, None, None, group) if failed else \
                BlockAudit(*args, costs[i], position, None, group)
        return replace(agg, blocks=tuple(rows))  # type: ignore[arg-type]

    @staticmethod
    def _without_collection(build: Callable[[], tuple[list[RequestAudit], list[Summary]]]):
        # The audits hold millions of references in tuples of shared rows; a generational
        # collection in the middle would walk them all again and again (about half the time).
        # Nothing here makes reference cycles, so collection waits until the end. Not where the
        # long-lived objects are frozen (the app settles a long thread: `gcpolicy.settled`): there a
        # collection walks only what the replay makes, and the pause only moved the collections to
        # after the replay, onto the app's paint of the edit (bench_tui under shifting: painted
        # 121-124 -> 108-111 ms; a CLI replay of the bench thread, nothing frozen: 117 ms a replay
        # without the pause, 74 with it).
        if settled():
            return build()
        paused = gc.isenabled()
        gc.disable()
        try:
            return build()
        finally:
            if paused:
                gc.enable()

    def run(self) -> tuple[list[RequestAudit], list[Summary]]:
        if not self.requests:
            return [], []
        if not self.fast:
            return self._guarded()
        return self._without_collection(self._truncate)

    # --- any strategy: the host guard on incrementally built blocks --------------------

    def _guarded(self) -> tuple[list[RequestAudit], list[Summary]]:
        setup = self.setup
        msgs = self.thread.messages
        index = self.thread.message_index()
        # Blocks are keyed by message id: with duplicate ids each prompt is built whole.
        prefix = PrefixBlocks(msgs, setup.turns) if self.unique_ids else None
        audits: list[RequestAudit] = []
        summaries: list[Summary] = []
        for k, req in enumerate(self.requests):
            end = index[req.after_message_id]
            if prefix is None:
                blocks = build_blocks(msgs[: end + 1])
            else:
                prefix.advance(end)
                blocks = tuple(prefix.blocks)
            result = setup.shift(blocks, req.id)
            audit = guarded_request_audit(setup, k, req, setup.turns[end], blocks, result)
            summaries.extend(audit_summaries(audit, result))
            audits.append(audit)
        return audits, summaries

    # --- built-in truncate: the guard's result computed directly -----------------------

    def _truncate(self, materialize: bool = True) -> tuple[list[RequestAudit], list[Summary]]:
        """The built-in truncate, request by request, on the thread's traced prefix (`trace`: what
        no budget changes). `materialize=False` leaves each audit's blocks empty and records, per
        request, the messages it kept (for `audit(k)`)."""
        setup = self.setup
        msgs = self.thread.messages
        ids = [m.id for m in msgs]
        trace = self._trace = prefix_trace(self.thread, self.requests, setup.turns, self.ctx.counter, setup.count)
        costs = trace.costs
        n = len(msgs)
        # The removable cost per position (a removable group's first block) and their sum: the
        # cut is where the cost after it would no longer leave enough to remove (`oldest_cut`).
        at = [0] * n
        removable = 0
        # Per message: its removable position, n when protected (own or group): kept whatever the
        # cut; -1 before it comes into the prefix.
        where = [-1] * n
        unremovable: list[int] = []  # sorted indices of the protected blocks
        # materialize: every message's row, the latest change of each message (its rows are valid
        # until it changes again) and its kept row for one position.
        rows: list[BlockAudit] = []
        latest: list[Change] = []
        kept_rows: dict[int, BlockAudit] = {}
        previous_kept: list[int] = []
        kept_per_request = self._kept
        budget = setup.shift_budget
        calibration = getattr(self.ctx, "calibration", None)
        applied = 'context strategy "truncate" applied'
        kept_sent, excluded_sent = "kept" in SENT_STATUSES, "excluded" in SENT_STATUSES
        kept_status = BlockStatus.KEPT
        turns, strategy, window, reserve, available = setup.turns, setup.strategy, setup.window, setup.reserve, \
            setup.available
        system_prompt, tools = setup.system_prompt_tokens, setup.tool_tokens
        audits: list[RequestAudit] = []

        for k, (req, step) in enumerate(zip(self.requests, trace.steps, strict=True)):
            end, total, system_blocks = step.end, step.total, step.system
            for i, position, _args, _excluded, _group in step.changes:
                old = where[i]
                if position < 0:
                    position = n
                if position != old:
                    cost = costs[i]
                    if 0 <= old < n:
                        at[old] -= cost
                        removable -= cost
                    if position < n:
                        at[position] += cost
                        removable += cost
                    else:
                        insort(unremovable, i)
                    if old == n:
                        unremovable.pop(bisect_right(unremovable, i) - 1)
                    where[i] = position

            # The oldest removable groups whose removal brings the prefix within budget.
            need = total - budget
            if need <= 0:
                cut, removed = -1, 0
            elif removable < need:
                cut, removed = end, removable
            else:
                cut, removed = oldest_cut(at, end, removable, need)
            kept_total = total - removed
            failed = kept_total > budget

            kept = unremovable[: bisect_right(unremovable, cut)]
            kept += [i for i in range(cut + 1, end + 1) if where[i] > cut]
            if materialize:
                if len(rows) <= end:
                    rows.extend([None] * (end + 1 - len(rows)))  # type: ignore[list-item]  # set below
                    latest.extend([None] * (end + 1 - len(latest)))  # type: ignore[list-item]  # set below
                dirty = []
                for change in step.changes:
                    i = change[0]
                    dirty.append(i)
                    latest[i] = change
                    kept_rows.pop(i, None)
                kept_set = set(kept)
                for i in (*previous_kept, *dirty):
                    if i not in kept_set:
                        rows[i] = latest[i][3]
                for position, i in enumerate(kept):
                    row = kept_rows.get(i)
                    if failed:
                        if row is None or row.position is not None:
                            row = kept_rows[i] = BlockAudit(*latest[i][2], 0, None, None, latest[i][4])
                    elif row is None or row.position != position:
                        row = kept_rows[i] = BlockAudit(*latest[i][2], costs[i], position, None, latest[i][4])
                    rows[i] = row
                previous_kept = kept
            else:
                kept_per_request.append(kept)

            if failed:
                needed = system_prompt + tools + total - removable
                error = setup.budget_error(needed)
                history = prompt = 0
                diagnostics: tuple[str, ...] = (
                    f"protected context alone ({kept_total} tokens) exceeds the budget ({budget} tokens)",
                    applied,
                )
            else:
                needed, error = None, None
                history = kept_total - system_blocks
                prompt = system_prompt + system_blocks + tools + history
                diagnostics = (applied,)
            estimate = prompt if needed is None else needed
            # The block counts ({status: n} of the non-zero ones, kept first) and the blocks sent
            # (`sent_count` of those counts).
            n_kept = len(kept)
            n_excluded = end + 1 - n_kept
            if n_excluded:
                counts = {"kept": n_kept, "excluded": n_excluded} if n_kept else {"excluded": n_excluded}
            else:
                counts = {"kept": n_kept} if n_kept else {}
            calibrated = None if calibration is None else \
                calibration.calibrated(k, estimate, n_kept * kept_sent + n_excluded * excluded_sent)
            # Positional (the fields in their order, as `Replay._calibrated` makes them): keywords
            # cost about a microsecond more per request.
            budget_audit = BudgetAudit(
                window, system_prompt + system_blocks, tools, 0, reserve, available, history, prompt,
                req.prompt_tokens,
                None,  # trigger_source
                None,  # trigger_tokens
                0,  # pruned_savings
                needed, calibrated, None if calibrated is None else calibrated - estimate,
            )
            stats = {
                "strategy": strategy,
                "strategy_used": "truncate",
                "shift_budget": budget,
                "blocks_tokens": kept_total,
                "block_statuses": {ids[i]: kept_status for i in kept},
                "block_counts": counts,
            }
            audits.append(RequestAudit(
                k, req.id, req.after_message_id, turns[end], "failed" if failed else "completed", error, budget_audit,
                None,  # compaction
                (),  # summaries_injected
                None,  # protect_turns
                tuple(rows) if materialize else (), diagnostics, stats,
            ))
        return audits, []
