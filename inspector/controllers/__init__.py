"""What the app does besides drawing: replaying (baseline and what-if), tailing a live thread, writing files.

Each controller runs its work in the app's thread workers and hands results back to the app on the UI
thread; the app wires them to the widgets."""
