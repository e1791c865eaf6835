"""Everything the panes show for one thread, computed in a worker thread and handed over as one object."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from itertools import accumulate
from typing import Any, Protocol

from inspector.compare.between_replays import (
    BlockChange,
    CostDelta,
    SimulationDiff,
    block_changes_shown,
    diff_simulations,
)
from inspector.config import Config, thread_values
from inspector.model import Message, Summary, Thread, tool_groups
from inspector.pipeline import Replay
from inspector.pipeline.audit import RequestAudit, Simulation
from inspector.pipeline.calibration import UNCERTAIN_BASES
from inspector.pipeline.profiles import REGISTRY
from inspector.thread_tree import SubagentTotals
from inspector.tokens import message_costs, text_cost
from widgets.summaries import SummaryStats
from widgets.timeline import TimelinePoint, TimelineScale


class Simulator(Protocol):
    """simulator(thread, config, compactions="recorded" | "decide") -> a Replay (timeline now, blocks on
    demand) or a full Simulation."""

    def __call__(self, thread: Thread, config: Config, *, compactions: str) -> Replay | Simulation: ...


class FullReplay:
    """A Replay-like wrapper around a Simulation that already holds every block."""

    def __init__(self, simulation: Simulation) -> None:
        self._simulation = simulation
        self.notices: list[str] = []

    def __len__(self) -> int:
        return len(self._simulation.requests)

    def audit(self, index: int) -> RequestAudit:
        return self._simulation.requests[index]

    def simulation(self, *, blocks: bool = True, priced: bool = True) -> Simulation:
        return self._simulation


def _run(simulator: Simulator, thread: Thread, config: Config, *, compactions: str) -> Replay | FullReplay:
    """One replay in the given compaction mode."""
    out = simulator(thread, config, compactions=compactions)
    return FullReplay(out) if isinstance(out, Simulation) else out


def _timeline(replay: Replay | FullReplay) -> Simulation:
    """The timeline without the cache and cost in every budget (the panes read those per request,
    and the diff the replays' totals): pricing every request of a long thread on each edit is waste."""
    if isinstance(replay, Replay):
        return replay.simulation(blocks=False, priced=False)
    return replay.simulation(blocks=False)


def _with_cost(diff: SimulationDiff, baseline: Replay | FullReplay, current: Replay | FullReplay) -> SimulationDiff:
    if isinstance(baseline, Replay) and isinstance(current, Replay):
        from inspector.compare.between_replays import cost_delta_of_totals

        return replace(diff, cost=cost_delta_of_totals(baseline.cost_totals(), current.cost_totals()))
    return diff


class Reproduction:
    """How many of the thread's recorded compactions its baseline config, left to decide, places within
    one request (`compare.between_replays.reproduction`), by `by` (the profile's name, or the name and
    how many of its keys the baseline changes: a user's config is not the profile).

    Filled once: a new thread's first view goes on screen before this third replay (a decide replay of
    the whole thread) has run, and the replay controller fills it in afterwards (`known` turns True
    after `result` is set). The views of one thread under one baseline share the one object, so an edit
    made meanwhile shows the result too. Never a guess: until it is known the status says so."""

    __slots__ = ("by", "result", "error", "known", "claimed")

    def __init__(self, by: str, result: tuple[int, int] | None = None, *, known: bool = False) -> None:
        self.by, self.result, self.known = by, result, known
        self.error: str | None = None
        self.claimed = known  # a worker is filling it in (or it is known): the views after the first ask no more

    def claim(self) -> bool:
        """True once, for the one worker that fills it in (called on the UI thread)."""
        if self.claimed:
            return False
        self.claimed = True
        return True

    def fill(self, result: tuple[int, int] | None) -> None:
        self.result = result
        self.known = self.claimed = True

    def fail(self, error: str) -> None:
        """The decide replay failed: the status says the reproduction is unknown, and why."""
        self.error = error
        self.known = True

    def __repr__(self) -> str:
        return f"Reproduction({self.by!r}, {self.result!r}, known={self.known})"


def default_simulator(thread: Thread, config: Config, *, compactions: str) -> Replay:
    from inspector.service import run_replay

    return run_replay(thread, config, compactions=compactions)


@dataclass(frozen=True)
class ViewState:
    thread: Thread
    baseline_config: Config
    baseline: Simulation
    config: Config
    simulation: Simulation
    diff: SimulationDiff | None
    summary_stats: dict[str, SummaryStats]
    messages: dict[str, Message] = field(repr=False)
    summaries: dict[str, Summary] = field(repr=False)
    data_version: tuple | None = None
    partners: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    positions: dict[str, int] = field(default_factory=dict, repr=False)  # message id -> index in the thread
    replay: Replay | FullReplay | None = field(default=None, repr=False, compare=False)
    baseline_replay: Replay | FullReplay | None = field(default=None, repr=False, compare=False)
    # "recorded" | "decide": the baseline and the what-if are replayed in this one mode
    compactions: str = "recorded"
    # how the baseline config, left to decide, reproduces the recorded compactions; None: none recorded
    reproduction: Reproduction | None = field(default=None, compare=False)
    # the thread's sub-agents, replayed each under its own baseline (shown apart); None: it has none
    subagents: SubagentTotals | None = None
    # False: the what-if is on screen before its prices (`build_view(price=False)`): the panes say
    # `pricing_note` where the cost goes, never the previous replay's figures, until `with_prices`
    priced: bool = True
    pricing_error: str | None = None  # why its prices could not be computed (`with_pricing_error`)

    @property
    def calibration(self):
        """The thread's calibrated token model (None for a simulator that has none)."""
        return getattr(self.replay, "calibration", None)

    def basis(self, index: int) -> str | None:
        """How request `index`'s calibrated prompt was obtained (`calibration.BASES`): the replay's own
        (a decide replay's segments follow its compactions), else the model's; None without one."""
        bases = self.simulation.calibration_basis
        if bases is not None and 0 <= index < len(bases):
            return bases[index]
        calibration = self.calibration
        return None if calibration is None else calibration.basis(index)

    @cached_property
    def guesses(self) -> frozenset[int]:
        """The requests whose calibrated prompt is a guess (an uncertain basis) in this replay."""
        calibration = self.calibration
        if calibration is None or calibration.fit.source in ("identity", "poor fit"):
            return frozenset()
        bases = self.simulation.calibration_basis
        if bases is None:
            return calibration.guesses
        return frozenset(k for k, basis in enumerate(bases) if basis in UNCERTAIN_BASES)
    file_overrides: tuple[str, ...] = ()  # keys of the baseline that come from the config file, not the defaults
    # (request index, limit) -> block_changes_shown (kept by `dataclasses.replace`: same replays)
    _changes: dict = field(default_factory=dict, repr=False, compare=False)
    _audits: dict = field(default_factory=dict, repr=False, compare=False)  # index -> audit(index)
    _baseline_audits: dict = field(default_factory=dict, repr=False, compare=False)

    def audit(self, index: int) -> RequestAudit:
        """Request `index` with its full block list (built on demand for long threads; the panes'
        requests are remembered here too, so that the loss worker's audits of every compaction,
        which cycle the replay's own cache, do not make the UI thread build the selected one again)."""
        if self.replay is None:
            return self.simulation.requests[index]
        if not self.priced:  # a Replay (`build_view`): its blocks, without the prices still to come
            return _remembered(self._audits, index, partial(self.replay.audit, priced=False))
        return _remembered(self._audits, index, self.replay.audit)

    @property
    def pricing_note(self) -> str | None:
        """What the panes say where the cost goes while the view is not priced (None once it is)."""
        if self.priced:
            return None
        return PRICING if self.pricing_error is None else f"cost unknown: pricing failed: {self.pricing_error}"

    def same_replays(self, other: ViewState) -> bool:
        """Whether `other` shows the same replays (the same edit of the same thread): what a worker computed
        for `other` (its losses, its prices) belongs to this view too, whichever of them came first."""
        return (self.thread is other.thread and self.replay is other.replay
                and self.baseline_replay is other.baseline_replay and self.config == other.config)

    def baseline_audit(self, index: int) -> RequestAudit:
        if self.baseline_replay is None:
            return self.baseline.requests[index]
        return _remembered(self._baseline_audits, index, self.baseline_replay.audit)

    def block_changes_shown(self, index: int, limit: int) -> tuple[int, list[BlockChange]] | None:
        """How many blocks of request `index` changed status against the baseline's same request,
        and the first `limit` of them (`diff.block_changes_shown`); None where the baseline has no
        such request. Remembered per request: the worker computes the selected one, the panes read it."""
        key = (index, limit)
        hit = self._changes.get(key)
        if hit is None and key not in self._changes:
            request = self.audit(index)
            base = self.baseline_audit(index) if index < len(self.baseline.requests) else None
            if base is not None and base.request_id == request.request_id:
                hit = block_changes_shown(base, request, limit)
            elif base is not None:
                hit = (0, [])
            if len(self._changes) > 64:
                self._changes.clear()
            self._changes[key] = hit
        return hit

    @property
    def notices(self) -> tuple[str, ...]:
        return tuple(self.replay.notices) if self.replay is not None else ()

    @cached_property
    def recorded_compactions(self) -> dict[str, Summary]:
        """The thread's recorded summaries by the request they came before (where the app compacted)."""
        return {s.before_request_id: s for s in self.thread.summaries if s.before_request_id}

    @cached_property
    def recorded_events(self) -> dict[str, list[Mapping[str, Any]]]:
        """In-place context changes the app recorded (Claude Code's microcompact clearing old tool results),
        by the request they came before (`thread.meta["events"]`)."""
        out: dict[str, list[Mapping[str, Any]]] = {}
        events = self.thread.meta.get("events")
        for event in events if isinstance(events, list) else ():
            if isinstance(event, Mapping) and isinstance(event.get("before_request_id"), str):
                out.setdefault(event["before_request_id"], []).append(event)
        return out

    @cached_property
    def points(self) -> list[TimelinePoint]:
        """The timeline chart's points (`timeline_points`), remembered: the workers compute them, not the
        UI thread (5-7 ms on a 2,574-request thread, on every edit)."""
        return timeline_points(self)

    @cached_property
    def unused_recorded_summaries(self) -> tuple[Summary, ...]:
        """Recorded summaries that this replay's chain does not contain."""
        used = {s.id for s in self.simulation.summaries}
        return tuple(s for s in self.thread.summaries if s.id not in used)

    @property
    def requests(self) -> tuple[RequestAudit, ...]:
        return self.simulation.requests

    @property
    def cost_totals(self):
        """The shown replay's bill (`accounting.ThreadCost`); None where the cache is not modelled."""
        if not self.priced:  # still being computed (`priced`): never priced here, on the UI thread
            return None
        totals = getattr(self.replay, "cost_totals", None)
        return totals() if callable(totals) else None

    @property
    def is_what_if(self) -> bool:
        return self.config != self.baseline_config


PRICING = "pricing…"  # said where a cost goes while the what-if's prices are computed (`ViewState.priced`)
REMEMBERED_AUDITS = 8  # requests whose blocks a view keeps for the panes (the selected one and its neighbours)


def _remembered(memo: dict, index: int, audit: Callable[[int], RequestAudit]) -> RequestAudit:
    hit = memo.get(index)
    if hit is None:
        hit = audit(index)
        if len(memo) >= REMEMBERED_AUDITS:
            memo.clear()
        memo[index] = hit
    return hit


def summary_stats(thread: Thread, sim: Simulation, config: Config,
                  index: dict[str, int] | None = None) -> dict[str, SummaryStats]:
    """Covered messages and tokens and the summary's own tokens, per summary of the replay.

    `index`: message id -> position in the thread, when the caller already has it."""
    used = {s.id for s in sim.summaries}
    every = (*sim.summaries, *(s for s in thread.summaries if s.id not in used))
    if not every:
        return {}
    from inspector.service import make_counter

    counter = make_counter(config)
    overhead = REGISTRY[config.profile].message_overhead
    costs = message_costs(counter, thread.messages, overhead)
    prefix = [0, *accumulate(costs)]
    index = thread.message_index() if index is None else index
    out: dict[str, SummaryStats] = {}
    for s in every:
        first, last = index.get(s.first_message_id), index.get(s.last_message_id)
        if first is None or last is None or last < first:
            covered, count = 0, 0
        else:
            covered, count = prefix[last + 1] - prefix[first], last - first + 1
        out[s.id] = SummaryStats(count, covered, text_cost(counter, s.injected_text(), overhead))
    return out


def tool_partners(thread: Thread) -> dict[str, tuple[str, ...]]:
    """For every message in a tool group of two or more, the ids of the other members."""
    groups: dict[int, list[str]] = {}
    for message, group in zip(thread.messages, tool_groups(thread.messages), strict=True):
        groups.setdefault(group, []).append(message.id)
    out: dict[str, tuple[str, ...]] = {}
    for members in groups.values():
        if len(members) > 1:
            for mid in members:
                out[mid] = tuple(m for m in members if m != mid)
    return out


def build_view(
    thread: Thread,
    baseline_config: Config,
    config: Config,
    simulator: Simulator,
    *,
    baseline: Replay | FullReplay | None = None,
    data_version: tuple | None = None,
    previous: ViewState | None = None,
    file_overrides: tuple[str, ...] | None = None,
    compactions: str | None = None,
    subagents: SubagentTotals | None = None,
    reproduce: bool = True,
    price: bool = True,
) -> ViewState:
    """Replay under the baseline (unless given) and, when it differs, under `config`, both in
    one compaction mode (`compactions`; default: the previous view's, else `recorded` where the
    thread recorded compactions, else `decide`), so an edit that changes nothing moves nothing;
    diff the two timelines. `subagents`: the thread's sub-agents' figures (default: the previous view's
    of the same thread). `reproduce=False`: the reproduction of the recorded compactions, where it needs
    a replay of its own, is left to `fill_reproduction` (the view goes on screen first). `price=False`: a
    what-if of two Replays is not priced here (`priced` False, its diff `pricing`): `price_view` computes
    its prices in a worker once it is on screen, and `with_prices` puts them in."""
    same_thread = previous is not None and previous.thread is thread  # per-thread tables carry over
    if subagents is None and same_thread:
        subagents = previous.subagents
    positions = previous.positions if same_thread and previous.positions else thread.message_index()
    if compactions is None:
        compactions = previous.compactions if same_thread else ("recorded" if thread.summaries else "decide")
    if baseline is None:
        baseline = _run(simulator, thread, baseline_config, compactions=compactions)
    baseline_sim = _timeline(baseline)
    if isinstance(baseline, Replay):
        baseline.costs  # noqa: B018 - the prompt cache of every request, here in the worker, not on the UI thread
    priced = True
    if config == baseline_config:
        current, simulation, diff = baseline, baseline_sim, None
    else:
        current = _run(simulator, thread, config, compactions=compactions)
        simulation = _timeline(current)
        # Two Replays: the cost delta comes from their totals (the timelines are not priced)
        replays = isinstance(baseline, Replay) and isinstance(current, Replay)
        diff = diff_simulations(baseline_sim, simulation, cost=not replays)
        if replays and not price:
            priced, diff = False, replace(diff, pricing=f"billed tokens, cache breaks and cost: {PRICING}")
        else:
            diff = _with_cost(diff, baseline, current)
    if same_thread and previous.baseline_config == baseline_config:
        reproduction = previous.reproduction
    elif not thread.summaries:
        reproduction = None
    else:
        reproduction = Reproduction(config_owner(thread, baseline_config))
        if reproduce or compactions == "decide":  # in decide mode the baseline is the decide replay
            reproduction.fill(_reproduction(simulator, thread, baseline_config, baseline_sim, compactions))
    return ViewState(
        thread=thread,
        baseline_config=baseline_config,
        baseline=baseline_sim,
        config=config,
        simulation=simulation,
        diff=diff,
        summary_stats=summary_stats(thread, simulation, config, positions),
        messages=previous.messages if same_thread else {m.id: m for m in thread.messages},
        positions=positions,
        summaries={s.id: s for s in simulation.summaries} | {s.id: s for s in thread.summaries
                                                              if s.id not in {x.id for x in simulation.summaries}},
        data_version=data_version,
        partners=previous.partners if same_thread else tool_partners(thread),
        replay=current,
        baseline_replay=baseline,
        file_overrides=(previous.file_overrides if same_thread and file_overrides is None else file_overrides or ()),
        compactions=compactions,
        reproduction=reproduction,
        subagents=subagents,
        priced=priced,
    )


def price_view(view: ViewState) -> CostDelta | None:
    """A worker's job for a view built with `price=False`: its replay's prices (the cache model of every
    request) and the bill's change against the baseline (None where either has no bill)."""
    from inspector.compare.between_replays import cost_delta_of_totals

    assert isinstance(view.replay, Replay) and isinstance(view.baseline_replay, Replay)
    return cost_delta_of_totals(view.baseline_replay.cost_totals(), view.replay.cost_totals())


def with_prices(view: ViewState, cost: CostDelta | None) -> ViewState:
    """`view` (not priced) with its prices: the bill's change in its diff, its requests' audits priced
    (the replay prices the blocks it already built)."""
    diff = None if view.diff is None else replace(view.diff, cost=cost, pricing="")
    return replace(view, diff=diff, priced=True, _audits={})


def with_pricing_error(view: ViewState, error: str) -> ViewState:
    """`view` (not priced) whose prices could not be computed: it stays unpriced, and says why."""
    view = replace(view, pricing_error=error)
    note = view.pricing_note
    assert note is not None
    return view if view.diff is None else replace(view, diff=replace(view.diff, pricing=note))


def config_owner(thread: Thread, config: Config) -> str:
    """`config` named for what it is: its profile's name when it is that profile's own config for
    `thread`, else the name and how many keys differ from it."""
    own = Config.for_profile(config.profile, thread_values(thread, config.profile))
    changed = len(config.changed_keys(own))
    return config.profile if not changed else f"{config.profile} with {changed} key{'s' if changed != 1 else ''} changed"


def fill_reproduction(view: ViewState, simulator: Simulator) -> bool:
    """Fill in `view.reproduction` where `build_view(reproduce=False)` left it unknown (a worker's job:
    a decide replay of the whole thread); False where there was nothing to fill."""
    cell = view.reproduction
    if cell is None or cell.known:
        return False
    cell.fill(_reproduction(simulator, view.thread, view.baseline_config, view.baseline, view.compactions))
    return True


def recorded_points(thread: Thread) -> list[TimelinePoint]:
    """The timeline as the thread recorded it, before any replay: each request's billed prompt (0 where
    none was recorded) and the compactions the agent made. Empty where nothing was recorded: a chart of
    zeros would be a confident wrong picture."""
    requests = thread.requests
    if not any(r.prompt_tokens is not None for r in requests):
        return []
    compacted = {s.before_request_id for s in thread.summaries if s.before_request_id}
    return [TimelinePoint(r.prompt_tokens or 0, r.prompt_tokens, r.id in compacted, False, recorded_compaction=r.id in compacted)
            for r in requests]


def _reproduction(simulator: Simulator, thread: Thread, config: Config, baseline: Simulation,
                  compactions: str) -> tuple[int, int] | None:
    """How many recorded compactions the baseline config, left to decide, places within one request."""
    if not thread.summaries:
        return None
    from inspector.compare.between_replays import reproduction

    decided = baseline if compactions == "decide" else _timeline(_run(simulator, thread, config, compactions="decide"))
    return reproduction(thread.summaries, decided.requests)


def timeline_points(view: ViewState) -> list[TimelinePoint]:
    changed: set[int] = set()
    if view.diff is not None:
        changed = set(view.diff.changed_blocks) | set(view.diff.prompt_delta)
    recorded = view.recorded_compactions
    events = view.recorded_events
    guesses = view.guesses
    points = []
    append = points.append
    for r in view.requests:  # one per request on every edit: attributes read once
        b = r.budget
        # the bars are what the provider would bill (calibrated); the recorded dots stay
        tokens = b.calibrated_prompt_tokens
        failed = r.status == "failed"
        if tokens is None:
            tokens = b.prompt_tokens
            if failed and b.needed_tokens is not None:
                tokens = b.needed_tokens
        rid = r.request_id
        append(TimelinePoint(tokens, b.recorded_prompt_tokens, r.compaction is not None, failed,
                             r.index in changed, rid in recorded, rid in events, r.index in guesses))
    return points


def timeline_scale(view: ViewState, request: RequestAudit | None) -> TimelineScale:
    config = view.config
    profile = REGISTRY[config.profile]
    window = request.budget.window if request is not None else int(config["context.window"])
    threshold = profile.compaction_at(config, request)
    budget = profile.ceiling(request) if request is not None else None
    if budget is not None and request is not None and not profile.ceiling_in_billed_tokens:
        b = request.budget
        if b.calibrated_prompt_tokens is not None and b.prompt_tokens > 0:
            # The bars are what the provider would bill: the ceiling the profile enforces on its own count,
            # in the same units (what the calibration adds to this request's count, added to the ceiling),
            # never above the window, which is the provider's own limit in billed tokens.
            budget = min(window, budget + b.calibrated_prompt_tokens - b.prompt_tokens)
    return TimelineScale(window=window, budget=budget, threshold=threshold)
