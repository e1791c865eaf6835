"""The shifting profile."""
