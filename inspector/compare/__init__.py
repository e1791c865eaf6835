"""Replays compared: a baseline against a what-if replay (`between_replays`), and one request against
the one before it (`between_requests`). Pure: frozen dataclasses in, frozen dataclasses out."""
