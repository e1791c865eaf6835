"""Every key of the active profile, editable: Inputs validated with `config.coerce`, Selects for choices."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from inspector.config import KEY_SPECS, PROFILE_KEYS, PROFILES, Config, ConfigError, coerce
from widgets.ordered_input import OrderedInput
from widgets.safe import safe_line

# Keys offered as a Select, with their choices (the rest are free Inputs validated on the fly).
SELECT_KEYS = tuple(k for k, spec in KEY_SPECS.items() if spec.choices)


def widget_id(key: str) -> str:
    return "cfg-" + key.replace(".", "-").replace("_", "-")


def error_id(key: str) -> str:
    return widget_id(key) + "-error"


def format_value(value: Any) -> str:
    return str(value)


LABEL_WIDTH = 29  # the label column's text width (30 with its padding)


def key_lines(key: str, width: int = LABEL_WIDTH) -> str:
    """The key as the label shows it: on one line where it fits, else broken after its dots (never
    inside a word: `claude_code.` / `autocompact_pct_override`)."""
    if len(key) <= width or "." not in key:
        return key
    lines: list[str] = []
    line = ""
    for part in key.split("."):
        piece = part if not line else "." + part
        if line and len(line) + len(piece) > width:
            lines.append(line + ".")
            line = part
        else:
            line += piece
    lines.append(line)
    return "\n".join(lines)


class ConfigForm(VerticalScroll):
    """The editable form. Posts `Edited` for a valid value and `ProfileChanged` for a profile switch.

    Enter or leaving a field applies a valid value (an invalid one only shows its error); Escape cancels
    the edit (the field shows the applied value again) and then does what Escape does outside the form."""

    BINDINGS = [Binding("escape", "cancel_edit", "Cancel edit", show=False, id="config.cancel-edit")]

    DEFAULT_CSS = """
    ConfigForm { height: 1fr; padding: 0 1; }
    ConfigForm .cfg-row { height: auto; margin-bottom: 1; }
    ConfigForm .cfg-line { height: auto; }
    ConfigForm .cfg-label { width: 30; padding-right: 1; }  /* a long key wraps clear of its value */
    ConfigForm .cfg-field { width: 1fr; max-width: 30; }
    ConfigForm .cfg-help { color: $text-muted; padding-left: 30; height: auto; }
    ConfigForm .cfg-error { color: $error; padding-left: 30; height: auto; display: none; }
    ConfigForm .cfg-error.-shown { display: block; }
    ConfigForm .cfg-changed .cfg-label { color: $warning; text-style: bold; }
    """

    class Edited(Message):
        def __init__(self, key: str, value: Any) -> None:
            super().__init__()
            self.key = key
            self.value = value

    class ProfileChanged(Message):
        def __init__(self, profile: str) -> None:
            super().__init__()
            self.profile = profile

    def __init__(self, config: Config, *, id: str | None = None, deferred: bool = False) -> None:
        """`deferred`: composed empty; its rows are made by `build` (the main screen builds them once
        the first replay is painted, or when the Config tab is shown first: about half of the app's
        widgets, which would otherwise be composed and styled beside the first replay)."""
        super().__init__(id=id)
        self.config = config
        self.baseline = config
        self.errors: dict[str, str] = {}
        self.built = not deferred
        self._building = False
        self._built = asyncio.Event()
        self._composing = 0  # builds and recomposes under way (`composing`)
        self._composed = asyncio.Event()
        self._composed.set()

    def compose(self) -> ComposeResult:
        if self.built or self._building:
            yield from self._rows(self.config)

    async def build(self) -> None:
        """Make a deferred form's rows (once), showing the config last loaded."""
        if self.built:
            return
        if self._building:  # another caller builds it: wait for the rows
            await self._built.wait()
            return
        self._building = True
        try:
            while True:
                composed = self.config
                await self._recompose()
                if self.config.profile == composed.profile:
                    break  # else loaded during the build with another key set: compose that
        finally:
            self._building = False
        self.built = True
        self._changed_shown = {}
        if self.config is not composed:  # loaded during the build: show its values
            self._show_values(self.config)
        self.mark_changed()
        self._built.set()

    @property
    def composing(self) -> bool:
        """Whether its rows are being made (a build, a profile's other keys): an app that tears down meanwhile
        has Textual's Select mount without its parts (`NoMatches` from its `_on_mount`): the app's exit
        waits for `composed()` first."""
        return self._composing > 0

    async def composed(self) -> None:
        await self._composed.wait()

    async def _recompose(self) -> None:
        self._composing += 1
        self._composed.clear()
        try:
            await self.recompose()
        finally:
            self._composing -= 1
            if not self._composing:
                self._composed.set()

    def _rows(self, config: Config) -> ComposeResult:
        with Horizontal(classes="cfg-line", id="cfg-row-profile"):
            yield Label("profile", classes="cfg-label")
            yield Select(
                [(p, p) for p in PROFILES], value=config.profile, allow_blank=False, id="cfg-profile",
                classes="cfg-field", compact=True,
            )
        yield Static(f"Pipeline to replay: {', '.join(PROFILES)}", classes="cfg-help", markup=False)
        for key in PROFILE_KEYS[config.profile]:
            spec = KEY_SPECS[key]
            with Vertical(classes="cfg-row", id=widget_id(key) + "-row"):
                with Horizontal(classes="cfg-line"):
                    yield Label(key_lines(key), classes="cfg-label", markup=False)
                    if spec.choices:
                        yield Select(
                            [(c, c) for c in spec.choices], value=config[key], allow_blank=False,
                            id=widget_id(key), classes="cfg-field", compact=True,
                        )
                    else:
                        yield OrderedInput(format_value(config[key]), id=widget_id(key), classes="cfg-field", compact=True)
                yield Static(spec.help, classes="cfg-help", markup=False)
                yield Static("", classes="cfg-error", id=error_id(key), markup=False)

    async def load(self, config: Config, baseline: Config) -> None:
        """Show `config`; rebuild the rows if the profile (and so the key set) changed."""
        rebuild = config.profile != self.config.profile or not self.is_mounted
        self.config = config
        self.baseline = baseline
        self.errors.clear()
        if not self.built:
            return  # `build` shows it
        if rebuild:
            self._changed_shown = {}
            await self._recompose()
        else:
            self._show_values(config)
        self.mark_changed()

    def _show_values(self, config: Config) -> None:
        with self.prevent(Input.Changed, Select.Changed):
            for key in PROFILE_KEYS[config.profile]:
                widget = self.query_one("#" + widget_id(key))
                if isinstance(widget, Select):
                    widget.value = config[key]
                elif isinstance(widget, Input) and widget.value != format_value(config[key]):
                    widget.value = format_value(config[key])
                error = self.query_one("#" + error_id(key), Static)
                if error.has_class("-shown"):  # a hidden error is empty: leave it (no layout pass)
                    error.update("")
                    error.remove_class("-shown")

    def mark_changed(self) -> None:
        """Highlight the rows whose value differs from the baseline (touching only rows that flip)."""
        if not self.built:
            return
        shown = getattr(self, "_changed_shown", {})
        for key in PROFILE_KEYS[self.config.profile]:
            changed = self.config.values.get(key) != self.baseline.values.get(key)
            if shown.get(key) is changed:
                continue
            for row in self.query("#" + widget_id(key) + "-row"):
                row.set_class(changed, "cfg-changed")
            shown[key] = changed
        self._changed_shown = shown

    def _key_of(self, widget_id_: str | None) -> str | None:
        if not widget_id_:
            return None
        for key in PROFILE_KEYS[self.config.profile]:
            if widget_id(key) == widget_id_:
                return key
        return None

    def has_field(self, key: str) -> bool:
        return key in PROFILE_KEYS[self.config.profile] and self.is_mounted and self.built

    def show_error(self, key: str, message: str) -> None:
        """A one-line message under the field of `key` (cleared by the next load or valid value)."""
        error = self.query_one("#" + error_id(key), Static)
        self.errors[key] = message
        error.update(Text(safe_line(message, 300)))
        error.add_class("-shown")

    def validate(self, key: str, raw: str) -> Any | None:
        """The coerced value, or None after showing the one-line error under the field."""
        error = self.query_one("#" + error_id(key), Static)
        try:
            value = coerce(key, raw)
        except ConfigError as exc:
            self.errors[key] = str(exc)
            error.update(Text(str(exc)))
            error.add_class("-shown")
            return None
        self.errors.pop(key, None)
        error.update("")
        error.remove_class("-shown")
        return value

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        key = self._key_of(event.input.id)
        if key is not None:
            self.validate(key, event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply_input(event.input)

    def on_input_blurred(self, event: Input.Blurred) -> None:
        event.stop()
        self._apply_input(event.input)

    def action_cancel_edit(self) -> None:
        widget = self.app.focused
        key = self._key_of(widget.id) if isinstance(widget, Input) else None
        if key is not None and isinstance(widget, Input):
            widget.value = format_value(self.config[key])
            self.validate(key, widget.value)
        raise SkipAction()  # let the app's escape (focus the timeline) run too

    def _apply_input(self, widget: Input) -> None:
        key = self._key_of(widget.id)
        if key is None:
            return
        value = self.validate(key, widget.value)
        if value is not None and value != self.config[key]:
            self.post_message(self.Edited(key, value))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL:
            return
        if event.select.id == "cfg-profile":
            if event.value != self.config.profile:
                self.post_message(self.ProfileChanged(str(event.value)))
            return
        key = self._key_of(event.select.id)
        if key is not None and event.value != self.config[key]:
            self.post_message(self.Edited(key, event.value))
