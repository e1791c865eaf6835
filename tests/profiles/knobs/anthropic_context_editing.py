SMALL = {"context_editing.trigger": 600, "context_editing.compact_trigger": 1500}
REFERENCE = None
