"""Textual's Footer, rebuilt only when what it shows changes.

Textual's `Footer` recomposes (every key widget made, mounted and styled again) each time the screen
publishes `bindings_updated_signal`: on every focus change, even where the keys it shows stay the same
(an app start on the demo thread published it five times: five footers built, the last four alike). `KeyFooter` compares what it would show (each shown binding's
key, key display, description, action, enabled state, tooltip and group; the palette's key) with what it
shows and recomposes only on a difference, which is what a recompose would have drawn anyway.

Each key bound to the footer's `compact` is also made with its value already set: Textual's keys start
compact and the data binding then takes the footer's value, two class changes, each a CSS pass over the
key. The palette's key is bound to nothing and stays compact, as in Textual. Quit and Help come first: at 80
columns the keys listed after the focused widget's were cut off.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeyFooter"]

FIRST_ACTIONS = frozenset({"quit", "help"})  # shown first, whatever the focused widget's own keys


class KeyFooter(Footer):
    """A Footer that recomposes only when the keys it shows change (see the module's docstring)."""

    _shown: object = None

    def _what_it_shows(self) -> object:
        """Everything `Footer.compose` reads, as one comparable value."""
        if not self._bindings_ready:
            return None
        app = self.app
        keys = tuple(
            (binding, app.get_key_display(binding), enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        palette = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            entry = self.screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
            if entry is not None:
                _, binding, enabled, tooltip = entry
                palette = (binding, app.get_key_display(binding), enabled, tooltip)
        return keys, palette, self.combine_groups

    def compose(self) -> ComposeResult:
        self._shown = self._what_it_shows()
        keys = list(super().compose())
        for widget in keys:
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):  # bound to ours
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
        if all(isinstance(widget, FooterKey) for widget in keys):  # no group of keys: their order is free
            # the app's own keys (quit, help) first: Textual lists the focused widget's keys first and the
            # app's last, where an 80-column terminal cuts them off
            keys.sort(key=lambda widget: widget.action not in FIRST_ACTIONS)
        yield from keys

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._what_it_shows() != self._shown:
            await self.recompose()
