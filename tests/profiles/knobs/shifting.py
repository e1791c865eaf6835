SMALL = {"context.response_reserve": 64}
COMPACTS = False  # it trims to its budget on every request: no compaction to place
REFERENCE = None  # tests/engine/test_shifting_fast.py compares its fast path with its own slow path
WHAT_IFS = [{"context.strategy": s, "context.window": w} for s in ("truncate", "summarize", "vector-recall", "manual")
            for w in (8192, 2048)]
