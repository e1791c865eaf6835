"""What the compactions lost, and probes, for the shown view: computed in workers after the view is on
screen (a compaction's span needs its request's blocks), then handed to the Summaries pane, the diff
panel and the timeline on the UI thread."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from textual.widgets import TabbedContent
from textual.worker import get_current_worker

from inspector.compare.between_replays import LossChange, diff_loss, edit_label
from inspector.controllers.handoff import Handoff
from inspector.pipeline.facts import prepare
from inspector.pipeline.probe import ProbeResult, probe
from inspector.pipeline.survival import CompactionLoss, LossMemo, ReplayLike, compaction_losses
from inspector.screens.messages import LossesReady, ProbeDone
from inspector.screens.view import FullReplay, ViewState
from widgets.blocks import BlocksView
from widgets.safe import safe_line
from widgets.timeline import TimelineChart

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost

PREPARE_CHUNK = 256  # messages whose facts are extracted between checks for cancellation


def _replay_of(view: ViewState, *, baseline: bool = False) -> ReplayLike:
    replay = view.baseline_replay if baseline else view.replay
    if replay is None:
        return FullReplay(view.baseline if baseline else view.simulation)
    return replay


class LossTracker:
    """Losses of the shown view's compactions (and of its baseline, for the diff), and the last probe."""

    def __init__(self, screen: InspectorHost) -> None:
        self.screen = screen
        self.view: ViewState | None = None  # the view `losses` belong to
        self.losses: dict[str, CompactionLoss] = {}
        self.changes: tuple[LossChange, ...] = ()
        self._baseline: tuple[object, tuple[CompactionLoss, ...]] | None = None  # (baseline replay, its losses)
        self.probe_text: str | None = None
        self.probe_result: ProbeResult | None = None
        self.memo = LossMemo()  # an edit judges only the compactions whose span or summary it changed
        self.shown_at = 0.0  # when the screen was painted with the last losses (the edit's whole answer)

    # losses -------------------------------------------------------------------------------------------

    def compute(self, view: ViewState) -> None:
        self.screen.run_worker(partial(self._work, Handoff(view)), thread=True, exclusive=True, group="loss",
                            exit_on_error=False, description="what compactions lost")

    def _work(self, handoff: Handoff) -> None:
        view = handoff.take()
        worker = get_current_worker()
        if view.simulation.summaries:  # the facts of every message, a chunk at a time (a newer view cancels)
            messages = view.thread.messages
            for start in range(0, len(messages), PREPARE_CHUNK):
                if worker.is_cancelled:
                    return
                prepare(messages[start : start + PREPARE_CHUNK])
        current = compaction_losses(view.thread, _replay_of(view), memo=self.memo)
        changes: tuple[LossChange, ...] = ()
        if view.diff is not None:
            key = view.baseline_replay if view.baseline_replay is not None else view.baseline
            if self._baseline is not None and self._baseline[0] is key:
                base = self._baseline[1]
            else:
                base = compaction_losses(view.thread, _replay_of(view, baseline=True), memo=self.memo)
                self._baseline = (key, base)
            changes = diff_loss(base, current)
        elif view.replay is not None:
            self._baseline = (view.replay, current)
        if not worker.is_cancelled:
            self.screen.post_message(LossesReady(view, current, changes))

    def show(self, view: ViewState, losses: tuple[CompactionLoss, ...], changes: tuple[LossChange, ...]) -> ViewState:
        """UI thread: `view` with how the edit changed loss in its diff (the screen puts it in place of
        `view`), and the losses kept for the Summaries pane."""
        if view.diff is not None:
            edits = {key: new for key, (_old, new) in view.config.changed_keys(view.baseline_config).items()}
            if view.config.profile != view.baseline_config.profile:
                edits = {"profile": view.config.profile, **edits}
            view = replace(view, diff=replace(view.diff, loss=changes, loss_label=edit_label(edits)))
        self.view, self.losses, self.changes = view, {loss.summary_id: loss for loss in losses}, changes
        return view

    def painted(self) -> None:
        """The screen was painted with the last losses (the edit's whole answer)."""
        self.shown_at = time.monotonic()

    def losses_of(self, view: ViewState | None) -> dict[str, CompactionLoss] | None:
        """The losses of `view`, or None while they are being computed."""
        return self.losses if view is not None and view is self.view else None

    def jump_to_source(self, message_id: str, request_index: int, fact: str | None = None) -> None:
        """Show the block of `message_id` at the compaction's request, in the Blocks pane, with `fact`
        (the lost fact's text) marked in its detail."""
        screen = self.screen
        screen.jump_to_request(request_index)
        screen.query_one(TabbedContent).active = "blocks"
        screen.panes.stale_tabs.add("blocks")
        screen.panes.refresh_tab("blocks")
        blocks = screen.query_one(BlocksView)
        request = blocks.request
        if request is not None:
            index = next((i for i, b in enumerate(request.blocks) if b.message_id == message_id), None)
            if index is not None:
                blocks.select_block(index, fact)
        screen.query_one("#blocks-table").focus()

    # probes -------------------------------------------------------------------------------------------

    def probe(self, view: ViewState, text: str) -> None:
        self.probe_text = text
        self.screen.run_worker(partial(self._probe_work, view, text), thread=True, exclusive=True, group="probe",
                            exit_on_error=False, description="probe")

    def _probe_work(self, view: ViewState, text: str) -> None:
        (result,) = probe(view.thread, _replay_of(view), [text])
        if not get_current_worker().is_cancelled:
            self.screen.post_message(ProbeDone(view, result))

    def show_probe(self, view: ViewState, result: ProbeResult) -> None:
        """UI thread: mark the request where the text disappears, and go there."""
        screen = self.screen
        if screen.view is None or screen.view.thread is not view.thread or result.text != self.probe_text:
            return
        self.probe_result = result
        chart = screen.query_one(TimelineChart)
        chart.mark_probe(result.lost_at)
        quoted = f'"{safe_line(result.text, 60)}"'
        if result.lost_at is not None:
            screen.notify(f"{quoted} stops being visible at request {result.lost_at + 1} (⊘ on the timeline)",
                       timeout=6)
            screen.jump_to_request(result.lost_at)
        elif result.first_seen is None:
            screen.notify(f"{quoted} is never visible to the model in this replay", severity="warning", timeout=6)
        else:
            screen.notify(f"{quoted} stays visible from request {result.first_seen + 1} on", timeout=6)

    def view_changed(self, view: ViewState, *, same_thread: bool) -> None:
        """A new view is on screen: its losses, and the probe again (a what-if moves where a text goes)."""
        self.compute(view)
        if self.probe_text is not None and same_thread:
            self.probe(view, self.probe_text)
        else:
            self.probe_text = self.probe_result = None
            self.screen.query_one(TimelineChart).mark_probe(None)
