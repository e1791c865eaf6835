"""The text panes above and beside the widgets: the status line, the timeline's label and the what-if diff.

Each is a `Static` with a `show(...)` that renders a `ViewState` (they live on the app floor because the
view model does)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from inspector.compare.between_replays import SimulationDiff, is_manual_summary
from inspector.model import Thread
from inspector.pipeline.audit import RequestAudit
from inspector.screens.view import ViewState, timeline_scale
from inspector.thread_tree import SubagentTotals
from widgets.budget import STATUS_STYLES
from widgets.hidden_tab import QuietWhileHidden
from widgets.rendered import RenderedOnce
from widgets.safe import safe_line
from widgets.timeline import compact_number

DIFF_BLOCKS_SHOWN = 12  # changed blocks of the selected request listed in the diff panel
DIFF_MOVES_SHOWN = 20  # compaction moves listed in the diff panel (the rest are counted)


class FixedHeightStatic(Static):
    """A Static whose size the CSS fixes (`#status`, `#timeline-label` in app.tcss): a new text is
    repainted without a layout of the screen, which reflows every widget (tens of milliseconds on
    each step and each edit). `tests/tui/test_rendered_once.py` checks the CSS still fixes them."""

    UPDATES_AS_STATIC = True  # its update is Static's with another default (`widgets.palette.redraw`)

    def update(self, content: Any = "", *, layout: bool = False) -> None:
        super().update(content, layout=layout)


class StatusLine(FixedHeightStatic):
    """Thread, counts, profile and tokenizer; baseline or the what-if's changed keys and what moved."""

    def show(self, view: ViewState, *, live: bool, problem: str | None = None) -> None:
        sim = view.simulation
        compactions = sum(1 for r in sim.requests if r.compaction is not None)
        failures = sum(1 for r in sim.requests if r.failed)
        line = Text(no_wrap=True, overflow="ellipsis")  # each of the three lines ends in … when cut
        line.append(safe_line(view.thread.title or view.thread.id, 60), style="bold")
        line.append(f"  {safe_line(view.thread.source, 20)}", style="dim")
        totals = view.cost_totals
        if view.pricing_note is not None:  # the what-if's prices follow its replay: never the last replay's bill
            line.append("   ")
            line.append(safe_line(view.pricing_note, 80), style="dim")
        elif totals is not None:
            line.append("   ")
            line.append("cost unknown" if totals.cost is None else f"${totals.cost:,.2f}", style="ci.recorded")
            if totals.recorded_cost is not None:
                line.append(f" (recorded ${totals.recorded_cost:,.2f})", style="dim")
            if view.subagents is not None:
                line.append_text(subagent_cost_text(view.subagents))
            share = totals.cache_read_share
            if share is not None:
                line.append(f" · {share:.0%} cache read · {totals.cache_breaks} break"
                            f"{'' if totals.cache_breaks == 1 else 's'}")
        line.append("\n")
        line.append(f"{len(view.thread.messages):,} messages · {len(sim.requests):,} requests")
        if view.subagents is not None:
            line.append(subagent_requests_text(view.subagents))
        line.append(" · ")
        line.append(f"{compactions} compaction{'' if compactions == 1 else 's'}", style="ci.compaction" if compactions else "")
        line.append(" · ")
        line.append(f"{failures} failed", style="ci.error.strong" if failures else "")
        line.append(f"  · profile {view.config.profile} · {sim.tokenizer}"
                    f" ({'approximate' if sim.approximate else 'exact'})")
        if sim.rules:  # the agent versions' rules the replay applied (Claude Code, by CLI version)
            names = [n.removeprefix(f"{view.config.profile} ") for n in dict.fromkeys(sim.rules)]
            line.append(f" · rules {safe_line(names[0], 40)}" + (f" → {safe_line(names[-1], 40)}" if len(names) > 1
                                                                   else ""))
        if live and problem is not None:  # the file was deleted or truncated: what is shown is what was read
            line.append("  ● live: " + ("file deleted" if "deleted" in problem else "file damaged"),
                        style="ci.warning.strong")
        elif live:
            line.append("  ● live", style="ci.success")
        line.append("\n")
        # the third line starts with the compaction mode (and, at the baseline, how well the profile
        # reproduces the recorded compactions): the second is full on a narrow terminal
        line.append(f"compactions {view.compactions}", style="ci.info")
        reproduction = view.reproduction
        if reproduction is not None and view.diff is None:
            by = reproduction.by or view.baseline_config.profile
            # the user's own /compact is not the profile's to decide: counted apart, and the others named so
            manual = sum(map(is_manual_summary, view.thread.summaries))
            recorded = len(view.thread.summaries) - manual
            kind = "recorded automatic compaction" if manual else "recorded compaction"
            plural = "" if recorded == 1 else "s"
            if not reproduction.known:  # its decide replay runs after the first view (ReplayController)
                line.append(f" · does {by} reproduce the {recorded} {kind}{plural}? replaying…",
                            style="dim")
            elif reproduction.error is not None:
                line.append(f" · whether {by} reproduces the {kind}{plural} is unknown: "
                            f"{safe_line(reproduction.error, 60)}", style="ci.warning")
            elif reproduction.result is not None:
                done, total = reproduction.result
                line.append(f" · {by} reproduces {done} of {total} {kind}{'' if total == 1 else 's'}",
                            style="ci.success" if done == total else "ci.warning")
        line.append(" · ")
        if view.file_overrides:
            line.append("config file: ", style="ci.warning.strong")
            line.append(", ".join(f"{k} {view.baseline_config.values.get(k)}" for k in view.file_overrides))
            line.append(" · ")
        if view.diff is None:
            line.append("defaults + config file" if view.file_overrides else "baseline config", style="dim")
        else:
            changes = view.config.changed_keys(view.baseline_config)
            line.append("what-if: ", style="ci.recorded.strong")
            if view.config.profile != view.baseline_config.profile:
                line.append(f"profile {view.baseline_config.profile}→{view.config.profile}  ")
            line.append("  ".join(f"{k} {old}→{new}" for k, (old, new) in changes.items()
                                  if k in view.config.values and old != new))
            moved = view.diff.lines(moves_shown=3)
            if moved:
                line.append("  │ " + "; ".join(moved[:3]), style="ci.success")
            else:
                line.append("  │ nothing moved", style="dim")
        self.update(line)

    def show_replaying(self, thread: Thread, profile: str, *, recorded: bool) -> None:
        """A thread loaded and not replayed yet: what it is, and that its replay is coming (the chart
        shows its recorded counts meanwhile, where it has some)."""
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(safe_line(thread.title or thread.id, 60), style="bold")
        line.append(f"  {safe_line(thread.source, 20)}", style="dim")
        line.append(f"\n{len(thread.messages):,} messages · {len(thread.requests):,} requests"
                    f" · {len(thread.summaries)} recorded compaction{'' if len(thread.summaries) == 1 else 's'}")
        line.append("\n")
        if recorded:
            line.append("recorded counts", style="ci.recorded")
            line.append(" shown · ")
        line.append(f"replaying under {safe_line(profile, 40)}…", style="ci.info")
        self.update(line)

    def show_llm_progress(self, start: Any, stats: Any) -> str:
        """The anthropic summarizer's requests and tokens since `start` (its stats); returns the plain text."""
        line = Text()
        line.append("anthropic summaries: ", style="ci.pruned.strong")
        line.append(f"{stats.requests - start.requests} request(s), "
                    f"{stats.input_tokens - start.input_tokens:,} tokens in / "
                    f"{stats.output_tokens - start.output_tokens:,} out, "
                    f"{stats.cache_hits - start.cache_hits} from the cache")
        if stats.retries - start.retries:
            line.append(f", {stats.retries - start.retries} retried")
        line.append("  (x cancels)", style="dim")
        self.update(line)
        return line.plain

    def show_error(self, message: str) -> None:
        self.update(Text(safe_line(message, 300), style="ci.error.strong"))


