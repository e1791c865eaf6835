"""The harness profile."""
