"""Colours by what they mean, from the theme.

The panes build Rich `Text` with style names such as `"ci.excluded"` or `"ci.error.strong"`, never a
colour. Each name is a component class (`ci--excluded`, `ci--error-strong`) whose CSS reads the theme's
variables (`$text-error`, `$text-success`, ...), declared on the App (`COMPONENT_CLASSES = PALETTE_CLASSES`,
`DEFAULT_CSS = PALETTE_CSS`; a user's CSS may restyle any of them). Whenever the App's styles are
applied (at start and on every theme change) `Palette.install` reads the component styles
(`get_component_styles(...).partial_rich_style`) into a Rich theme on the app's console, through
which every pane's text is styled, and `redraw` styles what is on screen again.

The Line-API widgets (`TimelineChart`, `LineTable`) draw styles of their own component classes.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.theme import Theme
from textual.widgets import Static

# role -> its CSS declarations (theme variables only). Each role also has a ".strong" (bold) form.
ROLES: dict[str, str] = {
    # what a block's status is (Blocks, Budget, the diff, the help screen)
    "kept": "color: $text-success;",
    "pruned": "color: $text-warning;",
    "truncated": "color: $warning;",
    "excluded": "color: $text-error;",
    "summarized": "color: $text-secondary;",
    # what a figure says
    "error": "color: $text-error;",
    "warning": "color: $text-warning;",
    "caution": "color: $warning;",
    "success": "color: $text-success;",
    "recorded": "color: $text-accent;",  # recorded figures, money, protected marks
    "compaction": "color: $text-secondary;",
    "info": "color: $text-primary;",
    "code": "color: $foreground;",
    "muted": "text-style: dim;",
    "note": "color: $text-warning; text-style: italic;",
    "found": "color: $text-warning; text-style: bold reverse;",  # a lost fact marked in a block's text
    # the parts of the Budget pane's window bar
    "part-system": "color: $secondary-lighten-2;",
    "part-tools": "color: $primary-lighten-2;",
    "part-unaccounted": "color: $accent-muted;",
    "part-tokenizer": "color: $primary-darken-2;",
    "part-summaries": "color: $text-secondary;",
    "part-history": "color: $primary;",
    "part-free": "color: $surface-lighten-3;",
    "part-reserve": "color: $warning-muted;",
    "part-saved": "color: $text-warning;",
}
PREFIX = "ci"


def _forms() -> dict[str, tuple[str, str]]:
    """style name -> (component class, CSS declarations), each role plain and strong."""
    forms = {}
    for role, rule in ROLES.items():
        forms[f"{PREFIX}.{role}"] = (f"{PREFIX}--{role}", rule)
        bold = rule.replace("text-style: ", "text-style: bold ") if "text-style:" in rule else f"{rule} text-style: bold;"
        forms[f"{PREFIX}.{role}.strong"] = (f"{PREFIX}--{role}-strong", bold)
    return forms


FORMS = _forms()
STYLE_NAMES = frozenset(FORMS)
PALETTE_CLASSES = frozenset(component for component, _rule in FORMS.values())
PALETTE_CSS = "\n".join(f".{component} {{ {rule} }}" for component, rule in FORMS.values())


def ensure_names(console: Any) -> None:
    """Make every style name resolve on `console` (plainly, until a `Palette` installs the theme's): the
    panes then work in any app, one that declares no palette too (textual raises on an unknown name)."""
    if not getattr(console, "_palette_names", False):
        console.push_theme(Theme({name: Style() for name in STYLE_NAMES}, inherit=True))
        console._palette_names = True


class Palette:
    """The Rich theme of the style names, installed on the console of the node that declares them."""

    generation = 0
    """Bumped at every install: renders cached by `RenderedOnce` are keyed by it."""

    def __init__(self, console: Any) -> None:
        """Every name resolves from the start (plain until the first `install`): textual turns a Rich text
        into styled content when a widget is updated, which may come first."""
        self.installed: dict[str, Style] = {}
        ensure_names(console)

    def install(self, node: Any) -> bool:
        """Read `node`'s component styles (an App declaring `PALETTE_CLASSES`) into its console's theme;
        whether they changed (what was drawn with the old ones is then to be drawn again)."""
        styles = {name: node.get_component_styles(component).partial_rich_style
                  for name, (component, _rule) in FORMS.items()}
        if styles == self.installed:
            return False
        console = node.app.console
        ensure_names(console)
        console.pop_theme()
        console.push_theme(Theme(styles, inherit=True))
        self.installed = styles
        Palette.generation += 1
        return True


def redraw(app: Any) -> None:
    """Draw every widget of `app` again after `Palette.install` changed the styles: a `Static` turns its
    Rich text into styled content when it is updated, so each is updated with what it shows."""
    for screen in app.screen_stack:
        for widget in screen.walk_children(with_self=True):
            # a Tab has an update of its own; a Static that only changes `update`'s default says so
            if isinstance(widget, Static) and (type(widget).update is Static.update
                                               or getattr(widget, "UPDATES_AS_STATIC", False)):
                widget.update(widget.content, layout=False)
            else:
                widget.refresh()
