"""The key bindings of the app (global: quit, help) and of its main screen (the help screen lists
both; the panes' own keys are in `screens/help.py`). Every binding has an id, which a `[keys]` table
in the config file rebinds (`inspector.screens.settings`)."""

from __future__ import annotations

from textual.binding import Binding

APP_BINDINGS = [
    Binding("q", "quit", "Quit", id="quit"),
    Binding("f1,question_mark", "help", "Help", id="help"),
]

MAIN_BINDINGS = [
    Binding("left,comma", "step(-1)", "Prev req", show=False, id="previous-request"),
    Binding("right,full_stop", "step(1)", "Next req", show=False, id="next-request"),
    Binding("n", "next_compaction", "Next compaction", id="next-compaction"),
    Binding("p", "prev_compaction", "Prev compaction", id="previous-compaction"),
    Binding("f", "first_failure", "First failure", id="first-failure"),
    Binding("F", "next_failure", "Next failure", show=False, id="next-failure"),
    Binding("1", "show_tab('budget')", "Budget", show=False, id="tab-budget"),
    Binding("2", "show_tab('blocks')", "Blocks", show=False, id="tab-blocks"),
    Binding("3", "show_tab('summaries')", "Summaries", show=False, id="tab-summaries"),
    Binding("4", "show_tab('config')", "Config", show=False, id="tab-config"),
    Binding("5", "show_tab('step')", "Since N-1", show=False, id="tab-since-previous"),
    Binding("t,escape", "focus_timeline", "Timeline", show=False, id="focus-timeline"),
    Binding("slash", "focus_filter", "Filter threads", show=False, id="filter-threads"),
    Binding("b", "toggle_threads", "Thread list", show=False, id="toggle-thread-list"),
    Binding("z", "toggle_overview", "Overview", show=False, id="toggle-overview"),
    Binding("e", "export_audit", "Export JSON", id="export-audit"),
    Binding("l", "toggle_live", "Live", show=False, id="toggle-live"),
    Binding("ctrl+r", "reset_config", "Reset config", id="reset-config"),
    Binding("ctrl+o", "save_config", "Save config", id="save-config"),
    Binding("ctrl+s", "screenshot", "Screenshot", show=False, id="screenshot"),
    Binding("x", "cancel_summaries", "Cancel LLM summaries", show=False, id="cancel-summaries"),
    Binding("c", "toggle_compactions", "Compactions: recorded / decide", show=False, id="toggle-compactions"),
]


def binding_ids() -> tuple[str, ...]:
    """Every binding id a `[keys]` table may rebind: the app's, its screens' and its widgets'."""
    from inspector.screens.help import HelpScreen
    from inspector.screens.sweep import SweepScreen
    from widgets.blocks import BlocksView
    from widgets.config_form import ConfigForm
    from widgets.linetable import LineTable
    from widgets.threads import ThreadList
    from widgets.timeline import TimelineChart

    owners = (HelpScreen, SweepScreen, BlocksView, ConfigForm, LineTable, ThreadList, TimelineChart)
    bindings = [*APP_BINDINGS, *MAIN_BINDINGS, *(b for owner in owners for b in owner.BINDINGS if isinstance(b, Binding))]
    return tuple(dict.fromkeys(b.id for b in bindings if b.id))
