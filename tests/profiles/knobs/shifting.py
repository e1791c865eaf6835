SMALL = {"context.response_reserve": 64}
COMPACTS = False  # it trims to its budget on every request: no compaction to place
REFERENCE = None  # tests/test_shifting_fast.py compares its fast path with its own slow path