def subagent_requests_text(totals: SubagentTotals) -> str:
    """" + 57 in 3 sub-agents": the sub-agents' requests, apart from the thread's own."""
    text = f" + {totals.requests:,} in {totals.threads} sub-agent{'' if totals.threads == 1 else 's'}"
    if totals.unreadable:
        text += f" ({len(totals.unreadable)} unreadable)"
    return text


def subagent_cost_text(totals: SubagentTotals) -> Text:
    """" + $0.62 sub-agents (recorded $0.60)": their replayed cost, apart from the thread's own."""
    text = Text(" + ")
    text.append("unknown" if totals.cost is None else f"${totals.cost:,.2f}", style="bold")
    text.append(" sub-agents")
    if totals.recorded_cost is not None:
        text.append(f" (recorded ${totals.recorded_cost:,.2f})", style="dim")
    return text


class TimelineLabel(FixedHeightStatic):
    """The selected request's figures and the chart's legend, above the chart."""

    def show(self, view: ViewState, request: RequestAudit | None, *, overview_per: int | None,
             shown: tuple[int, int] | None = None) -> None:
        """`shown`: the first and last request (0-based) the chart shows, said where it is not all of them."""
        label = Text(no_wrap=True, overflow="ellipsis")
        if request is None:
            label.append("no requests", style="dim")
        else:
            b = request.budget
            label.append(f"request {request.index + 1}/{len(view.requests)}", style="bold")
            label.append(f" (index {request.index})", style="dim")
            if shown is not None and (shown[0] > 0 or shown[1] < len(view.requests) - 1):
                label.append(f"  showing {shown[0] + 1}-{shown[1] + 1}", style="ci.info")
            if request.failed:  # nothing was sent: say what it needed, not "prompt 0"
                label.append("  prompt not sent")
            else:
                label.append(f"  prompt {b.prompt_tokens:,}")
            if b.recorded_prompt_tokens is not None:
                label.append(f"  recorded {b.recorded_prompt_tokens:,}", style="ci.recorded")
            if request.failed:
                label.append("  FAILED", style="ci.error.strong")
                if b.needed_tokens is not None:
                    label.append(f" (needs {b.needed_tokens:,})", style="ci.error")
            guesses = view.guesses
            if request.index in guesses:
                label.append("  calibrated: a guess", style="ci.warning")
            if request.compaction is not None:
                label.append("  ◆ manual (/compact)" if request.compaction.manual else "  ◆ compaction",
                             style="ci.compaction.strong")
            if request.request_id in view.recorded_compactions:
                label.append("  ◇ recorded compaction", style="ci.compaction.strong")
            for event in view.recorded_events.get(request.request_id, ()):
                saved = event.get("tokensSaved")
                label.append(f"  ○ recorded {event.get('kind', 'event')}"
                             + (f" ({saved:,} tokens cleared)" if isinstance(saved, int) else ""), style="ci.compaction")
            scale = timeline_scale(view, request)
            label.append(f"   ─ window {compact_number(scale.window)}", style="ci.error")
            if scale.threshold:
                label.append(f"  ─ threshold {compact_number(scale.threshold)}", style="ci.caution")
            if scale.budget is not None:
                label.append(f"  ─ prompt ceiling {compact_number(scale.budget)}", style="ci.success")
            if overview_per is not None:
                label.append(f"  overview: {overview_per} request{'' if overview_per == 1 else 's'} per column",
                             style="ci.info.strong")
            label.append("  • recorded ◆◇ compaction ✗ failed", style="dim")
            if guesses:
                label.append("  ▆ guess", style="ci.muted")
        self.update(label)


