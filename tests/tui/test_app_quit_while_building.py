"""Quitting while the Config form's rows are being made (`q` right after the first replay, which builds
the form, or right after opening the tab): the app waits for the rows, then ends cleanly. Textual
composes no children once an app is exiting, and a Select mounted then raised `NoMatches` from its
`_on_mount`: the app ended on a traceback (seen in the suite under load)."""

from __future__ import annotations

import asyncio

import pytest

from tests.tui.app_support import make_app, settle
from widgets.config_form import ConfigForm


@pytest.mark.parametrize("rounds", [1, 2, 3, 4])
async def test_an_exit_during_the_form_s_build_waits_for_its_rows(tmp_path, rounds):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        form = app.query_one(ConfigForm)
        building = asyncio.ensure_future(form.build())
        for _ in range(rounds):  # the build part way through its mounts (each round: one more step)
            await asyncio.sleep(0)
        assert form.composing
        app.exit()
        await building
        assert form.built and not form.composing
    assert app.return_code == 0  # ended by the exit, not by an error


async def test_q_as_the_config_tab_opens_ends_the_app_cleanly(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:  # raises what the app raised (the NoMatches)
        await settle(app, pilot)
        form = app.query_one(ConfigForm)
        assert not form.built
        await pilot.press("4", "q")  # the tab's form starts building, then the quit
    assert form.built
