"""The sweep screen (palette: "Sweep a config key"): pick a key and its values, watch the rows
fill in while a worker replays each config, and see a metric plotted against the key with the
thread's own value marked."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Input, Select, Static
from textual.worker import get_current_worker
from textual_plotext import PlotextPlot

from inspector import sweep
from inspector.config import KEY_SPECS, PROFILE_KEYS, Config, ConfigError
from inspector.model import Thread
from widgets.safe import safe_line

COLUMNS = ("value", "compactions", "failures", "prompt tokens", "cache read", "breaks", "cost", "facts lost")


def numeric_keys(profile: str) -> list[str]:
    return [k for k in PROFILE_KEYS.get(profile, ()) if KEY_SPECS[k].type in (int, float)]


class SweepScreen(Screen[None]):
    DEFAULT_CSS = """
    SweepScreen { layout: vertical; }
    SweepScreen #sweep-title { height: 1; padding: 0 1; }
    SweepScreen #sweep-controls { height: 3; }
    SweepScreen #sweep-key { width: 40; }
    SweepScreen #sweep-values { width: 1fr; }
    SweepScreen #sweep-metric { width: 28; }
    SweepScreen #sweep-mode { width: 28; }
    SweepScreen #sweep-status { height: 1; padding: 0 1; }
    SweepScreen #sweep-body { height: 1fr; }
    SweepScreen #sweep-rows { width: 1fr; height: 1fr; }
    SweepScreen #sweep-plot { width: 1fr; height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("ctrl+g", "run", "Run sweep"),
    ]

    def __init__(self, thread: Thread, base: Config, *, compactions: str = "decide") -> None:
        """`compactions`: "decide" (each value decides its compactions, as `sweep` does by default)
        or "recorded"."""
        super().__init__()
        self.thread = thread
        self.base = base
        self.compactions = compactions
        self.rows: list[sweep.SweepRow] = []
        self.values: list[Any] = []
        keys = numeric_keys(base.profile)
        # A compaction key first (what a sweep is mostly for), else the profile's first number.
        self.key = next((k for k in keys if "compact" in k), keys[0])

    def _title_text(self) -> Text:
        title = Text()
        title.append("Sweep ", style="bold")
        title.append(safe_line(self.thread.title or self.thread.id, 60))
        title.append(f"  profile {self.base.profile} · compactions {self.compactions}", style="dim")
        if self.compactions == "recorded":
            title.append("  (the recorded compactions are followed: compaction keys change nothing)", style="dim")
        return title

    def _title(self) -> None:
        self.query_one("#sweep-title", Static).update(self._title_text())

    def compose(self) -> ComposeResult:
        yield Static(self._title_text(), id="sweep-title")
        with Horizontal(id="sweep-controls"):
            yield Select([(k, k) for k in numeric_keys(self.base.profile)], value=self.key, allow_blank=False,
                         id="sweep-key")
            yield Input(self._default_text(self.key), id="sweep-values", placeholder="values, comma-separated")
            yield Select([(label, name) for name, label in sweep.METRICS.items()], value="cost", allow_blank=False,
                         id="sweep-metric")
            yield Select([("decide compactions", "decide"), ("recorded compactions", "recorded")],
                         value=self.compactions, allow_blank=False, id="sweep-mode")
            yield Button("Run", id="sweep-run", variant="primary")
        yield Static("", id="sweep-status")
        with Horizontal(id="sweep-body"):
            with Vertical():
                yield DataTable(id="sweep-rows", cursor_type="row", zebra_stripes=True)
            yield PlotextPlot(id="sweep-plot")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.action_run()

    def _default_text(self, key: str) -> str:
        return ", ".join(str(v) for v in sweep.default_values(key, self.base[key]))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "sweep-key" and event.value != self.key:
            self.key = str(event.value)
            self.query_one("#sweep-values", Input).value = self._default_text(self.key)
        elif event.select.id == "sweep-metric":
            self._plot()
        elif event.select.id == "sweep-mode" and event.value != self.compactions:
            self.compactions = str(event.value)
            self._title()
            self.action_run()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_run()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sweep-run":
            self.action_run()

    def action_run(self) -> None:
        text = self.query_one("#sweep-values", Input).value
        try:
            key, values = sweep.parse_key(f"{self.key}={text}")
            sweep.combinations([(key, values)])  # the same cap as the CLI's, said under the field
        except ConfigError as exc:
            self._status(Text(safe_line(str(exc), 200), style="#ff5f5f"))
            return
        self.values = values
        self.rows = []
        self.query_one(DataTable).clear()
        self._status(Text(f"replaying {len(values)} configs…", style="dim"))
        self._plot()
        self._sweep(key, values)

    @work(thread=True, exclusive=True, group="sweep")
    def _sweep(self, key: str, values: list[Any]) -> None:
        worker = get_current_worker()
        for value in values:
            if worker.is_cancelled:
                return
            try:
                rows = sweep.sweep_thread(self.thread, self.base, [{key: value}], compactions=self.compactions)
            except (ConfigError, ValueError, RuntimeError) as exc:
                self.app.call_from_thread(self._status, Text(safe_line(f"{key}={value}: {exc}", 200),
                                                             style="#ff5f5f"))
                return
            if worker.is_cancelled:
                return
            self.app.call_from_thread(self._add_row, rows[0])
        self.app.call_from_thread(self._status, Text(f"{len(values)} configs replayed; * the thread's own value",
                                                     style="dim"))

    def _status(self, text: Text) -> None:
        self.query_one("#sweep-status", Static).update(text)

    def _add_row(self, row: sweep.SweepRow) -> None:
        self.rows.append(row)
        cells = next(sweep.iter_table([row]))
        value, rest, mark = cells[0], cells[1:-1], cells[-1]
        style = "bold #ffd75f" if mark else ""
        self.query_one(DataTable).add_row(Text(value + (" *" if mark else ""), style=style),
                                          *(Text(c, style=style) for c in rest))
        self._status(Text(f"{len(self.rows)} of {len(self.values)} configs replayed…", style="dim"))
        self._plot()

    def _plot(self) -> None:
        widget = self.query_one(PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        name = str(self.query_one("#sweep-metric", Select).value)
        points = [(row.config[self.key], metric) for row in self.rows
                  if (metric := sweep.metric(row, name)) is not None]
        plt.title(f"{sweep.METRICS.get(name, name)} vs {self.key}")
        plt.xlabel(self.key)
        if points:
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="dot")
        own = self.base[self.key]
        plt.vline(own, "red")  # the thread's own value
        plt.text(" baseline", own, points[0][1] if points else 0, color="red", alignment="left")
        widget.refresh()