class DiffPanel(QuietWhileHidden, Static):
    """The what-if against the baseline: changed keys, what moved, and the selected request's block changes.

    An edit shows it three times (the replay, then its prices and losses, or a step to another request),
    each text rendered once per width (`RenderedOnce`: a layout pass renders it to measure it, the paint
    again), and laid out again only where it grows past the height it was laid out to: a shorter text (the
    next edit's before its prices and losses) leaves blank lines under it until the next layout, so that
    the steps of an edit do not each lay the screen out."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: RenderedOnce | None = None
        self._drawn_width = -1

    def show(self, diff: SimulationDiff | None, view: ViewState, request: RequestAudit | None) -> None:
        if diff is None:
            self._shown = None
            self.update(Text("No edits: this is the baseline replay.", style="dim"))
            return
        keys = []
        if view.config.profile != view.baseline_config.profile:
            keys.append(Text(f"profile: {view.baseline_config.profile} → {view.config.profile}"))
        keys += [Text(f"{key}: {old} → {new}") for key, (old, new) in view.config.changed_keys(view.baseline_config).items()]
        lines = diff.lines(moves_shown=DIFF_MOVES_SHOWN)
        moved = [Text(line, style="ci.error" if "failures appear" in line else "ci.success") for line in lines]
        if not moved:
            moved = [Text("nothing: same compactions, failures and block statuses", style="dim")]
            if view.compactions == "recorded" and view.thread.summaries:
                moved.append(Text("(compactions follow the thread's recorded ones: c lets the profile decide)",
                                  style="dim"))
        out = Text()
        moves: list[Text] = []
        if request is not None:
            delta = diff.prompt_delta.get(request.index)
            shown = view.block_changes_shown(request.index, DIFF_BLOCKS_SHOWN)
            changed, changes = shown if shown is not None else (diff.changed_blocks.get(request.index, 0), [])
            out.append(f"Selected request {request.index + 1}\n", style="bold")
            out.append(f"  prompt tokens {'unchanged' if not delta else f'{delta:+,}'}\n")
            out.append(f"  {changed} block statuses changed\n")
            for change in changes:
                line = Text(f"{safe_line(change.message_id, 28)}: ")
                line.append(change.before, style=STATUS_STYLES.get(change.before, ""))
                line.append(" → ")
                line.append(change.after, style=STATUS_STYLES.get(change.after, ""))
                moves.append(line)
            if shown is not None and changed > len(changes):
                moves.append(Text(f"… {changed - len(changes)} more", style="dim"))
        out.rstrip()
        once = RenderedOnce(Group(Text("Changed keys", style="bold"), hanging(keys, "  "), Text(""),
                                  Text("What moved", style="bold"), hanging(moved, "  • "), Text(""), out,
                                  hanging(moves, "    ")))
        previous, self._shown = self._shown, once
        same_width, self._drawn_width = self.size.width == self._drawn_width, self.size.width
        keeps = once.keeps_size(previous, self, same_width=same_width, shrinks_later=True)
        self.update(once, layout=not keeps)
        if keeps:  # the next layout of the screen (a resize) measures it again, not its containers' cached arrangement
            for ancestor in self.ancestors:
                if isinstance(ancestor, Widget):
                    ancestor._clear_arrangement_cache()


def hanging(lines: list[Text], lead: str) -> Table:
    """Lines after a lead (indent or bullet) that wrap under their own start, not at column 0."""
    grid = Table.grid()
    grid.add_column(width=len(lead), no_wrap=True)
    grid.add_column(ratio=1)
    for line in lines:
        grid.add_row(Text(lead, style=line.style), line)
    return grid
