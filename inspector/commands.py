"""The command palette (ctrl+p): jump to a thread or request, switch profile or strategy, export, reset, save."""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from inspector.config import PROFILES, STRATEGIES, only_reader
from widgets.budget import largest_block_indexes
from widgets.safe import safe_line

if TYPE_CHECKING:
    from inspector.controllers.host import InspectorHost


class InspectorCommands(Provider):
    """Command palette: jump to thread / request, switch profile or strategy, export the audit."""

    @property
    def inspector(self) -> InspectorHost:
        return self.app  # type: ignore[return-value]

    def _commands(self) -> list[tuple[str, Any, str]]:
        app = self.inspector
        commands: list[tuple[str, Any, str]] = []
        for info in app.thread_infos:
            label = f"Thread: {safe_line(info.title or info.id, 70)}"
            commands.append((label, partial(app.load_thread, info.id), f"{info.messages} messages, {info.requests} requests"))
        for profile in PROFILES:
            commands.append((f"Profile: {profile}", partial(app.set_profile, profile), "replay under this profile"))
        strategist = only_reader("context.strategy")
        for strategy in STRATEGIES:
            commands.append(
                (f"Strategy: {strategy}", partial(app.set_config_value, "context.strategy", strategy),
                 f"{strategist} strategy (switches to the {strategist} profile)")
            )
        request = app.current_request
        if request is not None:
            for index in largest_block_indexes(request):
                block = request.blocks[index]
                label = f"Block: {block.role} {safe_line(block.message_id or block.kind, 50)}"
                commands.append((label, partial(app.action_open_block, index),
                                 f"one of the largest blocks of request {request.index + 1} "
                                 f"({block.tokens_sent:,} sent, {block.tokens:,} in full)"))
        commands.append(("Export selected audit as JSON", app.action_export_audit, "write a file in the current directory"))
        commands.append(("Jump to first failure", app.action_first_failure, "first failed request"))
        commands.append(("Jump to next compaction", app.action_next_compaction, "next request with a compaction"))
        commands.append(("Sweep a config key", app.action_sweep,
                         "replay a range of values: compactions, cache breaks and cost per value, plotted"))
        commands.append(("Reset config to baseline", app.action_reset_config, "undo every edit"))
        commands.append(("Save config to TOML", app.action_save_config, "write the config file"))
        commands.append(("Probe: …", partial(app.notify, 'type "Probe: " and a text, e.g. Probe: never edit the '
                                                     'fixtures', timeout=6),
                         "where a text stops being visible to the model"))
        return commands

    async def discover(self) -> Hits:
        for label, callback, help_text in self._commands():
            yield DiscoveryHit(Text(label), callback, text=label, help=help_text)

    async def search(self, query: str) -> Hits:
        app = self.inspector
        jump = re.fullmatch(r"\s*(?:r|req|request|#)?\s*(\d+)\s*", query, flags=re.IGNORECASE)
        numbered = False
        if jump and app.view is not None:
            number = int(jump.group(1))
            if 1 <= number <= len(app.view.requests):
                label = f"Request {number}"
                numbered = True
                yield Hit(1.0, Text(label), partial(app.jump_to_request, number - 1), text=label,
                          help=f"jump to this request (index {number - 1})")
        probe = re.fullmatch(r"\s*probe:\s*(\S.*)", query, flags=re.IGNORECASE | re.DOTALL)
        if probe and app.view is not None:
            text = probe.group(1).strip()
            label = f"Probe: {safe_line(text, 60)}"
            yield Hit(1.0, Text(label), partial(app.probe_text, text), text=label,
                      help="mark on the timeline the request where this text stops being visible")
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                # A number is first a request: titles that contain it come after "Request N".
                yield Hit(score / (1 + score) if numbered else score, Text(label), callback, text=label,
                          help=help_text)
