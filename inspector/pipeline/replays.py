"""Replaying a thread under a config: the profile's replayer behind one interface.

`replay` gives a `Replay`: the timeline at once (every request's aggregates) and one
request's blocks on `audit(k)`; `simulate` is every request with its blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from inspector.model import Role, Summary, Thread, effective_requests
from inspector.pipeline.audit import BlockStatus, BudgetAudit, RequestAudit, Simulation
from inspector.pipeline.calibration import Calibration, CompactionCount, segments_from_compactions, sent_blocks
from inspector.pipeline.context import ReplayContext, Summarizer
from inspector.pipeline.profiles import REGISTRY
from inspector.tokens import TokenCounter, get_tokenizer, message_costs

if TYPE_CHECKING:
    from inspector.pipeline.profiles.base import Settings


def simulate(
    thread: Thread,
    config: Settings,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    follow_recorded: bool = False,
) -> Simulation:
    """Replay every request of `thread` under `config`; one audit per request."""
    if counter is None:
        counter = TokenCounter(get_tokenizer(config["context.tokenizer"]))
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=follow_recorded)
    return Replay(thread, config, ctx).simulation(blocks=True)


class Replay:
    """A replay that answers the timeline at once and builds block lists on demand.

    The profile's replayer (`REGISTRY[profile].replayer`, e.g. `IrisReplayer`) gives the
    timeline at once, in about linear time, and one request's blocks on `audit(k)`.
    """

    def __init__(self, thread: Thread, config: Settings, ctx: ReplayContext) -> None:
        self.thread = thread
        self.config = config
        self.ctx = ctx
        self.notices: list[str] = []  # e.g. a tokenizer fallback, said by the layer above
        self._audits: dict[int, RequestAudit] = {}  # priced
        self._unpriced: dict[int, RequestAudit] = {}  # the same requests before their prices
        self._pricing = threading.Lock()  # the app prices an edit in one worker while others read its blocks
        self.calibration = ctx.calibration
        self._fast = REGISTRY[config.profile].replayer(thread, config, ctx)
        # The seed profiles' audits get the calibrated prompt filled in here; the agents' replayers
        # compute it themselves (their trigger reads it).
        self._fill = ctx.calibration is not None and not self._fast.fills_calibration
        timeline = self._fast.timeline()
        self.timeline: tuple[RequestAudit, ...] = (
            tuple(self._calibrated(a) for a in timeline) if self._fill else tuple(timeline))
        self.summaries: tuple[Summary, ...] = tuple(self._fast.chain)
        self._costs: tuple | None = None
        self._totals: tuple | None = None  # (cost_totals(),) once computed
        self._positions: dict[str, int] | None = None
        self._bases: tuple[str, ...] | None = None
        self._rules: tuple | None = None  # (rules(),) once computed

    # Beyond this many blocks in all prompts together, a profile without a fast prompt model
    # (every profile but iris) gets no cache model rather than a wait of many seconds.
    BLOCK_BY_BLOCK_LIMIT = 3_000_000

    @property
    def priced(self) -> bool:
        """Whether the requests' prices are computed (`costs`)."""
        return self._costs is not None

    @property
    def costs(self) -> tuple:
        """`accounting.RequestCost` per request (prompt cache and cost), computed once (by one thread of
        those that ask at the same time; the others wait for it); () when skipped."""
        if self._costs is None:
            with self._pricing:
                if self._costs is None:
                    self._costs = self._computed_costs()
        return self._costs

    def _computed_costs(self) -> tuple:
        from inspector.pipeline import accounting

        prompts, table = None, None
        if accounting.has_fast_prompt_model(self._fast) or \
                len(self.timeline) * len(self.thread.messages) <= self.BLOCK_BY_BLOCK_LIMIT:
            prompts, table = accounting.replay_prompts(self._fast, self.timeline, self._fast.audit)
        if prompts is None:
            self.notices.append(f"prompt cache not modelled: the {self.config.profile} profile has no fast "
                                f"prompt model for a thread this long ({len(self.timeline):,} requests)")
            return ()
        return tuple(accounting.account(self.thread, self.timeline, prompts, table, self.ctx.prices,
                                        self.ctx.counter, summarization=self._summarization_pricing()))

    def _summarization_pricing(self):
        """How the profile's compactions write their summaries, for their price (None: no model call)."""
        from inspector.pipeline.accounting import SummarizationPricing

        call = REGISTRY[self.config.profile].summarization
        if call is None:
            return None
        return SummarizationPricing(call, self.config["summarization.model"], {s.id: s for s in self.summaries})

    def _priced(self, audit: RequestAudit) -> RequestAudit:
        costs = self.costs
        if not costs:
            return audit
        from inspector.pipeline.accounting import with_cost

        return with_cost(audit, costs[audit.index])

    def cost_totals(self):
        """`accounting.ThreadCost` of the whole replay (None when the cache was not modelled), computed
        once (the diff, the status line and the JSON read it)."""
        if self._totals is None:
            from inspector.pipeline.accounting import totals

            self._totals = (totals(self.timeline, self.costs) if self.costs else None,)
        return self._totals[0]

    def __len__(self) -> int:
        return len(self.timeline)

    def audit(self, index: int, *, priced: bool = True) -> RequestAudit:
        """Request `index` with its full block list; `priced=False`: without its prompt cache and cost
        (the budget's cache fields None), which needs no pricing of the thread (`costs`)."""
        memo = self._audits if priced else self._unpriced
        hit = memo.get(index)
        if hit is None:
            unpriced = self._unpriced.get(index) if priced else None
            hit = self._priced(unpriced) if unpriced is not None else self._built(index, priced=priced)
            if len(memo) > 64:
                memo.clear()
            memo[index] = hit
        return hit

    def _built(self, index: int, *, priced: bool = True) -> RequestAudit:
        audit = self._fast.audit(index)
        if self._fill:
            audit = self._calibrated(audit)
        return self._priced(audit) if priced else audit

    def audits(self, indices: Iterable[int]) -> Iterator[RequestAudit]:
        """Requests `indices` with their block lists, one at a time and not kept (a streamed JSON holds
        one request's blocks, not every request's); those already built are reused."""
        for index in indices:
            hit = self._audits.get(index)
            yield self._built(index) if hit is None else hit

    def _calibrated(self, a: RequestAudit) -> RequestAudit:
        """`a` with the calibrated prompt in its budget (for replayers that do not fill it in; the
        positional constructors are the fast ones: this runs once per request of every edit)."""
        b = a.budget
        estimate = b.needed_tokens if b.needed_tokens is not None else b.prompt_tokens
        value = self.ctx.calibration.calibrated(a.index, estimate, sent_blocks(a.block_counts()))
        budget = BudgetAudit(b.window, b.system_tokens, b.tool_tokens, b.summary_tokens, b.response_reserve,
                             b.available, b.history_tokens, b.prompt_tokens, b.recorded_prompt_tokens,
                             b.trigger_source, b.trigger_tokens, b.pruned_savings, b.needed_tokens, value,
                             value - estimate)
        return RequestAudit(a.index, a.request_id, a.after_message_id, a.turn, a.status, a.error, budget,
                            a.compaction, a.summaries_injected, a.protect_turns, a.blocks, a.diagnostics, a.stats)

    def message_statuses(self, index: int, message_ids) -> dict[str, BlockStatus] | None:
        """The status request `index` gives each of `message_ids` (those it shows), where the profile's
        replayer knows it without building the request's blocks (iris, harness); None otherwise."""
        if self._positions is None:
            self._positions = self.thread.message_index()
        positions = self._positions
        ids = [m for m in message_ids if m in positions]
        found = self._fast.statuses(index, [positions[m] for m in ids])
        if found is None:
            return None
        return {m: found[positions[m]] for m in ids if positions[m] in found}

    def summary_spans(self) -> dict[str, tuple[str, ...]] | None:
        """Summary id -> the messages its compaction replaced, where the profile's replayer knows them
        without building blocks (iris, harness); None otherwise (read them from `audit(k)`)."""
        spans = self._fast.summary_spans()
        return None if spans is None else dict(spans)

    def simulation(self, *, blocks: bool = True, priced: bool = True) -> Simulation:
        """Every request (with blocks, or the timeline); `priced=False` leaves the budgets without the
        cache and cost (the app reads those per request and as `cost_totals`) and the thread's cost None."""
        if blocks:
            requests = tuple(self.audit(k, priced=priced) for k in range(len(self)))
        elif priced:
            requests = tuple(self._priced(a) for a in self.timeline)
        else:
            requests = self.timeline
        return Simulation(
            thread_id=self.thread.id,
            profile=self.config.profile,
            config=self.config.as_dict(),
            tokenizer=self.ctx.counter.name,
            approximate=self.ctx.counter.approximate,
            requests=requests,
            summaries=self.summaries,
            cost=self._thread_cost_json() if priced else None,
            calibration_basis=self.bases(),
            rules=self.rules(),
        )

    def bases(self) -> tuple[str, ...] | None:
        """Per request: how its calibrated prompt was obtained (`calibration.BASES`): the replayer's
        own where it follows its compactions (the agents' profiles), else the thread's model's."""
        calibration = self.ctx.calibration
        if calibration is None:
            return None
        if self._bases is None:  # the timeline and the model are fixed: once (each edit reads the baseline's)
            self._bases = tuple(a.stats.get("calibration_basis") or calibration.basis(a.index) for a in self.timeline)
        return self._bases

    def basis(self, index: int) -> str | None:
        """How request `index`'s calibrated prompt was obtained (None: no model)."""
        calibration = self.ctx.calibration
        if calibration is None or not 0 <= index < len(self.timeline):
            return None
        return self.timeline[index].stats.get("calibration_basis") or calibration.basis(index)

    def rules(self) -> tuple[str, ...] | None:
        """Per request: the name of the agent version's rules it was replayed under (Claude Code),
        None where the profile has one set of rules."""
        if self._rules is None:  # once, as `bases`
            names = tuple(a.stats.get("rules") for a in self.timeline)
            self._rules = (names if names and all(names) else None,)
        return self._rules[0]  # type: ignore[return-value]

    def _thread_cost_json(self) -> dict | None:
        totals = self.cost_totals()
        return None if totals is None else totals.to_json()


