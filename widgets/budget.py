"""The token budget of one request: a stacked bar over the window plus the numbers behind it."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter, truth

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from inspector.model import Summary
from inspector.pipeline.audit import RequestAudit
from widgets.borderless_table import BorderlessColumn, BorderlessTable
from widgets.cost import bill_line, cost_rows, pricing_line
from widgets.hidden_tab import QuietWhileHidden
from widgets.names import MessageNames
from widgets.palette import ensure_names
from widgets.rendered import RenderedOnce, SideBySide
from widgets.safe import safe_line

_STATUS = attrgetter("status")
_PROTECTED = attrgetter("protected")

# (key, label, style name (widgets/palette.py), bar character): the parts of the window, in the bar's
# order. Free is the window minus the prompt minus the reserve, as in Claude Code's /context; what pruning saved is not part of the
# window (those tokens were not sent) and is shown beside Free.
SAVED = ("saved", "Saved by pruning (not sent)", "ci.part-saved", "░")
SEGMENTS = (
    ("system", "System prompt", "ci.part-system", "█"),
    ("tools", "Tool definitions", "ci.part-tools", "█"),
    # what the provider billed beyond what the transcript holds (calibrated), in two parts: the agent's own
    # system prompt, tool definitions and injected files (the fit's intercept, like /context's system and
    # tools rows), and the provider's tokenizer counting the same blocks higher than ours (the fit's ratio)
    ("unaccounted", "Unaccounted (the agent's own)", "ci.part-unaccounted", "▓"),
    ("tokenizer", "Tokenizer difference", "ci.part-tokenizer", "▓"),
    ("summaries", "Injected summaries", "ci.part-summaries", "█"),
    ("history", "Kept history", "ci.part-history", "█"),
    ("free", "Free", "ci.part-free", "·"),
    ("reserve", "Response reserve", "ci.part-reserve", "▒"),
)

STATUS_STYLES = {
    "kept": "ci.kept",
    "pruned": "ci.pruned",
    "truncated": "ci.truncated",
    "excluded": "ci.excluded",
    "summarized": "ci.summarized",
}


@dataclass(frozen=True, slots=True)
class BudgetParts:
    window: int
    values: dict[str, int]
    over: int  # tokens beyond the window (failed or overflowing requests)
    saved: int = 0  # tokens pruning removed from the prompt (outside the window's parts)


def budget_parts(request: RequestAudit, own_tokens: int | None = None) -> BudgetParts:
    """Split the window into the stacked bar's segments.

    The calibrated prompt's part beyond the replayed blocks (`unaccounted_tokens`) is split into the
    agent's own tokens (`own_tokens`, the calibration's fitted figure for the request's segment) and the
    tokenizer difference (the rest); with no fitted figure it stays one part."""
    b = request.budget
    history = b.history_tokens
    if request.failed and b.needed_tokens is not None:
        # A failed request sends nothing: show what it would have needed as history.
        history = max(0, b.needed_tokens - b.system_tokens - b.tool_tokens - b.summary_tokens)
    unaccounted = max(0, b.unaccounted_tokens or 0)
    own = unaccounted if own_tokens is None else min(unaccounted, max(0, own_tokens))
    used = b.system_tokens + b.tool_tokens + unaccounted + b.summary_tokens + history + b.response_reserve
    values = {
        "system": b.system_tokens,
        "tools": b.tool_tokens,
        "unaccounted": own,
        "tokenizer": unaccounted - own,
        "summaries": b.summary_tokens,
        "history": history,
        "free": max(0, b.window - used),
        "reserve": b.response_reserve,
    }
    return BudgetParts(window=b.window, values=values, over=max(0, used - b.window), saved=b.pruned_savings)


def stacked_bar(parts: BudgetParts, width: int) -> Text:
    """One line of `width` cells; each segment gets cells in proportion (at least one if non-zero)."""
    total = max(parts.window, sum(parts.values.values()))
    cells: dict[str, int] = {}
    for key, *_ in SEGMENTS:
        value = parts.values[key]
        cells[key] = 0 if value <= 0 else max(1, round(value / total * width))
    # Fix rounding so the bar is exactly `width` wide: adjust the largest segment.
    diff = width - sum(cells.values())
    if diff:
        largest = max(cells, key=lambda k: cells[k])
        cells[largest] = max(0, cells[largest] + diff)
    bar = Text()
    for key, _label, colour, char in SEGMENTS:
        bar.append(char * cells[key], style=colour)
    return bar


@dataclass(frozen=True, slots=True)
class BlockFigures:
    """What the Budget pane reads off every block of a request: blocks per status, the protected ones, the
    largest (`largest_block_indexes`)."""

    counts: Counter
    protected: int
    largest: tuple[int, ...]


_FIGURES: dict[int, tuple[tuple, BlockFigures]] = {}  # id(blocks) -> (the blocks, their figures)


def block_figures(request: RequestAudit) -> BlockFigures:
    """`request`'s `BlockFigures`, remembered by its block tuple (which its priced copy shares): an edit's
    worker computes them for the selected request, and the pane's two updates (the replay, its prices)
    read them instead of walking the thousands of blocks of a long thread's last request on the UI thread."""
    blocks = request.blocks
    hit = _FIGURES.get(id(blocks))
    if hit is not None and hit[0] is blocks:
        return hit[1]
    figures = BlockFigures(Counter(map(_STATUS, blocks)),  # StrEnum keys: looked up by their text
                           sum(map(truth, map(_PROTECTED, blocks))),  # C-level over thousands of blocks
                           tuple(_largest(blocks, 6)))
    if len(_FIGURES) >= 16:
        _FIGURES.clear()
    _FIGURES[id(blocks)] = (blocks, figures)
    return figures


