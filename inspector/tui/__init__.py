"""The TUI floor above the screens and the controllers: the main screen, which owns the view and the
selection and runs the controllers (`inspector.app.InspectorApp` returns it from `get_default_screen`)."""
