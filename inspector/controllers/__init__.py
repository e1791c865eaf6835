"""What the main screen does besides drawing: replaying (baseline and what-if), tailing a live thread,
filling the panes, tracking losses, writing files.

Each controller runs its work in thread workers of the screen that owns it (`InspectorHost`) and hands
the results over as messages (`inspector.screens.messages`), which the screen handles on the UI thread."""
