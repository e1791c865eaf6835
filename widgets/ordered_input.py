"""An Input whose editing keys take effect in the order they were typed.

Textual runs a focused widget's key bindings only once the key has bubbled up to the App, through
the message queue of every ancestor, while the Input inserts a printable key as soon as it gets it.
When keys come faster than the app handles them (a busy UI thread repainting an edit, a fast typist,
`tmux send-keys`), the terminal hands several over at once: `ctrl+a ctrl+k 6 0 enter` then inserted
"60" first and ran `delete_right_all` after it, leaving the field empty. `OrderedInput` runs its own
bindings (cursor moves, deletions, submit) when it gets the key, so each edit applies in turn; keys
it has no binding for bubble on as before (Tab, Escape, the app's keys).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from widgets.hidden_tab import QuietWhileHidden


class OrderedInput(QuietWhileHidden, Input):
    """`textual.widgets.Input` with its own bindings run in typing order."""

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls each class's `_on_key` down the MRO (Input's next) unless the default is prevented
        if event.is_printable:
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if binding.priority:
                continue  # priority bindings ran at the App, before the key came here
            if await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
