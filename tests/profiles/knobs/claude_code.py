SMALL = {"claude_code.output_reserve": 0, "claude_code.autocompact_buffer": 200}
REFERENCE = None  # the agents' block audit has its reference in tests/reference/agents_audit.py
WHAT_IFS = [{}, {"context.window": 40_000}]
