"""The app's exit, once the Config form's rows are made where a build is under way.

`q` right after the first replay (which builds the form) or right after opening the Config tab: once an app
is exiting, Textual composes no more children (textual pinned in pyproject.toml: `Widget.mount_composed`),
so a Select being mounted got none and raised `NoMatches` from its `_on_mount`, and the app ended on a
traceback. The exit (and a shutdown that comes without it, a test's `run_test` ending) waits for the rows.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App

from widgets.config_form import ConfigForm


class ExitAfterTheForm(App[None]):
    """Mixed into the app before `textual.app.App`; reads the app's `_main_screen`."""

    _exit_waits: asyncio.Future | None = None  # an exit waiting for the form's rows (a task must be held)

    def exit(self, result: None = None, return_code: int = 0, message: Any = None) -> None:
        """Textual's exit, once the Config form's rows are made where a build is under way (`q` right after
        the first replay, or after opening the tab): once an app is exiting, Textual composes no more
        children (textual pinned in pyproject.toml: `Widget.mount_composed`), so a Select being mounted
        got none and raised from its `_on_mount` (`NoMatches`), and the app ended on a traceback."""
        form = self._form_composing()
        if form is None:
            super().exit(result, return_code, message)
            return

        async def when_composed() -> None:
            await form.composed()
            self.exit(result, return_code, message)

        self._exit_waits = asyncio.ensure_future(when_composed())  # kept: a task nothing holds may be collected

    async def _shutdown(self) -> None:
        """Textual's shutdown, where it comes without `exit` (a test's `run_test` ending), after the form's
        rows are made too (`exit`)."""
        form = self._form_composing()
        if form is not None:
            await form.composed()
        await super()._shutdown()

    def _form_composing(self) -> Any:
        screen = getattr(self, "_main_screen", None)
        if screen is None or not screen.is_mounted:
            return None
        forms = screen.query(ConfigForm)
        form = forms.first() if forms else None
        return form if form is not None and form.composing else None

