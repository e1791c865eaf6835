"""What the compactions lost, and probes, for the shown view: computed in workers after the view is on
screen (a compaction's span needs its request's blocks), then handed to the main screen as messages
(`LossesReady`, `ProbeDone`), which shows them in the Summaries pane, the diff panel and the timeline.
The tracker keeps the state (the losses of which view, the last probe) and touches no widget."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from inspector.compare.between_replays import LossChange, diff_loss, edit_label
from inspector.controllers.handoff import Handoff
from inspector.pipeline import Replay
from inspector.pipeline.audit import BlockStatus, RequestAudit, Simulation
from inspector.pipeline.facts import prepare
from inspector.pipeline.probe import ProbeResult, probe
from inspector.pipeline.survival import CompactionLoss, LossMemo, ReplayLike, compaction_losses
from inspector.screens.messages import LossesReady, ProbeDone
from inspector.screens.view import FullReplay, ViewState

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost

PREPARE_CHUNK = 256  # messages whose facts are extracted between checks for cancellation


def _replay_of(view: ViewState, *, baseline: bool = False) -> ReplayLike:
    replay = view.baseline_replay if baseline else view.replay
    if replay is None:
        return FullReplay(view.baseline if baseline else view.simulation)
    return _Unpriced(replay) if isinstance(replay, Replay) else replay


class _Unpriced:
    """A replay's timeline and blocks without their prices: what losses and probes read. An edit's
    pricing runs in a worker of its own (`ReplayController.price`); these never wait for it."""

    __slots__ = ("_replay", "timeline", "summaries")

    def __init__(self, replay: Replay) -> None:
        self._replay = replay
        self.timeline, self.summaries = replay.timeline, replay.summaries

    def audit(self, index: int) -> RequestAudit:
        return self._replay.audit(index, priced=False)

    def simulation(self, *, blocks: bool = True, priced: bool = True) -> Simulation:
        return self._replay.simulation(blocks=blocks, priced=False)

    def summary_spans(self) -> dict[str, tuple[str, ...]] | None:
        return self._replay.summary_spans()

    def message_statuses(self, index: int, message_ids) -> dict[str, BlockStatus] | None:
        return self._replay.message_statuses(index, message_ids)


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
        message = self.losses_ready(handoff.take())
        if message is not None:
            self.screen.post_message(message)

    def losses_ready(self, view: ViewState) -> LossesReady | None:
        """In a worker: what `view`'s compactions lost, and how its edit changed that, as the message for
        the screen; None where the worker was cancelled (a newer view is coming)."""
        worker = get_current_worker()
        if view.simulation.summaries:  # the facts of every message, a chunk at a time (a newer view cancels)
            messages = view.thread.messages
            for start in range(0, len(messages), PREPARE_CHUNK):
                if worker.is_cancelled:
                    return None
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
        return None if worker.is_cancelled else LossesReady(view, current, changes)

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
        """The losses of `view` (of its replays: its prices may have come after them), or None while they
        are being computed."""
        if view is None or self.view is None or not (view is self.view or view.same_replays(self.view)):
            return None
        return self.losses

    # probes -------------------------------------------------------------------------------------------

    def probe(self, view: ViewState, text: str) -> None:
        self.probe_text = text
        self.screen.run_worker(partial(self._probe_work, view, text), thread=True, exclusive=True, group="probe",
                               exit_on_error=False, description="probe")

    def _probe_work(self, view: ViewState, text: str) -> None:
        (result,) = probe(view.thread, _replay_of(view), [text])
        if not get_current_worker().is_cancelled:
            self.screen.post_message(ProbeDone(view, result))

    def probe_finished(self, view: ViewState, result: ProbeResult, shown: ViewState | None) -> bool:
        """UI thread: keep `result` if it answers the last probe of the thread `shown` (else it is stale)."""
        if shown is None or shown.thread is not view.thread or result.text != self.probe_text:
            return False
        self.probe_result = result
        return True

    def keeps_probe(self, *, same_thread: bool) -> bool:
        """A new view goes on screen: whether the last probe is run again on it (a what-if of the same
        thread moves where a text goes); else it is forgotten (and the timeline's probe mark goes)."""
        if self.probe_text is not None and same_thread:
            return True
        self.probe_text = self.probe_result = None
        return False

    def view_changed(self, view: ViewState, *, losses: bool = True) -> None:
        """The new view is painted: its losses (`losses=False`: another worker computes them, `losses_ready`),
        and the last probe again where `keeps_probe` kept it."""
        if losses:
            self.compute(view)
        if self.probe_text is not None:
            self.probe(view, self.probe_text)