def largest_block_indexes(request: RequestAudit, count: int = 6) -> list[int]:
    """Indexes of the blocks that cost the most as sent (then in full), largest first."""
    if count == 6:
        return list(block_figures(request).largest)
    return _largest(request.blocks, count)


def _largest(blocks, count: int) -> list[int]:
    # Sent blocks outrank every unsent one, and there are few of them on a long thread:
    # rank those alone when there are enough (same result, a fraction of the work).
    sent = [i for i, b in enumerate(blocks) if b.tokens_sent > 0]
    return heapq.nlargest(count, sent if len(sent) >= count else range(len(blocks)),
                          key=lambda i: (blocks[i].tokens_sent, blocks[i].tokens))


def largest_blocks(request: RequestAudit, count: int = 6, names: MessageNames | None = None) -> BorderlessTable:
    """The blocks that cost the most in this request, as sent (what to look at first), named by their
    tool or words (`names`); a click on one opens it in the Blocks pane (`screen.open_block`)."""
    table = BorderlessTable(BorderlessColumn("Largest blocks"), BorderlessColumn("Sent", "right"),
                            BorderlessColumn("Full", "right"), BorderlessColumn("Status"), show_header=True,
                            header_style="bold dim")
    blocks = request.blocks
    for index in largest_block_indexes(request, count):
        block = blocks[index]
        named = names.name(block.message_id, 40) if names is not None and block.message_id else ""
        name = named or f"{block.role} {safe_line(block.message_id or block.kind, 22)}"
        link = Style(underline=True, meta={"@click": f"screen.open_block({index})"})
        table.add_row(Text(name, style=link), f"{block.tokens_sent:,}", f"{block.tokens:,}",
                      Text(str(block.status), style=STATUS_STYLES.get(str(block.status), "")))
    return table


def compaction_text(request: RequestAudit, names: MessageNames | None) -> str:
    """What the request's compaction replaced, by turns and messages (the ids are in the Blocks pane)."""
    c = request.compaction
    why = "manual (/compact), the user's own, replayed where it happened" if c.manual else c.trigger
    covered = [b for b in request.blocks if b.summary_id == c.summary_id and b.message_id is not None
               and str(b.status) == "summarized"]
    turns = sorted({b.turn for b in covered if b.turn is not None})
    span = "" if not turns else f"turn {turns[0]}" if turns[0] == turns[-1] else f"turns {turns[0]}-{turns[-1]}"
    what = f"{len(covered):,} messages" + (f" ({span})" if span else "") if covered else \
        f"{safe_line(c.first_message_id, 24)} .. {safe_line(c.last_message_id, 24)}"
    return f"{why}: summary {safe_line(c.summary_id, 24)} replaces {what}"


