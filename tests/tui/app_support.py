"""Helpers shared by the app tests (no tests here): threads, sources and a configured app."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from inspector.app import InspectorApp, create_app
from inspector.examples import demo_threads
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.screens.source import MemorySource
from inspector.tui.settle import settle as settle_app

SIZE = (160, 48)


def demo_source() -> MemorySource:
    return MemorySource(demo_threads())


def make_app(tmp_path: Path, source: MemorySource | None = None, **kwargs) -> InspectorApp:
    """An app on in-memory threads whose config, exports and screenshots stay inside tmp_path."""
    kwargs.setdefault("live", False)
    kwargs.setdefault("pane_throttle", 0)  # panes update on every step, so assertions need no timer
    # The Config tab's form (half of the app's widgets) is built when a test opens the tab or edits,
    # not after every start: tests/tui/test_app_first_replay.py pins the prebuilt form.
    kwargs.setdefault("prebuild_config_form", False)
    return create_app(
        source=source or demo_source(),
        config_file=tmp_path / "config.toml",
        export_dir=tmp_path,
        screenshot_dir=tmp_path,
        **kwargs,
    )


async def settle(app: InspectorApp, pilot) -> None:
    """Wait for every worker, then for the UI to process what they handed over, until nothing is left to
    start (`inspector.tui.settle`)."""
    await settle_app(app, pilot)


def plain(widget: Static) -> str:
    """The text a Static shows, rendered to plain characters."""
    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(content)
    return console.export_text()


def coding_thread(thread_id: str = "coding", turns: int = 6, tool_chars: int = 4000) -> Thread:
    """User asks, assistant calls a tool, tool answers, assistant replies; recorded requests."""
    messages: list[Message] = []
    requests: list[Request] = []
    for t in range(1, turns + 1):
        messages.append(Message(f"u{t}", Role.USER, f"question {t} " * 20))
        messages.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", "read_file", {"p": t}),)))
        requests.append(Request(f"r{t}a", f"u{t}", prompt_tokens=1000 * t))
        messages.append(Message(f"t{t}", Role.TOOL, f"output of call {t} " * (tool_chars // 16), tool_call_id=f"c{t}"))
        messages.append(Message(f"b{t}", Role.ASSISTANT, f"answer {t} " * 30))
        requests.append(Request(f"r{t}b", f"t{t}", prompt_tokens=1000 * t + 500))
    return Thread(id=thread_id, title=f"Coding session {thread_id}", source="native", system_prompt="You help.",
                  messages=tuple(messages), requests=tuple(requests), window=20_000)


def long_thread(messages: int, thread_id: str = "long") -> Thread:
    """A derived-request thread: user / assistant pairs, `messages` in all."""
    out = []
    for i in range(messages // 2):
        out.append(Message(f"u{i}", Role.USER, f"user message {i} " * 5))
        out.append(Message(f"a{i}", Role.ASSISTANT, f"assistant message {i} " * 8))
    return Thread(id=thread_id, title=f"long thread {messages}", messages=tuple(out), window=8_000)
