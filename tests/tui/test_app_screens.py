"""Issue 14, the screens a person reads: saved config, profile switches, edits, Free, layout, meanings."""

from __future__ import annotations

import tomllib

from textual.widgets import Input, Static

from inspector.examples import HARNESS_ID, OVERFLOW_ID, ROLEPLAY_ID, WALKTHROUGH_ID
from tests.paths import README
from tests.tui.app_support import SIZE, make_app, plain, settle
from widgets.timeline import TimelineChart


def status(app) -> str:
    return plain(app.query_one("#status", Static))


# 1. ctrl+o ------------------------------------------------------------------------------------------------

async def test_save_on_a_32k_thread_writes_only_the_edit_and_the_200k_thread_keeps_its_window(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.config["context.window"] == 32_000
        app.main_screen.set_config_value("context.prune_protect_turns", 3)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    data = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert data == {"context": {"prune_protect_turns": 3}}
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.view.baseline_config["context.window"] == 200_000
        assert app.main_screen.view.baseline_config["context.prune_protect_turns"] == 3
        # the status line says the baseline is not the defaults, and which key the file sets
        assert "config file: context.prune_protect_turns 3" in status(app)
        app.main_screen.load_thread(ROLEPLAY_ID)  # shifting does not read that key: its baseline is the defaults
        await settle(app, pilot)
        assert "config file" not in status(app) and "baseline config" in status(app)


async def test_an_edited_window_of_a_thread_with_its_own_window_is_not_saved(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 64_000)
        await settle(app, pilot)
        app.main_screen.set_config_value("summarization.threshold", 30)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        notes = " ".join(n.message for n in app._notifications)
    data = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert data == {"summarization": {"threshold": 30}}
    assert "not saved: context.window" in notes and str(tmp_path / "config.toml") in notes


async def test_saving_only_a_thread_s_own_window_writes_no_file(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 64_000)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        notes = " ".join(n.message for n in app._notifications)
    assert not (tmp_path / "config.toml").exists()
    assert "nothing to save" in notes and "not saved: context.window" in notes


async def test_a_quote_in_a_saved_value_round_trips(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("summarization.model", 'my "special" model')
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.main_screen.loading_error is None
        assert app.main_screen.view.baseline_config["summarization.model"] == 'my "special" model'


async def test_save_keeps_the_file_s_other_keys_and_refuses_to_replace_a_broken_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[harness]\nkeep_last = 4\n", encoding="utf-8")
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("summarization.max_injected", 2)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert tomllib.loads(path.read_text()) == {"harness": {"keep_last": 4}, "summarization": {"max_injected": 2}}
        path.write_text("[context\n", encoding="utf-8")
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert path.read_text() == "[context\n"
        assert any("cannot save config" in n.message for n in app._notifications)
        assert not list(tmp_path.glob("*.tmp"))


async def test_status_line_says_when_the_config_file_overrides_the_defaults(tmp_path):
    (tmp_path / "config.toml").write_text("[context]\nwindow = 32000\n", encoding="utf-8")
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        line = status(app)
        assert "config file: context.window 32000" in line and "baseline config" not in line


# 2. profile switch and thread switch ---------------------------------------------------------------------

async def test_profile_switch_keeps_the_thread_s_window_and_the_user_s_edits(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("summarization.max_injected", 2)
        await settle(app, pilot)
        app.main_screen.set_profile("shifting")
        await settle(app, pilot)
        assert app.main_screen.view.config.profile == "shifting"
        assert app.main_screen.view.config["context.window"] == 200_000
        assert app.main_screen.view.config["summarization.max_injected"] == 2
        assert not any(r.failed for r in app.main_screen.view.requests)


async def test_edits_of_one_thread_do_not_leak_to_the_next(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.response_reserve", 1024)
        await settle(app, pilot)
        assert app.main_screen.view.is_what_if
        app.main_screen.load_thread(HARNESS_ID)
        await settle(app, pilot)
        assert app.main_screen.view.thread.id == HARNESS_ID
        assert not app.main_screen.view.is_what_if
        assert app.main_screen.view.config["context.response_reserve"] == 0


# 3. keys in the config form ------------------------------------------------------------------------------

async def test_digits_type_in_a_field_and_escape_cancels_the_edit(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.pause()
        field = app.query_one("#cfg-context-window", Input)
        assert app.focused is field
        await pilot.press("4", "1")
        await pilot.pause()
        assert field.value == "41" and app.query_one("#tabs").active == "config"
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.focused, TimelineChart)
        assert not app.main_screen.view.is_what_if and app.main_screen.view.config["context.window"] == 200_000
        assert field.value == "200000"
        await pilot.press("2")  # outside a text input, digits switch panes
        await pilot.pause()
        assert app.query_one("#tabs").active == "blocks"


async def test_leaving_a_field_with_an_invalid_value_does_not_replay(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await pilot.pause()
        await pilot.press("ctrl+a", "ctrl+k", *"12k")
        await pilot.press("tab")
        await settle(app, pilot)
        assert not app.main_screen.view.is_what_if


async def test_demo_threads_open_under_their_own_profile(tmp_path):
    expected = {WALKTHROUGH_ID: "iris", ROLEPLAY_ID: "shifting", HARNESS_ID: "harness", OVERFLOW_ID: "iris"}
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for thread_id, profile in expected.items():
            app.main_screen.load_thread(thread_id)
            await settle(app, pilot)
            assert (thread_id, app.main_screen.view.config.profile) == (thread_id, profile)


# 4. Free ---------------------------------------------------------------------------------------------------

def _legend_row(text: str, label: str) -> list[str]:
    line = next(line for line in text.splitlines() if label in line)
    return line.split(label, 1)[1].split()


async def test_free_is_window_minus_prompt_minus_reserve_and_pruning_savings_sit_beside_it(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        index = max(range(len(app.main_screen.view.requests)), key=lambda i: app.main_screen.view.requests[i].budget.pruned_savings)
        app.main_screen.jump_to_request(index)
        await pilot.pause()
        b = app.main_screen.current_request.budget
        assert not app.main_screen.current_request.failed and b.pruned_savings > b.window - b.prompt_tokens > 0
        text = plain(app.query_one("#budget-view", Static))
        free = b.window - b.prompt_tokens - b.response_reserve
        assert _legend_row(text, "Free")[0] == f"{free:,}"
        assert _legend_row(text, "Saved by pruning (not sent)")[0] == f"{b.pruned_savings:,}"


# 5. the timeline's lines and axis --------------------------------------------------------------------------

async def test_timeline_line_is_the_prompt_ceiling_no_completed_bar_rises_above_it(tmp_path):
    for thread_id in (WALKTHROUGH_ID, ROLEPLAY_ID, HARNESS_ID, OVERFLOW_ID):
        app = make_app(tmp_path, thread_id=thread_id)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            chart = app.query_one(TimelineChart)
            for i, request in enumerate(app.main_screen.view.requests):
                app.main_screen.jump_to_request(i)
                if not request.failed:  # the bar (what the chart draws) stays under the line
                    assert chart.points[i].prompt_tokens <= chart.scale.budget, (thread_id, i)
            label = plain(app.query_one("#timeline-label", Static))
            assert "prompt ceiling" in label and "─ budget" not in label


async def test_timeline_y_axis_has_zero_and_ticks(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chart = app.query_one(TimelineChart)
        gutters = [chart.render_line(y).text[:7] for y in range(chart.size.height - 1)]
        assert gutters[-1].strip() == "0┤"
        labelled = [g for g in gutters if g.endswith("┤")]
        assert len(labelled) >= 4 and any(g.endswith("│") for g in gutters)


# 6. layout -------------------------------------------------------------------------------------------------

def screen_lines(app) -> list[str]:
    """The screen as text lines, read from the app's own SVG screenshot (one <text> run per span, placed
    at its column: Rich's SVG cells are 0.61 x 20 px wide)."""
    import html
    import re

    svg = app.export_screenshot()
    rows: dict[int, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                         r'clip-path="url\(#[^)]*-line-(\d+)\)">(.*?)</text>', svg):
        rows.setdefault(int(m[2]), []).append((float(m[1]), html.unescape(m[3]).replace("\xa0", " ")))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(round(x / 12.2)) + text
        lines.append(line)
    return lines


async def test_at_80x24_the_thread_list_collapses_and_every_pane_is_usable(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert not app.query_one("#left").display
        assert app.query_one("#main").size.width == 80
        for key, widget_id in (("1", "#budget-view"), ("2", "#blocks-table"), ("3", "#summaries-left"),
                               ("4", "#config-form"), ("5", "#step-view")):
            app.main_screen.action_focus_timeline()
            await pilot.press(key)
            await settle(app, pilot)
            region = app.query_one(widget_id).region
            assert region.width >= 70 and region.height >= 5, (key, region)
        await pilot.press("b")  # the list comes back on demand
        await pilot.pause()
        assert app.query_one("#left").display


async def test_at_120x36_the_thread_list_narrows_and_the_budget_legend_does_not_wrap(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.query_one("#left").size.width <= 34
        app.main_screen.jump_to_request(7)
        await pilot.pause()
        lines = screen_lines(app)
        assert any("Category" in line and "Tokens" in line for line in lines)
        assert any("Saved by pruning (not sent)" in line for line in lines)
        assert any("Response reserve" in line for line in lines)


async def test_at_160x48_long_lines_end_in_an_ellipsis(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for key, value in (("context.window", 190_000), ("context.compaction_threshold", 0.7),
                           ("summarization.threshold", 30), ("summarization.max_injected", 2),
                           ("context.prune_protect_turns", 3)):
            app.main_screen.set_config_value(key, value)
            await settle(app, pilot)
        what_if = next(line for line in screen_lines(app) if "what-if:" in line)
        assert what_if.rstrip().endswith("…")
        label = next(line for line in screen_lines(app) if "request 44/44" in line)
        assert "…" in label or "failed" in label  # cut with an ellipsis, or whole


async def test_diff_bullets_wrap_under_their_text_not_at_column_0(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.main_screen.set_config_value("context.window", 100_000)
        await settle(app, pilot)
        diff = app.query_one("#diff", Static)
        from rich.console import Console

        console = Console(width=40, record=True, color_system=None, file=__import__("io").StringIO())
        console.print(diff.content)
        lines = console.export_text().splitlines()
        start = lines.index("What moved")
        bullets = [line for line in lines[start + 1:] if line.strip()][:6]
        assert bullets[0].startswith("  • ")
        assert all(line.startswith("  • ") or line.startswith("    ") for line in bullets), bullets


# 7. meanings ---------------------------------------------------------------------------------------------

async def test_help_explains_statuses_reason_codes_and_marks(tmp_path):
    from inspector.pipeline.audit import BlockStatus, Reason

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        text = plain(app.screen.query_one("#help-meanings", Static))
    for status in BlockStatus:
        assert str(status) in text
    for reason in Reason:
        assert reason.value in text, reason
    for mark in ("⚑", "◆", "◇", "•", "✗", "~N", "comp", "green bar", "yellow key"):
        assert mark in text, mark
    assert "tool output outside the protected turns, sent as [Tool output cleared]" in text


async def test_block_detail_explains_its_reason_and_the_table_shows_reasons_whole(tmp_path):
    app = make_app(tmp_path, thread_id=ROLEPLAY_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        blocks = app.main_screen.current_request.blocks
        index = next(i for i, b in enumerate(blocks) if b.reason == "protected_required_lorebook")
        app.query_one("BlocksView").select_block(index)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert "protected_required_lorebook: a lorebook entry marked required" in detail
        lines = screen_lines(app)
        assert any("protected_required_lorebook" in line for line in lines)
        assert not any("protected_required_…" in line for line in lines)


async def test_the_reason_column_says_summarized_as_the_cli_does(tmp_path):
    """Issue 22 item 13 (it was left empty where it repeated the status, issue 14)."""
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        table = app.query_one("#blocks-table")
        blocks = app.main_screen.current_request.blocks
        index = next(i for i, b in enumerate(blocks) if b.reason == "summarized" and str(b.status) == "summarized")
        row = table.plain_row(index)
        assert row[6] == "summarized" and row[7] == "summarized"


def test_readme_marks_and_reason_tables_match_the_app():
    import re

    from widgets.meanings import MARKS, REASON_MEANINGS

    readme = README.read_text(encoding="utf-8")
    reasons = readme[readme.index("### Reason codes"):]
    rows = re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| [^|]+ \| (.+) \|$", reasons[:reasons.index("\n## ")], re.M)
    assert dict((code, meaning.strip()) for code, meaning in rows) == REASON_MEANINGS
    marks = readme[readme.index("### Marks"):]
    table = re.findall(r"^\| `?([^|`]+?)`? \| ([^|]+) \| (.+) \|$", marks[:marks.index("\n#")], re.M)
    assert [(m.strip(), w.strip(), meaning.strip()) for m, w, meaning in table if m != "mark"] == list(MARKS)
    assert "the lock mark" not in readme and "(and ⚑ in the TUI)" in readme


# 8. scanning blocks and requests ------------------------------------------------------------------------

async def test_blocks_table_has_a_preview_column_and_sorts_by_tokens(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        table = app.query_one("#blocks-table")
        blocks = app.main_screen.current_request.blocks
        call = next(i for i, b in enumerate(blocks) if b.role == "assistant")
        message = app.main_screen.view.messages[blocks[call].message_id]
        assert table.columns[-1].label == "name / preview"
        assert message.tool_calls[0].name in table.plain_row(call)[-1]
        assert table.plain_row(0)[-1].startswith(app.main_screen.view.messages[blocks[0].message_id].content[:20])
        await pilot.press("s")
        await pilot.pause()
        tokens = [int(table.plain_row(r)[4].replace(",", "")) for r in range(table.row_count)]
        assert tokens == sorted(tokens, reverse=True) and tokens[0] == max(b.tokens for b in blocks)
        assert table.columns[4].label == "tokens▼"
        await pilot.press("s")
        await pilot.pause()
        assert [table.plain_row(r)[0] for r in range(3)] == ["1", "2", "3"]


async def test_a_largest_block_opens_in_the_blocks_pane(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=(160, 64)) as pilot:  # tall enough for Largest blocks, under Cost
        await settle(app, pilot)
        request = app.main_screen.current_request
        largest = max(range(len(request.blocks)),
                      key=lambda i: (request.blocks[i].tokens_sent, request.blocks[i].tokens))
        message_id = request.blocks[largest].message_id
        from widgets.names import names_of

        name = names_of(app.main_screen.view.thread).name(message_id, 40)[:16]  # named, not by its id (issue 22)
        lines = screen_lines(app)
        header = next(y for y, line in enumerate(lines) if "Largest blocks" in line)
        y = next(y for y in range(header + 1, len(lines)) if name in lines[y])
        x = lines[y].index(name)
        await pilot.click(offset=(x + 1, y))
        await settle(app, pilot)
        assert app.query_one("#tabs").active == "blocks"
        assert app.focused.id == "blocks-table"
        table = app.query_one("#blocks-table")
        assert table.cursor_row == largest
        top = round(table.scroll_offset.y)  # scrolled to it
        assert top <= largest < top + table.scrollable_content_region.height - 1
        assert plain(app.query_one("#block-detail", Static)).startswith(message_id)


async def test_since_previous_request_lists_what_came_in_and_went_out(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("p")  # the compaction before turn 21
        await settle(app, pilot)
        current = app.main_screen.current_request
        previous = app.main_screen.view.audit(current.index - 1)
        await pilot.press("5")
        await settle(app, pilot)
        text = plain(app.query_one("#step-view", Static))
        before = {b.message_id: str(b.status) for b in previous.blocks if b.message_id}
        level = {"kept": 2, "truncated": 2, "pruned": 1, "excluded": 0, "summarized": 0}
        went_out = [b for b in current.blocks
                    if b.message_id in before and level[str(b.status)] < level[before[b.message_id]]]
        new = [b.message_id for b in current.blocks if b.message_id and b.message_id not in before]
        assert any(str(b.status) == "summarized" for b in went_out) and new
        assert f"Request {current.index + 1} against request {current.index}" in text
        assert f"Went out (excluded, pruned, summarized): {len(went_out)}" in text
        assert f"Came in: {len(new) + 1}" in text  # the new messages and the injected summary
        delta = current.budget.prompt_tokens - previous.budget.prompt_tokens
        assert f"{delta:+,}" in text
        app.main_screen.jump_to_request(0)
        await pilot.pause()
        assert "nothing before it" in plain(app.query_one("#step-view", Static))


# 10. the demos ------------------------------------------------------------------------------------------

def test_walkthrough_recorded_tokens_are_the_seed_s_and_consistent_with_the_replay():
    from inspector.config import Config
    from inspector.examples import walkthrough_thread
    from inspector.service import run_simulation

    thread = walkthrough_thread()
    sim = run_simulation(thread, Config.for_profile("iris", {"context.window": 200_000}), baseline=True)
    recorded = {r.id: r.prompt_tokens for r in thread.requests}
    before_21 = next(r for r in sim.requests if r.turn == 21).index - 1
    assert recorded[sim.requests[before_21].request_id] == 158_000  # the seed's figure
    ratios = [recorded[r.request_id] / r.budget.prompt_tokens for r in sim.requests]
    assert max(ratios) - min(ratios) < 0.01  # one tokenizer factor, no made-up formula
    over = [r.index for r in sim.requests if recorded[r.request_id] >= 150_000]
    assert over == [before_21]  # only the seed's request crosses the 75% threshold
    assert [r.turn for r in sim.requests if r.compaction] == [21]


async def test_walkthrough_opens_without_a_large_replayed_vs_recorded_gap(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        b = app.main_screen.current_request.budget
        gap = b.prompt_tokens - b.recorded_prompt_tokens
        assert abs(gap) < 0.25 * b.recorded_prompt_tokens
        assert f"({gap:+,} replayed vs recorded)" in plain(app.query_one("#budget-view", Static))


async def test_the_palette_opens_a_largest_block_from_the_keyboard(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        request = app.main_screen.current_request
        largest = max(range(len(request.blocks)),
                      key=lambda i: (request.blocks[i].tokens_sent, request.blocks[i].tokens))
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*f"Block: {request.blocks[largest].role} {request.blocks[largest].message_id}")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one("#tabs").active == "blocks"
        assert app.query_one("BlocksView").selected_block() is request.blocks[largest]
