SMALL = {"codex.compact_user_tokens": 300}
REFERENCE = None
