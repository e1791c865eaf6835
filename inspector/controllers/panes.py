"""Filling the panes for the selected request: the status line, the timeline's label and scale at once,
Budget / Blocks / Summaries throttled (a held arrow key on a long thread stays fluid), and the tables of
hidden tabs only when their tab opens."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual.timer import Timer
from textual.widgets import TabbedContent

from inspector.compare.between_requests import request_step
from inspector.pipeline.calibration import BASIS_NOTES, UNCERTAIN_BASES
from inspector.pipeline.profiles import REGISTRY
from inspector.screens.status import StatusLine, TimelineLabel
from inspector.screens.view import timeline_scale
from widgets.blocks import BlocksView
from widgets.budget import BudgetView
from widgets.names import names_of
from widgets.since_previous import RequestStepView
from widgets.summaries import SummariesView
from widgets.timeline import TimelineChart

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost


class PaneUpdater:
    """Shows `screen.view` at `screen.current_request` in every pane."""

    def __init__(self, screen: InspectorHost, *, throttle: float) -> None:
        self.screen = screen
        self.throttle = throttle
        self.stale_tabs: set[str] = set()
        self.dirty = False
        self.all_tabs = False
        self.updated_at = 0.0  # when the panes were last filled (read by bench/bench_tui.py)
        self.timer: Timer | None = None
        self._at = 0.0

    def show_request(self, *, all_tabs: bool = False) -> None:
        """Update the status line, timeline label and panes for the selected request."""
        screen, view = self.screen, self.screen.view
        if view is None:
            return
        request = screen.current_request
        screen.query_one(StatusLine).show(view, live=screen.live, problem=screen.live_tail.problem)
        self.update_timeline_label()
        chart = screen.query_one(TimelineChart)
        chart.scale = timeline_scale(view, request)
        chart.refresh()
        # The panes cost more than the chart: when the user holds an arrow key, update them at most every
        # `throttle` seconds (leading and trailing edge) so stepping stays fluid on long threads.
        self.dirty = True
        self.all_tabs = self.all_tabs or all_tabs
        now = time.monotonic()
        if self.throttle <= 0 or now - self._at >= self.throttle:
            self.update_panes()
        elif self.timer is None:
            self.timer = screen.set_timer(self.throttle, self.update_panes)

    def update_timeline_label(self) -> None:
        screen = self.screen
        if screen.view is None:
            return
        chart = screen.query_one(TimelineChart)
        screen.query_one(TimelineLabel).show(screen.view, screen.current_request,
                                             overview_per=chart.bucket_size() if chart.overview else None,
                                             shown=chart.shown_requests())

    def update_panes(self) -> None:
        self.timer = None
        screen, view = self.screen, self.screen.view
        if view is None or not self.dirty:
            return
        self.dirty = False
        all_tabs, self.all_tabs = self.all_tabs, False
        self._at = time.monotonic()
        request = screen.current_request
        profile = REGISTRY[view.config.profile]
        window = request.budget.window if request is not None else int(view.config["context.window"])
        threshold_tokens = profile.compaction_at(view.config, request)
        calibration = view.calibration
        recorded = view.recorded_compactions.get(request.request_id) if request is not None else None
        screen.query_one(BudgetView).show(
            request, tokenizer=view.simulation.tokenizer, approximate=view.simulation.approximate,
            threshold_tokens=threshold_tokens, profile=view.config.profile, trigger_reads=profile.trigger_reads,
            request_count=len(view.requests),
            recorded_compaction=recorded,
            calibration=None if calibration is None else calibration.fit.short(),
            calibration_note=_calibration_note(view, request),
            **_own_and_ratio(calibration, request), names=names_of(view.thread),
            pruning_tokens=profile.hard_pruning_at(view.config, window), pricing_note=view.pricing_note)
        # Tables are rebuilt only when visible; the others are refreshed when their tab opens.
        active = screen.query_one(TabbedContent).active
        self.stale_tabs |= {"blocks", "summaries", "step"}
        if all_tabs or active in ("blocks", "summaries", "step"):
            self.refresh_tab(active)
        self.updated_at = time.monotonic()

    def refresh_tab(self, tab: str) -> None:
        screen, view = self.screen, self.screen.view
        if view is None or tab not in self.stale_tabs:
            return
        self.stale_tabs.discard(tab)
        request = screen.current_request
        if tab == "blocks":
            screen.query_one(BlocksView).show(request, view.messages, view.summaries, view.partners,
                                              names_of(view.thread))
        elif tab == "step":
            step = None
            if request is not None and request.index > 0:
                step = request_step(view.audit(request.index - 1), request)
            screen.query_one(RequestStepView).show(step, request, names_of(view.thread))
        elif tab == "summaries":
            injected = request.summaries_injected if request is not None else ()
            screen.query_one(SummariesView).show(view.simulation.summaries, view.summary_stats, injected,
                                                 unused=view.unused_recorded_summaries,
                                                 losses=screen.loss.losses_of(view), names=names_of(view.thread))


def _calibration_note(view: Any, request: Any) -> str | None:
    """What the Budget pane says of an uncertain calibrated prompt (a guess after a compaction with
    nothing recorded since); None where the calibrated prompt is anchored on a recorded count."""
    if view.calibration is None or request is None:
        return None
    basis = view.basis(request.index)
    return BASIS_NOTES[basis] if basis in UNCERTAIN_BASES else None


def _own_and_ratio(calibration: Any, request: Any) -> dict[str, Any]:
    """The calibration's fitted own tokens and ratio for the request's segment (the Budget pane splits the
    calibrated prompt's unaccounted part with them); nothing where the fit gives no such figures."""
    if calibration is None or request is None or calibration.fit.source in ("identity", "poor fit"):
        return {}
    fit, k = calibration.fit, request.index
    if not 0 <= k < len(calibration.segments):
        return {}
    segment = calibration.segments[k]
    own = fit.segment_unaccounted[segment] if segment < len(fit.segment_unaccounted) else None
    ratio = fit.segment_ratio[segment] if segment < len(fit.segment_ratio) else fit.ratio
    return {"own_tokens": fit.unaccounted if own is None else own, "ratio": ratio}
