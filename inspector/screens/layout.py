"""The main screen's layout: thread list left; status line, timeline and the five tabs right."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, TabbedContent, TabPane

from inspector.config import Config
from inspector.screens.status import DiffPanel, StatusLine, TimelineLabel
from widgets.blocks import BlocksView
from widgets.budget import BudgetView
from widgets.config_form import ConfigForm
from widgets.since_previous import RequestStepView
from widgets.summaries import SummariesView
from widgets.threads import ThreadList
from widgets.timeline import TimelineChart


def main_layout() -> ComposeResult:
    """The widgets under their ids (the main screen, its controllers and the tests find them by id)."""
    with Horizontal(id="body"):
        with Vertical(id="left"):
            yield ThreadList(id="threads")
        with Vertical(id="main"):
            yield StatusLine(Text("Loading…", style="dim"), id="status", markup=False)
            yield TimelineLabel("", id="timeline-label", markup=False)
            yield TimelineChart(id="timeline")
            with TabbedContent(id="tabs", initial="budget"):
                with TabPane("Budget", id="budget"):
                    yield BudgetView(id="budget-view")
                with TabPane("Blocks", id="blocks"):
                    yield BlocksView(id="blocks-view")
                with TabPane("Summaries", id="summaries"):
                    yield SummariesView(id="summaries-view")
                with TabPane("Config", id="config"), Horizontal(id="config-body"):
                    yield ConfigForm(Config(), id="config-form", deferred=True)  # built by the main screen
                    with Vertical(id="diff-panel"):
                        yield Static(Text("Diff against the baseline", style="bold"), markup=False)
                        yield DiffPanel(Text("No edits: this is the baseline replay.", style="dim"),
                                        id="diff", markup=False)
                with TabPane("Since N-1", id="step"):
                    yield RequestStepView(id="step-view")
