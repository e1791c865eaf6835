"""The summary chain: summaries linked by previous_summary_id, what each covers, its fields, and
what each compaction lost (the facts of its span its summary does not hold, by kind)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from inspector.model import SUMMARY_LIST_FIELDS, Summary
from inspector.pipeline.facts import KINDS, Fact, FactKind
from inspector.pipeline.survival import OPAQUE, CompactionLoss
from widgets.linetable import Column, LineTable
from widgets.names import MessageNames, short_path
from widgets.palette import ensure_names
from widgets.safe import literal, safe_line


@dataclass(frozen=True, slots=True)
class SummaryStats:
    messages: int         # messages covered
    covered_tokens: int   # tokens of the covered messages
    summary_tokens: int   # tokens of the injected summary text

    @property
    def ratio(self) -> float | None:
        return self.covered_tokens / self.summary_tokens if self.summary_tokens else None


def chain_order(summaries: Sequence[Summary]) -> list[Summary]:
    """Summaries ordered along their previous_summary_id links (roots first, stable otherwise)."""
    by_id = {s.id: s for s in summaries}
    depth: dict[str, int] = {}

    def depth_of(s: Summary) -> int:
        seen: set[str] = set()
        d, cur = 0, s
        while cur.previous_summary_id and cur.previous_summary_id in by_id and cur.id not in seen:
            seen.add(cur.id)
            cur = by_id[cur.previous_summary_id]
            d += 1
        return d

    for s in summaries:
        depth[s.id] = depth_of(s)
    return sorted(summaries, key=lambda s: depth[s.id])


def summary_detail(summary: Summary, stats: SummaryStats | None, injected: bool) -> Text:
    out = Text()
    out.append(f"{safe_line(summary.id, 60)}\n", style="ci.compaction.strong")
    out.append(f"previous: {safe_line(summary.previous_summary_id or '-', 60)}\n", style="dim")
    out.append(f"covers {safe_line(summary.first_message_id, 40)} .. {safe_line(summary.last_message_id, 40)}\n")
    if stats is not None:
        ratio = f"{stats.ratio:.1f}x" if stats.ratio is not None else "-"
        out.append(
            f"{stats.messages} messages, {stats.covered_tokens:,} tokens -> {stats.summary_tokens:,} tokens"
            f" (compression {ratio})\n"
        )
    out.append(f"source: {safe_line(summary.source, 30)}", style="dim")
    if summary.model:
        out.append(f" · model {safe_line(summary.model, 40)}", style="dim")
    if summary.before_request_id:
        out.append(f" · before request {safe_line(summary.before_request_id, 40)}", style="dim")
    out.append("\n")
    out.append("injected into the selected request\n" if injected else "not injected into the selected request\n",
               style="ci.success.strong" if injected else "dim")
    out.append("\nSummary\n", style="bold")
    if summary.readable:
        out.append_text(literal(summary.summary))
    else:
        out.append(f"{OPAQUE}: nobody can read it; what the agent kept verbatim is its retained history",
                   style="ci.note")
    out.append("\n")
    for name in SUMMARY_LIST_FIELDS:
        values: tuple[str, ...] = getattr(summary, name)
        if values:
            out.append(f"\n{name.replace('_', ' ').title()}\n", style="bold")
            for value in values:
                out.append("  • ")
                out.append_text(literal(value))
                out.append("\n")
    for name in ("emotional_thread", "relationship_dynamics"):
        value = getattr(summary, name)
        if value:
            out.append(f"\n{name.replace('_', ' ').title()}\n", style="bold")
            out.append_text(literal(value))
            out.append("\n")
    if summary.emotional_markers:
        out.append("\nEmotional Markers\n", style="bold")
        for marker in summary.emotional_markers:
            out.append(f"  • {safe_line(marker.moment, 200)} ({marker.intensity:g})\n")
    return out


def loss_header(loss: CompactionLoss | None) -> Text:
    """One line per kind: facts lost of the span's facts."""
    out = Text()
    if loss is None:
        out.append("No compaction of this replay wrote this summary: nothing to judge.\n", style="dim")
        return out
    counts = loss.counts()
    lost = sum(c.lost for c in counts.values())
    total = sum(c.facts for c in counts.values())
    if not loss.summary_readable:
        kept = sum(c.survived for c in counts.values())
        out.append(f"Summary opaque (encrypted by the provider): {kept:,} of {total:,} facts of the "
                   f"{len(loss.message_ids):,} messages it replaced kept verbatim, the rest not known\n",
                   style="ci.pruned.strong")
        return out
    out.append(f"Lost {lost:,} of {total:,} facts of the {len(loss.message_ids):,} messages it replaced\n",
               style="ci.warning.strong" if lost else "ci.success.strong")
    parts = [f"{kind} {counts[kind].lost}/{counts[kind].facts}" for kind in KINDS if counts[kind].facts]
    if parts:
        out.append("  " + " · ".join(parts) + "\n", style="dim")
    return out


