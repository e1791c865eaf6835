"""Issue 14, the screens a person reads: saved config, profile switches, edits, Free, layout, meanings."""

from __future__ import annotations

import tomllib

from textual.widgets import Input, Static

from inspector.examples import HARNESS_ID, OVERFLOW_ID, ROLEPLAY_ID, WALKTHROUGH_ID
from tests.test_app_support import SIZE, make_app, plain, settle
from widgets.timeline import TimelineChart


def status(app) -> str:
    return plain(app.query_one("#status", Static))


# 1. ctrl+o ------------------------------------------------------------------------------------------------

async def test_save_on_a_32k_thread_writes_only_the_edit_and_the_200k_thread_keeps_its_window(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.view.config["context.window"] == 32_000
        app.set_config_value("context.prune_protect_turns", 3)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    data = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert data == {"context": {"prune_protect_turns": 3}}
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.view.baseline_config["context.window"] == 200_000
        assert app.view.baseline_config["context.prune_protect_turns"] == 3
        # the status line says the baseline is not the defaults, and which key the file sets
        assert "config file: context.prune_protect_turns 3" in status(app)


async def test_an_edited_window_of_a_thread_with_its_own_window_is_not_saved(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.set_config_value("context.window", 64_000)
        await settle(app, pilot)
        app.set_config_value("summarization.threshold", 30)
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        notes = " ".join(n.message for n in app._notifications)
    data = tomllib.loads((tmp_path / "config.toml").read_text(encoding="utf-8"))
    assert data == {"summarization": {"threshold": 30}}
    assert "not saved: context.window" in notes and str(tmp_path / "config.toml") in notes


async def test_a_quote_in_a_saved_value_round_trips(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.set_config_value("summarization.model", 'my "special" model')
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await settle(app, pilot)
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.loading_error is None
        assert app.view.baseline_config["summarization.model"] == 'my "special" model'


async def test_save_keeps_the_file_s_other_keys_and_refuses_to_replace_a_broken_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[harness]\nkeep_last = 4\n", encoding="utf-8")
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.set_config_value("summarization.max_injected", 2)
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
        app.set_config_value("summarization.max_injected", 2)
        await settle(app, pilot)
        app.set_profile("shifting")
        await settle(app, pilot)
        assert app.view.config.profile == "shifting"
        assert app.view.config["context.window"] == 200_000
        assert app.view.config["summarization.max_injected"] == 2
        assert not any(r.failed for r in app.view.requests)


async def test_edits_of_one_thread_do_not_leak_to_the_next(tmp_path):
    app = make_app(tmp_path, thread_id=WALKTHROUGH_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.set_config_value("context.response_reserve", 1024)
        await settle(app, pilot)
        assert app.view.is_what_if
        app.load_thread(HARNESS_ID)
        await settle(app, pilot)
        assert app.view.thread.id == HARNESS_ID
        assert not app.view.is_what_if
        assert app.view.config["context.response_reserve"] == 0


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
        assert not app.view.is_what_if and app.view.config["context.window"] == 200_000
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
        assert not app.view.is_what_if


async def test_demo_threads_open_under_their_own_profile(tmp_path):
    expected = {WALKTHROUGH_ID: "iris", ROLEPLAY_ID: "shifting", HARNESS_ID: "harness", OVERFLOW_ID: "iris"}
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for thread_id, profile in expected.items():
            app.load_thread(thread_id)
            await settle(app, pilot)
            assert (thread_id, app.view.config.profile) == (thread_id, profile)


# 4. Free ---------------------------------------------------------------------------------------------------

def _legend_row(text: str, label: str) -> list[str]:
    line = next(line for line in text.splitlines() if label in line)
    return line.split(label, 1)[1].split()


async def test_free_is_window_minus_prompt_minus_reserve_and_pruning_savings_sit_beside_it(tmp_path):
    app = make_app(tmp_path, thread_id=OVERFLOW_ID)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        index = max(range(len(app.view.requests)), key=lambda i: app.view.requests[i].budget.pruned_savings)
        app.jump_to_request(index)
        await pilot.pause()
        b = app.current_request.budget
        assert not app.current_request.failed and b.pruned_savings > b.window - b.prompt_tokens > 0
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
            for i, request in enumerate(app.view.requests):
                app.jump_to_request(i)
                if not request.failed:
                    assert request.budget.prompt_tokens <= chart.scale.budget, (thread_id, i)
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
