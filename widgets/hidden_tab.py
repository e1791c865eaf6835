"""Widgets that a hidden tab does not make the whole screen pay for.

Textual repaints a refreshed widget at the next paint even where it is not displayed (its tab is hidden:
an ancestor has `display: none`): the compositor then finds a widget that is not in its map and throws
the whole map away, and the next paint arranges every widget of the screen again to rebuild it, 10-20 ms
on the main screen (a config edit updates the Budget pane while the Config tab is shown, and the Config
tab's diff panel while the Budget tab is). `QuietWhileHidden` keeps such a refresh to the widget itself:
its content is updated and its caches cleared (what it shows, read or rendered, is the new content), the
screen is not told, and the widget is laid out again when it is shown.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Region
from textual.widget import Widget


def in_hidden_tab(widget: Widget) -> bool:
    """Whether an ancestor of `widget` (or the widget) is not displayed (a hidden tab, a hidden panel)."""
    node: object = widget
    while isinstance(node, Widget):
        if not node.display:
            return True
        node = node.parent
    return False


class QuietWhileHidden:
    """Mixin, before the widget class (`class Pane(QuietWhileHidden, Static)`): a widget whose repaints
    while it is hidden stay its own (see the module's docstring). Not a Widget itself: Textual merges the
    component classes and CSS of the Widget classes of the MRO, which a Widget mixin would cut short."""

    _missed_refresh = False  # a refresh was kept from the screen while hidden: lay out again when shown

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False):
        assert isinstance(self, Widget)
        if repaint and not recompose and self.is_mounted and in_hidden_tab(self):
            self._missed_refresh = True
            self._layout_cache.clear()
            self._styles_cache.clear()
            self._rich_style_cache.clear()
            self.clear_cached_dimensions()
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)  # type: ignore[misc]

    def on_show(self, event: events.Show) -> None:
        if self._missed_refresh:
            self._missed_refresh = False
            self.refresh(layout=True)
