import json

_THREAD = {"id": "t1", "title": "t", "source": "native", "messages": [{"id": "m1", "role": "user", "content": "hi"}]}
SAMPLES = [("threads.json", json.dumps({"format": "context-inspector/v1", "threads": [_THREAD]}))]
BAD = [("threads.json", json.dumps({"format": "context-inspector/v1",
                                    "threads": [{**_THREAD, "messages": [{"id": "m1", "role": "nobody"}]}]}))]