def replay(
    thread: Thread,
    config: Settings,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    follow_recorded: bool = False,
    prices: object | None = None,
    calibration: Calibration | None = None,
) -> Replay:
    """`calibration`: the thread's calibrated token model (`reference_calibration`); None: the
    identity (calibrated = replayed, the trigger reads recorded counts where present)."""
    if counter is None:
        counter = TokenCounter(get_tokenizer(config["context.tokenizer"]))
    return Replay(thread, config, ReplayContext(counter, summarizer, follow_recorded, prices=prices, calibration=calibration))


def _server_calls(thread: Thread, timeline) -> list[int]:
    """Per request: the server-side tool calls (Codex's `web_search_call`, kept by the importer
    in `meta["web_search_calls"]`) whose results it is billed for: those of the messages it
    sends after the latest compaction's summarized span, and those of its own response (the
    provider runs the search inside the request and bills its results as input there; on the
    real rollout the billed count jumps at that request and stays up). Linear: prefix sums."""
    prefix = [0]
    for m in thread.messages:
        calls = m.meta.get("web_search_calls") if m.meta else None
        prefix.append(prefix[-1] + (len(calls) if isinstance(calls, list) else 0))
    if not prefix[-1]:
        return [0] * len(timeline)
    position = {m.id: i for i, m in enumerate(thread.messages)}
    out: list[int] = []
    floor = 0
    for audit in timeline:
        if audit.compaction is not None and audit.compaction.last_message_id in position:
            floor = prefix[position[audit.compaction.last_message_id] + 1]
        end = position.get(audit.after_message_id)
        if end is not None and end + 1 < len(thread.messages) and thread.messages[end + 1].role is Role.ASSISTANT:
            end += 1  # the request's own response
        out.append(0 if end is None else max(0, prefix[end + 1] - floor))
    return out


