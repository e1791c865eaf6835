"""The help screen: every key binding of the app and its panes, then what the statuses, marks and reason
codes on screen mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from widgets.budget import STATUS_STYLES
from widgets.meanings import MARKS, REASON_MEANINGS, STATUS_MEANINGS, plain_meaning

# (keys, what they do) for bindings that live on widgets rather than on the app.
PANE_KEYS: tuple[tuple[str, str], ...] = (
    ("left / right", "previous / next request (anywhere but a text field)"),
    ("shift+left / shift+right", "10 requests back / forward (timeline focused)"),
    ("home / end", "first / last request (timeline focused)"),
    ("up / down, enter", "move in a table; enter (or a second click) opens the thread under the cursor"),
    ("1 2 3 4 5", "Budget, Blocks (focus the table), Summaries, Config (focus the first field), Since N-1 "
                  "(what changed since the previous request); digits type into a text field"),
    ("s (Blocks)", "sort the blocks by tokens (largest first) or back to thread order"),
    ("click (Budget)", "a block of Largest blocks opens it in the Blocks pane (or ctrl+p, \"Block: …\")"),
    ("escape (config field)", "cancel the edit: the field shows the applied value again"),
    ("tab / shift+tab", "move focus between panes"),
    ("enter (config field)", "apply the edited value and replay"),
)


def key_label(key: str) -> str:
    return (key.replace("question_mark", "?").replace("comma", ",").replace("full_stop", ".")
            .replace("slash", "/").replace("left", "←").replace("right", "→"))


KEY_STYLE = "ci.recorded.strong"


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 100%; height: 90%; border: round $primary; background: $surface; padding: 0 1;
    }
    HelpScreen #help-meanings { margin-top: 1; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("f1", "dismiss", "Close", show=False, id="help.close-f1"),
        Binding("question_mark", "dismiss", "Close", show=False, id="help.close-question-mark"),
        Binding("q", "dismiss", "Close", show=False, id="help.close-q"),
    ]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self.render_table(), id="help-table")
            yield Static(self.render_meanings(), id="help-meanings")

    def render_table(self) -> Table:
        table = Table(title="context-inspector: keys", title_style="bold", expand=True, box=None, padding=(0, 2))
        table.add_column("Key", no_wrap=True)  # each key in the palette's style (a name, resolved by the app)
        table.add_column("Action")
        seen: set[str] = set()
        for binding in self.bindings:
            keys = ", ".join(key_label(k) for k in binding.key.split(","))
            if keys in seen or not binding.description:
                continue
            seen.add(keys)
            table.add_row(Text(keys, style=KEY_STYLE), Text(binding.description))
        table.add_section()
        for keys, what in PANE_KEYS:
            table.add_row(Text(keys, style=KEY_STYLE), Text(what))
        table.add_section()
        table.add_row(Text("ctrl+p", style=KEY_STYLE), Text("command palette: jump to a thread or request, switch profile or "
                                           "strategy, export the selected audit as JSON"))
        return table

    @staticmethod
    def render_meanings() -> Table:
        """Statuses, marks and reason codes: what the panes' words and symbols mean."""
        table = Table(title="What the screen shows", title_style="bold", expand=True, box=None, padding=(0, 2))
        table.add_column("Mark", style="bold", no_wrap=True)
        table.add_column("Meaning")
        table.add_row(Text("Statuses", style="ci.info.strong"), Text("of a block in a request (Blocks, Budget)", style="dim"))
        for status, meaning in STATUS_MEANINGS.items():
            table.add_row(Text(status, style=STATUS_STYLES.get(status, "")), Text(meaning))
        table.add_section()
        table.add_row(Text("Marks", style="ci.info.strong"), Text(""))
        for mark, where, meaning in MARKS:
            table.add_row(Text(mark), Text(f"{where}: {plain_meaning(meaning)}"))
        table.add_section()
        table.add_row(Text("Reasons", style="ci.info.strong"), Text("why a block has its status (Blocks)", style="dim"))
        for code, meaning in REASON_MEANINGS.items():
            table.add_row(Text(code, style="ci.code"), Text(plain_meaning(meaning)))
        return table
