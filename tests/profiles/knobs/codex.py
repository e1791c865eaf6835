SMALL = {"codex.compact_user_tokens": 300}
REFERENCE = None
WHAT_IFS = [{}, {"context.window": 30_000, "codex.compact_user_tokens": 500}]
