"""Gzipped real transcripts imported into the demo database (see SOURCES.md and LICENSES/)."""
