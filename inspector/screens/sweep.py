"""The sweep screen (palette: "Sweep a config key"): pick a key and its values, watch the rows
fill in while a worker replays each config, and see a metric plotted against the key with the
thread's own value marked.

Laid out for 80 columns up: the controls on two lines (the key and its values, then the metric,
the mode and Run), the table over its full width (short column names under 110 columns), the
plot under it. An unset value (`0` of a percentage override) is plotted where it behaves (100),
or apart from the line; the plot's tooltip lists every row's figures."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Select, Static
from textual.worker import get_current_worker
from textual_plotext import PlotextPlot

from inspector import sweep
from inspector.config import KEY_SPECS, PROFILE_KEYS, Config, ConfigError
from inspector.fleet.progress import Progress, duration
from inspector.model import Thread
from widgets.footer import KeyFooter
from widgets.ordered_input import OrderedInput
from widgets.safe import safe_line
from widgets.timeline import compact_number

COLUMNS = ("value", "compactions", "back-to-back", "failures", "prompt tokens", "cache read", "breaks", "cost",
           "summarization", "facts lost")
SHORT_COLUMNS = ("value", "comp", "b2b", "fail", "prompt", "read", "brk", "cost", "summ.", "lost")
WIDE = 110  # screen width from which the table's columns have their whole names
SHORT_NOTE = "b2b back-to-back · brk cache breaks · summ. summarization calls (in cost)"
KEY_WIDTH = 38  # characters of a key the select shows before it abbreviates the section


def numeric_keys(profile: str) -> list[str]:
    return [k for k in PROFILE_KEYS.get(profile, ()) if KEY_SPECS[k].type in (int, float)]


def key_label(key: str, width: int = KEY_WIDTH) -> str:
    """The key as the select shows it on one line: whole where it fits, else its section abbreviated to
    its initials at the dot (`cc.autocompact_pct_override`), never cut inside a word."""
    if len(key) <= width or "." not in key:
        return key
    section, _, name = key.rpartition(".")
    short = "".join(part[:1] for part in section.replace(".", "_").split("_") if part)
    return f"{short}.{name}"


def _tick(value: float, metric: str) -> str:
    """A y-axis label, with a space before the axis."""
    if metric in ("cost", "summarization_cost"):
        return (f"${value:,.2f}" if value < 100 else f"${compact_number(value)}") + " "
    if metric == "cache_read_share":
        return f"{value:.0%} "
    return f"{compact_number(value)} "


def _pace(progress: Progress) -> str:
    """`1.4 configs/s, 6s left` (the rate and the time left of the sweep so far)."""
    rate = progress.rate()
    return f"{'-' if rate is None else f'{rate:,.1f}'} configs/s, {duration(progress.left())} left"


class SweepScreen(Screen[None]):
    DEFAULT_CSS = """
    SweepScreen { layout: vertical; }
    SweepScreen #sweep-title { height: 1; padding: 0 1; }
    SweepScreen .sweep-controls { height: 1; margin: 0 1; }
    SweepScreen #sweep-key { width: 44; }
    SweepScreen #sweep-values { width: 1fr; min-width: 20; margin-left: 1; }
    SweepScreen #sweep-metric { width: 28; }
    SweepScreen #sweep-mode { width: 26; margin-left: 1; }
    SweepScreen #sweep-run { min-width: 7; width: 9; height: 1; border: none; margin-left: 1; }
    SweepScreen #sweep-status { height: auto; max-height: 4; padding: 0 1; }
    SweepScreen #sweep-rows { height: auto; max-height: 40%; }
    SweepScreen #sweep-plot { height: 1fr; min-height: 8; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="sweep.close"),
        Binding("ctrl+g", "run", "Run sweep", id="sweep.run"),
        # priority: over the values field's own ctrl+x (cut); said in the status line while it runs
        Binding("ctrl+x", "cancel", "Cancel sweep", show=False, priority=True, id="sweep.cancel"),
    ]

    class RowReplayed(Message, bubble=False):
        """The sweep's worker replayed one value (`progress`: the run it belongs to)."""

        def __init__(self, row: sweep.SweepRow, progress: Progress) -> None:
            super().__init__()
            self.row, self.progress = row, progress

    class SweepFailed(Message, bubble=False):
        """A value could not be replayed: the sweep stops there."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class SweepDone(Message, bubble=False):
        """Every value of the run `progress` was replayed."""

        def __init__(self, progress: Progress) -> None:
            super().__init__()
            self.progress = progress

    def __init__(self, thread: Thread, base: Config, *, compactions: str = "decide") -> None:
        """`compactions`: "decide" (each value decides its compactions, as `sweep` does by default)
        or "recorded"."""
        super().__init__()
        self.thread = thread
        self.base = base
        self.compactions = compactions
        self.rows: list[sweep.SweepRow] = []
        self.values: list[Any] = []
        self.progress: Progress | None = None  # the running sweep's (None when none runs)
        self.wide: bool | None = None
        keys = numeric_keys(base.profile)
        # A compaction key first (what a sweep is mostly for), else the profile's first number.
        self.key = next((k for k in keys if "compact" in k), keys[0])

    def _title_text(self) -> Text:
        title = Text(no_wrap=True, overflow="ellipsis")
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
        with Horizontal(classes="sweep-controls"):
            yield Select([(key_label(k), k) for k in numeric_keys(self.base.profile)], value=self.key,
                         allow_blank=False, id="sweep-key", compact=True)
            yield OrderedInput(self._default_text(self.key), id="sweep-values", placeholder="values, comma-separated",
                        compact=True)
        with Horizontal(classes="sweep-controls"):
            yield Select([(label, name) for name, label in sweep.METRICS.items()], value="cost", allow_blank=False,
                         id="sweep-metric", compact=True)
            yield Select([("decide compactions", "decide"), ("recorded compactions", "recorded")],
                         value=self.compactions, allow_blank=False, id="sweep-mode", compact=True)
            yield Button("Run", id="sweep-run", variant="primary", compact=True)
        yield Static("", id="sweep-status")
        yield DataTable(id="sweep-rows", cursor_type="row", zebra_stripes=True)
        yield PlotextPlot(id="sweep-plot")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._columns()
        self.action_run()

    def on_resize(self) -> None:
        self._columns()

    def _columns(self) -> None:
        """Whole column names from `WIDE` columns, short ones (said in the status line) under it."""
        wide = self.size.width >= WIDE if self.size.width else True
        if wide == self.wide:
            return
        self.wide = wide
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*(COLUMNS if wide else SHORT_COLUMNS))
        for row in self.rows:
            self._table_row(row)

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
            self._status(Text(safe_line(str(exc), 200), style="ci.error"))
            return
        self.values = values
        self.rows = []
        self.query_one(DataTable).clear()
        self.progress = progress = Progress(len(values), "configs")
        self._status(Text(f"replaying {len(values)} configs… (ctrl+x cancels)", style="dim"))
        self._plot()
        self._sweep(key, values, progress)

    def action_cancel(self) -> None:
        """Stop the running sweep: the rows so far stay, the value being replayed is dropped."""
        if self.progress is None:
            return
        self.workers.cancel_group(self, "sweep")
        done, total = len(self.rows), len(self.values)
        self.progress = None
        self._status(Text(f"cancelled after {done} of {total} configs; * the thread's own value", style="dim"))

    @work(thread=True, exclusive=True, group="sweep")
    def _sweep(self, key: str, values: list[Any], progress: Progress) -> None:
        """Each value's row to the screen as a message (`RowReplayed`), shown as long as `progress` is
        still the screen's (a new run or a cancel replaces it: a row of a stale run is never shown)."""
        worker = get_current_worker()
        for value in values:
            if worker.is_cancelled:
                return
            try:
                rows = sweep.sweep_thread(self.thread, self.base, [{key: value}], compactions=self.compactions)
            except (ConfigError, ValueError, RuntimeError) as exc:
                self.post_message(self.SweepFailed(safe_line(f"{key}={value}: {exc}", 200)))
                return
            if worker.is_cancelled:
                return
            self.post_message(self.RowReplayed(rows[0], progress))
        if not worker.is_cancelled:
            self.post_message(self.SweepDone(progress))

    def on_sweep_screen_sweep_failed(self, message: SweepFailed) -> None:
        self._status(Text(message.text, style="ci.error"))

    def on_sweep_screen_sweep_done(self, message: SweepDone) -> None:
        if message.progress is not self.progress:
            return
        self.progress = None
        text = Text(f"{len(self.values)} configs replayed; * the thread's own value", style="dim")
        for note in sweep.footnotes(self.rows):
            text.append(f"\n{note}", style="dim")
        if not self.wide:
            text.append(f"\n{SHORT_NOTE}", style="dim")
        self._status(text)

    def _status(self, text: Text) -> None:
        self.query_one("#sweep-status", Static).update(text)

    def _table_row(self, row: sweep.SweepRow) -> None:
        cells = next(sweep.iter_table([row]))
        value, rest, mark = cells[0], cells[1:-1], cells[-1]
        style = "ci.recorded.strong" if mark else ""
        back_to_back = "ci.warning" if row.back_to_back else ""
        self.query_one(DataTable).add_row(
            Text(value + (" *" if mark else ""), style=style),
            *(Text(c, style=back_to_back if i == 1 and row.back_to_back else style) for i, c in enumerate(rest)))

    def on_sweep_screen_row_replayed(self, message: RowReplayed) -> None:
        if message.progress is not self.progress:  # cancelled, or run again, while this row was on its way
            return
        self.rows.append(message.row)
        self._table_row(message.row)
        self.progress.done = len(self.rows)
        self._status(Text(f"{len(self.rows)} of {len(self.values)} configs replayed · {_pace(self.progress)} "
                          "(ctrl+x cancels)", style="dim"))
        self._plot()

    def _tooltip_table(self, name: str) -> Table | None:
        """Every row's figures, as the plot's tooltip: the metric, the cost with its summarization
        calls, and the compactions with the back-to-back ones."""
        if not self.rows:
            return None
        table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold")
        for column in (self.key, sweep.METRICS.get(name, name), "cost", "summarization", "compactions",
                       "back-to-back"):
            table.add_column(column, justify="right")
        for row in self.rows:
            value = sweep.metric(row, name)
            table.add_row(sweep.value_label(self.key, row.config[self.key]),
                          "-" if value is None else _tick(value, name).strip(),
                          "-" if row.cost is None else f"${row.cost:,.2f}",
                          "-" if row.summarization_cost is None else f"${row.summarization_cost:,.2f}",
                          str(row.compactions), str(row.back_to_back))
        return table

    def _plot(self) -> None:
        widget = self.query_one(PlotextPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        name = str(self.query_one("#sweep-metric", Select).value)
        points: list[tuple[float, float]] = []
        apart: list[float] = []  # metrics of unset values that behave like no value on the line
        for row in self.rows:
            value = sweep.metric(row, name)
            if value is None:
                continue
            x = sweep.plot_x(self.key, row.config[self.key])
            if x is None:
                apart.append(value)
            else:
                points.append((x, value))
        points.sort()
        plt.title(f"{sweep.METRICS.get(name, name)} vs {self.key}")
        spec = KEY_SPECS[self.key]
        unset_at = sweep.plot_x(self.key, spec.unset) if spec.unset is not None else None
        plt.xlabel(self.key + (f" (unset {spec.unset} at {unset_at:g})"
                               if unset_at is not None and any(r.config[self.key] == spec.unset for r in self.rows)
                               else ""))
        if points:
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="dot")
            lo_x, hi_x = points[0][0], points[-1][0]
            if spec.type is int and hi_x > lo_x:  # whole numbers on the axis of a whole-number key
                xs = sorted({round(lo_x + (hi_x - lo_x) * i / 4) for i in range(5)})
                plt.xticks(xs, [str(x) for x in xs])
        for value in apart:  # a horizontal line, labelled: an unset value has no place on the x axis
            plt.hline(value, "orange")
            plt.text(" unset", points[0][0] if points else 0, value, color="orange", alignment="left")
        ys = [p[1] for p in points] + apart
        if ys:
            lo, hi = min(ys), max(ys)
            ticks = [lo + (hi - lo) * i / 4 for i in range(5)] if hi > lo else [lo]
            plt.yticks(ticks, [_tick(t, name) for t in ticks])
        own = sweep.plot_x(self.key, self.base[self.key])
        if own is not None:
            plt.vline(own, "red")  # the thread's own value, labelled on the side the line has room
            right = bool(points) and own >= (points[0][0] + points[-1][0]) / 2
            plt.text("baseline " if right else " baseline", own, max(ys) if ys else 0, color="red",
                     alignment="right" if right else "left")
        widget.tooltip = self._tooltip_table(name)
        widget.refresh()
