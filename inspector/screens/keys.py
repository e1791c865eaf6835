"""The app's key bindings (the help screen lists them; the panes' own keys are in `screens/help.py`)."""

from __future__ import annotations

from textual.binding import Binding

APP_BINDINGS = [
    Binding("q", "quit", "Quit"),
    Binding("f1,question_mark", "help", "Help"),
    Binding("left,comma", "step(-1)", "Prev req", show=False),
    Binding("right,full_stop", "step(1)", "Next req", show=False),
    Binding("n", "next_compaction", "Next compaction"),
    Binding("p", "prev_compaction", "Prev compaction"),
    Binding("f", "first_failure", "First failure"),
    Binding("F", "next_failure", "Next failure", show=False),
    Binding("1", "show_tab('budget')", "Budget", show=False),
    Binding("2", "show_tab('blocks')", "Blocks", show=False),
    Binding("3", "show_tab('summaries')", "Summaries", show=False),
    Binding("4", "show_tab('config')", "Config", show=False),
    Binding("5", "show_tab('step')", "Since N-1", show=False),
    Binding("t,escape", "focus_timeline", "Timeline", show=False),
    Binding("slash", "focus_filter", "Filter threads", show=False),
    Binding("b", "toggle_threads", "Thread list", show=False),
    Binding("z", "toggle_overview", "Overview", show=False),
    Binding("e", "export_audit", "Export JSON"),
    Binding("l", "toggle_live", "Live", show=False),
    Binding("ctrl+r", "reset_config", "Reset config"),
    Binding("ctrl+o", "save_config", "Save config"),
    Binding("ctrl+s", "screenshot", "Screenshot", show=False),
    Binding("x", "cancel_summaries", "Cancel LLM summaries", show=False),
    Binding("c", "toggle_compactions", "Compactions: recorded / decide", show=False),
]
