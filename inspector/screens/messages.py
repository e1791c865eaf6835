"""What the controllers' workers hand to the UI: messages posted to the main screen (textual's
`post_message` is thread-safe), handled on the UI thread in the order they were posted
(`inspector.tui.main_screen.MainScreen.on_view_ready`, ...). A worker never calls into a widget itself."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from inspector.config import Config
from inspector.model import Thread, ThreadInfo
from inspector.screens.view import ViewState


class WorkerMessage(Message, bubble=False):
    """A worker's result for the screen that ran it (it goes no further up: each subclass says
    `bubble=False` again, as textual's `Message.__init_subclass__` sets it to True by default)."""


class ThreadsListed(WorkerMessage, bubble=False):
    """The source's threads, listed (opened, or changed under live mode)."""

    def __init__(self, infos: list[ThreadInfo]) -> None:
        super().__init__()
        self.infos = infos


class LoadFailed(WorkerMessage, bubble=False):
    """The database or a thread could not be opened, loaded or replayed."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class Notice(WorkerMessage, bubble=False):
    """One notification (terminal-safe text: `InspectorApp.notify` neutralizes it again)."""

    def __init__(self, text: str, *, title: str = "", severity: Any = "information",
                 timeout: float | None = None) -> None:
        super().__init__()
        self.text, self.title, self.severity, self.timeout = text, title, severity, timeout


class ViewReady(WorkerMessage, bubble=False):
    """A finished view of a thread (a load, a what-if, another compaction mode)."""

    def __init__(self, view: ViewState, *, keep_position: bool) -> None:
        super().__init__()
        self.view, self.keep_position = view, keep_position


class PricesReady(WorkerMessage, bubble=False):
    """The prices of `view` (built before them): the bill's change against the baseline, or why they
    could not be computed (`error`)."""

    def __init__(self, view: ViewState, cost: Any, error: str | None = None) -> None:
        super().__init__()
        self.view, self.cost, self.error = view, cost, error


class ReplayFailed(WorkerMessage, bubble=False):
    """An edit under `config` could not be replayed."""

    def __init__(self, config: Config, text: str) -> None:
        super().__init__()
        self.config, self.text = config, text


class LlmProgress(WorkerMessage, bubble=False):
    """The anthropic summarizer's progress (its stats at the replay's start and now)."""

    def __init__(self, start: Any, stats: Any) -> None:
        super().__init__()
        self.start, self.stats = start, stats


class LiveProblem(WorkerMessage, bubble=False):
    """The database under live mode was deleted or truncated (None: it is back)."""

    def __init__(self, problem: str | None) -> None:
        super().__init__()
        self.problem = problem


class ThreadChanged(WorkerMessage, bubble=False):
    """Live mode saw the rows of `thread_id` change."""

    def __init__(self, thread_id: str) -> None:
        super().__init__()
        self.thread_id = thread_id


class ConfigSaved(WorkerMessage, bubble=False):
    """The config file got the edits: they are the new baseline."""


class LossesReady(WorkerMessage, bubble=False):
    """What each compaction of `view` lost, and how the edit changed it."""

    def __init__(self, view: ViewState, losses: tuple, changes: tuple) -> None:
        super().__init__()
        self.view, self.losses, self.changes = view, losses, changes


class ProbeDone(WorkerMessage, bubble=False):
    """Where a probed text stops being visible in `view`."""

    def __init__(self, view: ViewState, result: Any) -> None:
        super().__init__()
        self.view, self.result = view, result


class ThreadLoaded(WorkerMessage, bubble=False):
    """A thread read from its source, before its first replay: the screen shows its recorded counts
    meanwhile (`view.recorded_points`), under a chart scaled to `window`."""

    def __init__(self, thread: Thread, profile: str, window: int) -> None:
        super().__init__()
        self.thread, self.profile, self.window = thread, profile, window


class ReproductionReady(WorkerMessage, bubble=False):
    """`view.reproduction` is filled in (or failed): the status line says it."""

    def __init__(self, view: ViewState) -> None:
        super().__init__()
        self.view = view
