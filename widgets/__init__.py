"""Textual widgets of context-inspector: they render model and audit objects and never touch a database."""