def _compaction_counts(thread: Thread, timeline, counter: TokenCounter) -> list[CompactionCount]:
    """The recorded compactions' own counts of what they compacted (`preTokens` in the summary's
    meta, Claude Code's `compact_boundary`), each placed after the last request before it, with
    that request's response (on the real files `preTokens` is the last call's billed prompt plus
    its output, within a few tokens where the streamed output count is whole). Linear: one pass,
    the messages' counts remembered by the counter."""
    summaries = {s.id: s for s in thread.summaries}
    if not any(isinstance(s.meta, Mapping) and isinstance(s.meta.get("preTokens"), int) for s in summaries.values()):
        return []
    position = thread.message_index()
    costs: list[int] | None = None
    out: list[CompactionCount] = []
    for k, audit in enumerate(timeline):
        comp = audit.compaction
        if k == 0 or comp is None or comp.summary_id not in summaries:
            continue
        pre = summaries[comp.summary_id].meta.get("preTokens")
        start, end = position.get(timeline[k - 1].after_message_id), position.get(comp.last_message_id)
        if not isinstance(pre, int) or isinstance(pre, bool) or pre <= 0 or start is None or end is None:
            continue
        if costs is None:
            costs = message_costs(counter, thread.messages, 0)
        stop = start + 1  # the last request's own response: what `preTokens` adds to its billed prompt
        while stop <= end and thread.messages[stop].role is Role.ASSISTANT:
            stop += 1
        extra = range(start + 1, stop)
        out.append(CompactionCount(k - 1, pre, sum(costs[i] for i in extra), len(extra)))
    return out


