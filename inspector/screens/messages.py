"""What the controllers' workers hand to the UI: messages posted to the app (textual's `post_message`
is thread-safe), handled on the UI thread in the order they were posted. A worker never calls into
the app's widgets itself."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from inspector.config import Config
from inspector.model import ThreadInfo
from inspector.screens.view import ViewState


class ThreadsListed(Message):
    """The source's threads, listed (opened, or changed under live mode)."""

    def __init__(self, infos: list[ThreadInfo]) -> None:
        super().__init__()
        self.infos = infos


class LoadFailed(Message):
    """The database or a thread could not be opened, loaded or replayed."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class Notice(Message):
    """One notification (terminal-safe text: `InspectorApp.notify` neutralizes it again)."""

    def __init__(self, text: str, *, title: str = "", severity: Any = "information",
                 timeout: float | None = None) -> None:
        super().__init__()
        self.text, self.title, self.severity, self.timeout = text, title, severity, timeout


class ViewReady(Message):
    """A finished view of a thread (a load, a what-if, another compaction mode)."""

    def __init__(self, view: ViewState, *, keep_position: bool) -> None:
        super().__init__()
        self.view, self.keep_position = view, keep_position


class ReplayFailed(Message):
    """An edit under `config` could not be replayed."""

    def __init__(self, config: Config, text: str) -> None:
        super().__init__()
        self.config, self.text = config, text


class LlmProgress(Message):
    """The anthropic summarizer's progress (its stats at the replay's start and now)."""

    def __init__(self, start: Any, stats: Any) -> None:
        super().__init__()
        self.start, self.stats = start, stats


class LiveProblem(Message):
    """The database under live mode was deleted or truncated (None: it is back)."""

    def __init__(self, problem: str | None) -> None:
        super().__init__()
        self.problem = problem


class ThreadChanged(Message):
    """Live mode saw the rows of `thread_id` change."""

    def __init__(self, thread_id: str) -> None:
        super().__init__()
        self.thread_id = thread_id


class ConfigSaved(Message):
    """The config file got the edits: they are the new baseline."""


class LossesReady(Message):
    """What each compaction of `view` lost, and how the edit changed it."""

    def __init__(self, view: ViewState, losses: tuple, changes: tuple) -> None:
        super().__init__()
        self.view, self.losses, self.changes = view, losses, changes


class ProbeDone(Message):
    """Where a probed text stops being visible in `view`."""

    def __init__(self, view: ViewState, result: Any) -> None:
        super().__init__()
        self.view, self.result = view, result
