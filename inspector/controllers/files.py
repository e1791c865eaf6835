"""What the app writes: the config file (ctrl+o), the selected audit as JSON (e) and screenshots (ctrl+s).

Writes run in "io" workers; each tells the user where the file went or why it could not be written."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.config import Config, ConfigError
from inspector.pipeline.audit import RequestAudit
from inspector.screens.messages import ConfigSaved, Notice
from inspector.screens.view import ViewState
from inspector.terminal_safety import json_dumps
from inspector.writes import create_new
from widgets.safe import safe_line

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost


def export_payload(view: ViewState | None, request: RequestAudit | None) -> dict[str, Any] | None:
    """The simulation JSON at the selected request, with that request's every block."""
    if view is None or request is None:
        return None
    if not view.priced and view.pricing_error is None and view.replay is not None:
        request = view.replay.audit(request.index)  # its prices, not a request without them, while they come
    payload = view.simulation.to_json(request=request.index)
    payload["requests"] = [request.to_json()]  # the selected request with every block
    payload["thread_title"] = view.thread.title
    return payload


class FileWriter:
    """Writes for `screen` in "io" workers."""

    def __init__(self, screen: InspectorHost, *, config_file: Path | None, export_dir: Path,
                 screenshot_dir: Path) -> None:
        self.screen = screen
        self.config_file = config_file
        self.export_dir = export_dir
        self.screenshot_dir = screenshot_dir
        self.last_export: Path | None = None

    def _run(self, work: Any, description: str) -> None:
        self.screen.run_worker(work, thread=True, group="io", exit_on_error=False, description=description)

    def save_config(self, view: ViewState) -> None:
        """Add the view's edits to the config file (never the thread's own window)."""
        self._run(partial(self._save_config_work, view.config, view.baseline_config, view.thread.window),
                  "save config")

    def _save_config_work(self, config: Config, baseline: Config, thread_window: int | None) -> None:
        from inspector.service import save_edits

        screen = self.screen
        try:
            saved = save_edits(config, baseline, self.config_file, thread_window=thread_window)
        except (OSError, ConfigError) as exc:
            screen.post_message(Notice(safe_line(f"cannot save config: {exc}", 300), severity="error"))
            return
        if saved.written:
            message = f"config saved to {saved.path}: {', '.join(saved.saved) or 'profile'}"
        else:
            message = f"nothing to save to {saved.path}: no edits"
        if saved.skipped:
            message += f" (not saved: {', '.join(saved.skipped)}, this thread's own)"
        screen.post_message(Notice(message, timeout=6))
        if saved.written:
            screen.post_message(ConfigSaved())

    def rebase(self) -> None:
        """The saved values are the new baseline: the shown thread is replayed against the config file as
        it is now (the edits it still differs in, such as a thread's own window, carried over)."""
        screen = self.screen
        if screen.view is not None:
            screen.replayer.load(screen.view.thread.id, keep_position=True)

    def export(self, payload: dict[str, Any]) -> None:
        self._run(partial(self._export_work, payload), "export audit")

    def _export_work(self, payload: dict[str, Any]) -> None:
        """A new file, never over an existing one or through a link at its name: the next free name
        (`...-2.json`) instead (`inspector.writes.create_new`)."""
        screen = self.screen
        thread_part = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(payload["thread_id"]))[:60] or "thread"
        index = payload["requests"][0]["index"] + 1 if payload["requests"] else 0
        path = self.export_dir / f"audit-{thread_part}-request-{index}.json"
        try:
            path = create_new(path, json_dumps(payload) + "\n")
        except OSError as exc:
            screen.post_message(Notice(safe_line(f"cannot export: {exc}", 200), severity="error"))
            return
        self.last_export = path
        screen.post_message(Notice(f"audit exported to {path}", timeout=4))

    def screenshot(self) -> None:
        path = self.screen.app.save_screenshot(path=str(self.screenshot_dir))
        self.screen.notify(f"screenshot saved to {path}", timeout=4)
