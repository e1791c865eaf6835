SMALL = {"context_editing.trigger": 600, "context_editing.compact_trigger": 1500}
REFERENCE = None
WHAT_IFS = [{}, {"context_editing.trigger": 2_000, "context_editing.compact_trigger": 8_000}]