def lost_rows(loss: CompactionLoss | None) -> list[Fact]:
    """The lost facts, grouped by kind in kind order, each kind in thread order."""
    if loss is None:
        return []
    lost = loss.lost()
    return [f for kind in KINDS for f in lost if f.kind is kind]


LOST_COLUMNS = [Column("lost", 10), Column("fact", 36), Column("from", 26)]
FACT_WIDTH = 36


def lost_cells(fact: Fact, names: MessageNames | None) -> tuple[Text, Text, Text]:
    """A lost fact's row: its kind, its text (a path shortened from the left, so its file name shows),
    and where it came from: the request that first sent it, its turn and its tool or role
    (`req 5 turn 3 Read result`; the message's id without names)."""
    text = safe_line(fact.text, 400)
    text = short_path(text, FACT_WIDTH) if fact.kind is FactKind.PATH else text
    if names is not None and names.kind(fact.message_id):
        request, turn = names.first_request(fact.message_id), names.turn(fact.message_id)
        where = " ".join(part for part in (f"req {request}" if request else "", f"turn {turn}" if turn else "",
                                           names.kind(fact.message_id)) if part)
    else:
        where = fact.message_id
    return Text(str(fact.kind), style="ci.warning"), Text(text), Text(safe_line(where, 40), style="dim")

SUMMARY_COLUMNS = [
    Column("#", 3), Column("summary", 22), Column("msgs", 5, "right"), Column("tokens → summary", 16, "right"),
    Column("ratio", 7, "right"), Column("sent", 4), Column("source", 8),
]


