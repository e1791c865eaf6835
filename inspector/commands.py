"""The command palette (ctrl+p). Static commands (switch profile or strategy, export, jump, sweep,
reset, save) are the App's system commands (`main_screen_commands`, offered over the main screen
only); the dynamic ones (a thread, one of the largest blocks, "Request N", "Probe: TEXT") come from
`InspectorCommands`, the main screen's provider."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider

from inspector.config import PROFILES, STRATEGIES, only_reader
from widgets.budget import largest_block_indexes
from widgets.safe import safe_line

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost


def main_screen_commands(screen: InspectorHost) -> Iterator[SystemCommand]:
    """The palette's static commands over the main screen."""
    for profile in PROFILES:
        yield SystemCommand(f"Profile: {profile}", "replay under this profile", partial(screen.set_profile, profile))
    strategist = only_reader("context.strategy")
    for strategy in STRATEGIES:
        yield SystemCommand(f"Strategy: {strategy}", f"{strategist} strategy (switches to the {strategist} profile)",
                            partial(screen.set_config_value, "context.strategy", strategy))
    yield SystemCommand("Export selected audit as JSON", "write a file in the current directory",
                        screen.action_export_audit)
    yield SystemCommand("Jump to first failure", "first failed request", screen.action_first_failure)
    yield SystemCommand("Jump to next compaction", "next request with a compaction", screen.action_next_compaction)
    yield SystemCommand("Sweep a config key", "replay a range of values: compactions, cache breaks and cost per "
                        "value, plotted", screen.action_sweep)
    yield SystemCommand("Reset config to baseline", "undo every edit", screen.action_reset_config)
    yield SystemCommand("Save config to TOML", "write the config file", screen.action_save_config)
    yield SystemCommand("Probe: …", "where a text stops being visible to the model",
                        partial(screen.notify, 'type "Probe: " and a text, e.g. Probe: never edit the fixtures',
                                timeout=6))


class InspectorCommands(Provider):
    """The main screen's palette: jump to a thread, a request or one of the largest blocks; probe a text."""

    @property
    def inspector(self) -> InspectorHost:
        return self.screen  # type: ignore[return-value]

    def _commands(self) -> list[tuple[str, Any, str]]:
        screen = self.inspector
        commands: list[tuple[str, Any, str]] = []
        for info in screen.thread_infos:
            label = f"Thread: {safe_line(info.title or info.id, 70)}"
            commands.append((label, partial(screen.load_thread, info.id),
                             f"{info.messages} messages, {info.requests} requests"))
        request = screen.current_request
        if request is not None:
            for index in largest_block_indexes(request):
                block = request.blocks[index]
                label = f"Block: {block.role} {safe_line(block.message_id or block.kind, 50)}"
                commands.append((label, partial(screen.action_open_block, index),
                                 f"one of the largest blocks of request {request.index + 1} "
                                 f"({block.tokens_sent:,} sent, {block.tokens:,} in full)"))
        return commands

    async def discover(self) -> Hits:
        for label, callback, help_text in self._commands():
            yield DiscoveryHit(Text(label), callback, text=label, help=help_text)

    async def search(self, query: str) -> Hits:
        screen = self.inspector
        jump = re.fullmatch(r"\s*(?:r|req|request|#)?\s*(\d+)\s*", query, flags=re.IGNORECASE)
        numbered = False
        if jump and screen.view is not None:
            number = int(jump.group(1))
            if 1 <= number <= len(screen.view.requests):
                label = f"Request {number}"
                numbered = True
                yield Hit(1.0, Text(label), partial(screen.jump_to_request, number - 1), text=label,
                          help=f"jump to this request (index {number - 1})")
        probe = re.fullmatch(r"\s*probe:\s*(\S.*)", query, flags=re.IGNORECASE | re.DOTALL)
        if probe and screen.view is not None:
            text = probe.group(1).strip()
            label = f"Probe: {safe_line(text, 60)}"
            yield Hit(1.0, Text(label), partial(screen.probe_text, text), text=label,
                      help="mark on the timeline the request where this text stops being visible")
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                # A number is first a request: titles that contain it come after "Request N".
                yield Hit(score / (1 + score) if numbered else score, Text(label), callback, text=label,
                          help=help_text)