SIDE_BY_SIDE = 110  # pane width from which the legend and the facts sit side by side


def _pct(value: int, window: int) -> str:
    return f"{value / window * 100:5.1f}%" if window else "   - "


def _fraction(tokens: int | None, window: int) -> float | None:
    return tokens / window if tokens and window else None


class BudgetView(QuietWhileHidden, Static):
    """Budget pane: the stacked bar, a legend with numbers, and the request's facts."""

    DEFAULT_CSS = """
    BudgetView { padding: 0 1; }
    """

    def on_mount(self) -> None:
        ensure_names(self.app.console)  # the style names of widgets/palette.py resolve in any app

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.request: RequestAudit | None = None
        self.tokenizer = ""
        self.approximate = True
        self.threshold_tokens: int | None = None
        self.profile = ""
        self.trigger_reads = ""
        self.bar_width = 100
        self.request_count = 0
        self.recorded_compaction: Summary | None = None
        self.pruning_tokens: int | None = None
        self.calibration: str | None = None
        self.calibration_note: str | None = None
        self.own_tokens: int | None = None
        self.ratio: float | None = None
        self.names: MessageNames | None = None
        self.pricing_note: str | None = None  # in place of the bill while the request is not priced
        self._shown: RenderedOnce | None = None  # what the pane shows, where it is the rendered tables
        self._drawn_width = -1  # the width `render_budget` last drew for

    def show(
        self,
        request: RequestAudit | None,
        *,
        tokenizer: str,
        approximate: bool,
        threshold_tokens: int | None,
        profile: str,
        trigger_reads: str = "",
        request_count: int,
        recorded_compaction: Summary | None = None,
        pruning_tokens: int | None = None,
        calibration: str | None = None,
        calibration_note: str | None = None,
        own_tokens: int | None = None,
        ratio: float | None = None,
        names: MessageNames | None = None,
        pricing_note: str | None = None,
    ) -> None:
        """`pricing_note`: said in place of the bill and the cost rows while the request's prices are
        being computed (`request` is then unpriced: its cache fields are None)."""
        self.names = names
        self.pricing_note = pricing_note
        self.calibration = calibration
        self.calibration_note = calibration_note
        self.own_tokens = own_tokens
        self.ratio = ratio
        self.recorded_compaction = recorded_compaction
        self.pruning_tokens = pruning_tokens
        self.request = request
        self.tokenizer = tokenizer
        self.approximate = approximate
        self.threshold_tokens = threshold_tokens
        self.profile = profile
        self.trigger_reads = trigger_reads
        self.request_count = request_count
        self._update_budget()

    def _update_budget(self) -> None:
        # The tables rendered once per width: each layout pass measures the pane's height by rendering it.
        same_width = self.size.width == self._drawn_width
        self._drawn_width = self.size.width
        rendered = self.render_budget(self.request_count)
        if not isinstance(rendered, Group):
            self._shown = None
            self.update(rendered)
            return
        once, previous = RenderedOnce(rendered), self._shown
        self._shown = once
        # as many lines as the request before (stepping through a thread, mostly): no layout of the screen
        # (a new width, after a resize, lays the pane out again whatever its lines at the old one)
        self.update(once, layout=not once.keeps_size(previous, self, same_width=same_width))

    def render_budget(self, request_count: int) -> Group | Text:
        request = self.request
        if request is None:
            return Text("No request selected.", style="dim")
        b = request.budget
        parts = budget_parts(request, self.own_tokens)
        width = max(20, min(self.bar_width, (self.size.width or 100) - 4))
        # the rows one under the other: a Group, not a one-column grid, whose measuring of its nested
        # tables measured every cell of each of them again (a third of an edit's time on a long thread)
        grid: list[RenderableType] = []
        title = Text()
        title.append(f"Request {request.index + 1}/{request_count}", style="bold")
        title.append(f"  turn {request.turn if request.turn is not None else '-'}  ")
        title.append(safe_line(request.request_id, 40), style="dim")
        if request.failed:
            title.append("  FAILED", style="ci.error.strong")
            if request.error:
                title.append(f" {safe_line(request.error.code)}", style="ci.error")
        grid.append(title)
        grid.append(stacked_bar(parts, width))
        grid.append(self._ruler(_fraction(self.threshold_tokens, b.window), "compaction", b.window, width))
        if self.pruning_tokens:
            grid.append(self._ruler(_fraction(self.pruning_tokens, b.window), "hard pruning", b.window, width))
        bill = bill_line(request) if self.pricing_note is None else pricing_line(self.pricing_note)
        if bill is not None:  # the bill at a glance, at every size (its parts are in the facts below)
            grid.append(bill)
        # tables of one-line cells, written as Rich writes them without its per-cell work (`BorderlessTable`)
        legend = BorderlessTable(BorderlessColumn(""), BorderlessColumn("Category"), BorderlessColumn("Tokens", "right"),
                                 BorderlessColumn("of window", "right"), show_header=True, header_style="bold dim")
        for key, label, colour, char in SEGMENTS:
            value = parts.values[key]
            if key in ("unaccounted", "tokenizer") and not value:
                continue  # nothing the transcript lacks (or no recorded counts to tell)
            if key == "unaccounted" and self.own_tokens is None:
                label = "Unaccounted (calibrated - replayed)"  # no fitted split: the agent's own and the tokenizer's
            if key == "tokenizer" and self.ratio:
                label = f"Tokenizer difference (x{self.ratio:.2f})"
            if key == "history" and request.failed:
                label = "History needed (not sent)"
            legend.add_row(Text(char * 2, style=colour), label, f"{value:,}", _pct(value, b.window))
            if key == "free" and parts.saved:
                _key, saved_label, saved_colour, saved_char = SAVED
                legend.add_row(Text(saved_char * 2, style=saved_colour), Text(saved_label, style="dim"),
                               f"{parts.saved:,}", "")
        if parts.over:
            legend.add_row(Text("!!", style="ci.error.strong"), "Over the window", f"{parts.over:,}", "")
        legend.add_row("", Text("Window", style="bold"), f"{b.window:,}", "100.0%")
        facts = BorderlessTable(BorderlessColumn(style="dim"), BorderlessColumn())
        if request.failed and b.needed_tokens is not None:  # not sent: what it needed, not "0"
            facts.add_row("Prompt (replayed)", Text(f"not sent (needs {b.needed_tokens:,})", style="ci.error"))
        else:
            facts.add_row("Prompt (replayed)", f"{b.prompt_tokens:,}")
        recorded = "-" if b.recorded_prompt_tokens is None else f"{b.recorded_prompt_tokens:,}"
        if b.recorded_prompt_tokens is not None and b.prompt_tokens:
            recorded += f"  ({(b.prompt_tokens - b.recorded_prompt_tokens):+,} replayed vs recorded)"
        facts.add_row("Prompt (recorded)", recorded)
        if b.calibrated_prompt_tokens is not None and b.unaccounted_tokens:
            # what the provider would bill, with the calibration's figures (one row: the pane is dense)
            calibrated = Text(f"{b.calibrated_prompt_tokens:,}  ")
            calibrated.append(safe_line(self.calibration or "", 120), style="dim")
            facts.add_row("Prompt (calibrated)", calibrated)
            if self.calibration_note:  # a guess, not a figure anchored on a recorded count: said so
                facts.add_row("", Text(safe_line(self.calibration_note, 160), style="ci.warning"))
        costs = cost_rows(request, self.names) if self.pricing_note is None else \
            [("Cost", Text(safe_line(self.pricing_note, 160), style="dim"))]
        for label, value in costs:  # the bill first: what a user checks against the provider's
            facts.add_row(label, value)
        if (b.recorded_prompt_tokens is not None and b.recorded_prompt_tokens > b.prompt_tokens
                and b.system_tokens == 0 and b.tool_tokens == 0 and not b.unaccounted_tokens):
            # Agent transcripts (Claude Code, Codex) keep the conversation, not the agent's own prompt.
            facts.add_row("", Text("the thread holds no system prompt or tool definitions; the recorded "
                                   "count includes the agent's own", style="dim"))
        exactness = "approximate" if self.approximate else "exact"
        facts.add_row("Tokenizer", f"{self.tokenizer} ({exactness})")
        facts.add_row("Profile", self.profile)
        facts.add_row("History budget", f"{b.available:,}")
        facts.add_row("History sent", f"{b.history_tokens:,}")
        if self.threshold_tokens and b.window:
            facts.add_row("Compaction at", f"{self.threshold_tokens:,} ({self.threshold_tokens / b.window:.0%} of window)")
        if self.pruning_tokens and b.window:
            facts.add_row("Hard pruning at",
                          f"{self.pruning_tokens:,} ({self.pruning_tokens / b.window:.0%} of window)")
        if b.trigger_source:
            trig = "-" if b.trigger_tokens is None else f"{b.trigger_tokens:,}"
            facts.add_row("Trigger read", f"{trig} ({b.trigger_source} {self.trigger_reads})".rstrip())
        if b.needed_tokens is not None:
            facts.add_row("Would need", Text(f"{b.needed_tokens:,}", style="ci.error"))
        facts.add_row("Protected turns", "-" if request.protect_turns is None else str(request.protect_turns))
        facts.add_row("Summaries injected", ", ".join(safe_line(s, 24) for s in request.summaries_injected) or "none")
        if request.compaction is not None:
            facts.add_row("Compaction", Text(compaction_text(request, self.names), style="ci.compaction"))
        if self.recorded_compaction is not None:
            s = self.recorded_compaction
            same = request.compaction is not None and request.compaction.summary_id == s.id
            text = Text("the one above" if same else f"{safe_line(s.id, 24)}, covering {safe_line(s.first_message_id, 24)}"
                        f" .. {safe_line(s.last_message_id, 24)}", style="ci.compaction")
            pre = s.meta.get("preTokens") if isinstance(s.meta, dict) else None
            if isinstance(pre, int):
                text.append(f" (pre-compaction tokens {pre:,})", style="dim")
            facts.add_row("Recorded compaction", text)
        figures = block_figures(request)
        counts = figures.counts
        status_line = Text()
        for status, colour in STATUS_STYLES.items():
            if counts.get(status):
                status_line.append(f"{status} {counts[status]}  ", style=colour)
        status_line.append(f"protected {figures.protected}", style="bold")
        facts.add_row("Blocks", status_line)
        if request.error is not None:
            facts.add_row("Error", Text(safe_line(request.error.message, 200), style="ci.error"))
        for note in request.diagnostics:
            facts.add_row("Note", Text(safe_line(note, 200), style="dim"))
        if (self.size.width or 200) >= SIDE_BY_SIDE:
            grid.append(SideBySide(legend, facts, gap=4))
        else:  # a narrow pane: the facts under the legend, so neither wraps its labels
            grid.extend((legend, facts))
        grid.append(Text(""))
        grid.append(largest_blocks(request, names=self.names))
        return Group(*grid)

    @staticmethod
    def _ruler(threshold: float | None, what: str, window: int, width: int) -> Text:
        """A line under the bar with a threshold marked at its place."""
        if not threshold or not window:
            return Text("")
        pos = min(width - 1, int(threshold * width))
        label = f"{what} at {threshold:.0%} "
        ruler = Text(no_wrap=True, overflow="crop")
        if pos > len(label):
            ruler.append(label, style="ci.caution")
            ruler.append("╌" * (pos - len(label)), style="ci.muted")
        else:
            ruler.append(" " * pos)
        ruler.append("▲", style="ci.caution.strong")
        return ruler

    def on_resize(self) -> None:
        # the bar's width and the side-by-side layout follow the width; a new height (the pane grew to
        # its lines, after a layout) changes nothing it draws
        if self.request is not None and self.size.width != self._drawn_width:
            self._update_budget()