class SummariesView(Horizontal):
    """The Summaries pane."""

    DEFAULT_CSS = """
    SummariesView { height: 1fr; }
    SummariesView > #summaries-left { width: 74; height: 1fr; }
    SummariesView #summaries-table { height: auto; max-height: 50%; }
    SummariesView #lost-facts { height: 1fr; min-height: 4; border-top: solid $primary-darken-2; }
    SummariesView > #summary-detail-scroll { width: 1fr; min-width: 36; height: 1fr; border-left: solid $primary-darken-2; padding: 0 1; }
    """

    class FactChosen(Message):
        """The user chose a lost fact: show its source block at the compaction's request."""

        def __init__(self, view: SummariesView, fact: Fact, request_index: int) -> None:
            super().__init__()
            self.view = view
            self.fact = fact
            self.request_index = request_index

    def on_mount(self) -> None:
        ensure_names(self.app.console)  # the style names of widgets/palette.py resolve in any app

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ordered: list[Summary] = []
        self.stats: Mapping[str, SummaryStats] = {}
        self.injected: frozenset[str] = frozenset()
        self.unused: frozenset[str] = frozenset()
        self.rows: list[tuple[Text, ...]] = []
        self.losses: Mapping[str, CompactionLoss] = {}
        self.lost: list[Fact] = []
        self.lost_of: str | None = None  # the summary whose lost facts are listed
        self.names: MessageNames | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="summaries-left"):
            yield LineTable(SUMMARY_COLUMNS, id="summaries-table")
            yield LineTable(LOST_COLUMNS, id="lost-facts")
        with VerticalScroll(id="summary-detail-scroll"):
            yield Static(Text("No summaries in this replay.", style="dim"), id="summary-detail", markup=False)

    @property
    def table(self) -> LineTable:
        return self.query_one("#summaries-table", LineTable)

    @property
    def lost_table(self) -> LineTable:
        return self.query_one("#lost-facts", LineTable)

    def show(
        self,
        summaries: Sequence[Summary],
        stats: Mapping[str, SummaryStats],
        injected: Sequence[str],
        unused: Sequence[Summary] = (),
        losses: Mapping[str, CompactionLoss] | None = None,
        names: MessageNames | None = None,
    ) -> None:
        """The replay's chain, then any recorded summaries the replay did not use (marked as such).
        `losses`: per summary id, what its compaction lost (None: not computed yet)."""
        self.names = names
        keep = self.table.cursor_row
        self.losses = losses or {}
        self.unused = frozenset(s.id for s in unused)
        self.ordered = chain_order(summaries) + list(unused)
        self.stats = stats
        self.injected = frozenset(injected)
        rows = []
        for i, s in enumerate(self.ordered):
            st = stats.get(s.id)
            ratio = "-" if st is None or st.ratio is None else f"{st.ratio:.1f}x"
            tokens = "-" if st is None else f"{st.covered_tokens:,}→{st.summary_tokens:,}"
            sent = Text("✓", style="ci.success.strong") if s.id in self.injected else Text("")
            chained = "↳ " if s.previous_summary_id else ""
            rows.append((
                Text(str(i + 1), style="dim"),
                Text(chained + safe_line(s.id, 40)),
                Text("-" if st is None else str(st.messages)),
                Text(tokens),
                Text(ratio),
                sent,
                Text("unused" if s.id in self.unused else safe_line(s.source, 10),
                     style="ci.pruned" if s.id in self.unused else "dim"),
            ))
        self.rows = rows
        self.table.set_rows(len(rows), lambda i: self.rows[i], cursor=min(max(keep, 0), max(0, len(rows) - 1)))
        if self.ordered:
            self.show_detail(self.table.cursor_row)
        else:
            self.query_one("#summary-detail", Static).update(Text("No summaries in this replay.", style="dim"))
            self._show_lost(None)

    def _show_lost(self, summary_id: str | None) -> None:
        loss = self.losses.get(summary_id) if summary_id is not None else None
        keep = self.lost_table.cursor_row if summary_id == self.lost_of else 0
        self.lost_of = summary_id
        self.lost = lost_rows(loss)
        rows = [lost_cells(f, self.names) for f in self.lost]
        self.lost_table.set_rows(len(rows), lambda i: rows[i], cursor=min(max(keep, 0), max(0, len(rows) - 1)))

    def select_summary(self, summary_id: str) -> bool:
        for i, s in enumerate(self.ordered):
            if s.id == summary_id:
                self.table.move_cursor(row=i)
                self.show_detail(i)
                return True
        return False

    def show_detail(self, index: int) -> None:
        if 0 <= index < len(self.ordered):
            s = self.ordered[index]
            text = summary_detail(s, self.stats.get(s.id), s.id in self.injected)
            if self.losses:
                text = loss_header(self.losses.get(s.id)) + Text("\n") + text
            self._show_lost(s.id)
            if s.id in self.unused:
                note = Text()
                note.append("Recorded by the app but not part of this replay's chain (the replay compacted "
                            "at a different point or over different messages).\n\n", style="ci.pruned")
                text = note + text
            self.query_one("#summary-detail", Static).update(text)

    def on_line_table_row_highlighted(self, event: LineTable.RowHighlighted) -> None:
        event.stop()
        if event.control is self.table:
            self.show_detail(event.cursor_row)

    def on_line_table_row_selected(self, event: LineTable.RowSelected) -> None:
        event.stop()
        if event.control is self.lost_table and 0 <= event.cursor_row < len(self.lost) and self.lost_of:
            loss = self.losses.get(self.lost_of)
            if loss is not None:
                self.post_message(self.FactChosen(self, self.lost[event.cursor_row], loss.request_index))