def has_recorded_counts(thread: Thread) -> bool:
    """Whether a request of the thread has a billed prompt count (a count of 0 or less is none)."""
    return any(r.prompt_tokens is not None and r.prompt_tokens > 0 for r in thread.requests)


def reference_calibration(thread: Thread, config: Settings, counter: TokenCounter,
                          summarizer: Summarizer | None = None, *, compactions: str = "recorded") -> Calibration:
    """The thread's calibrated token model, fitted against the replay of its recorded history:
    `config` is the thread's baseline (its own profile and defaults) and `compactions` its
    default mode. Remembered per thread, tokenizer and config: every edit reuses it."""
    memo = counter.__dict__.setdefault("_calibrations", {})
    key = id(thread.messages), id(thread.requests), tuple(config.as_dict().items()), compactions
    hit = memo.get(key)
    if hit is not None and hit[0] is thread.messages and hit[1] is thread.requests:
        return hit[2]
    if not has_recorded_counts(thread):
        # Nothing to fit: the model is the identity whatever the reference replay estimates (its
        # estimates, segments and counts are read by a fitted model only), so the thread is not
        # replayed a second time for it (`tests/real/test_calibration_identity.py`).
        return Calibration.identity(len(effective_requests(thread)))
    calibration = fitted_calibration(thread, config, counter, summarizer, compactions=compactions)
    if len(memo) >= 8:
        memo.clear()
    memo[key] = (thread.messages, thread.requests, calibration)
    return calibration


def fitted_calibration(thread: Thread, config: Settings, counter: TokenCounter,
                       summarizer: Summarizer | None = None, *, compactions: str = "recorded") -> Calibration:
    """The calibration fitted against a reference replay of the thread (not remembered)."""
    ctx = ReplayContext(counter=counter, summarizer=summarizer, follow_recorded=compactions == "recorded")
    reference_replay = Replay(thread, config, ctx)
    timeline = reference_replay.timeline
    # what the agent re-attaches after a compaction, where its profile models it (Claude Code)
    steps = reference_replay._fast.steps
    reference = [a.budget.needed_tokens if a.budget.needed_tokens is not None else a.budget.prompt_tokens
                 for a in timeline]
    recorded = [a.budget.recorded_prompt_tokens for a in timeline]
    segments = segments_from_compactions([a.compaction is not None for a in timeline])
    blocks = [sent_blocks(a.block_counts()) for a in timeline]
    calibration = Calibration(reference, recorded, segments, blocks, _server_calls(thread, timeline),
                              _compaction_counts(thread, timeline, counter),
                              steps.reattached if steps is not None else None,
                              steps.initial if steps is not None else None)
    return calibration
