SMALL = {}
REFERENCE = None
WHAT_IFS = [{}, {"context.window": 30_000}]
