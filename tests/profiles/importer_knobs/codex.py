from tests.profiles.importer_knobs import jsonl


def _line(kind, payload):
    return {"timestamp": "t", "type": kind, "payload": payload}


_USER = _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
SAMPLES = [("rollout.jsonl", jsonl(_line("session_meta", {"id": "sess"}), _line("turn_context", {"model": "gpt-x"}),
                                   _USER))]
BAD = [("rollout.jsonl", jsonl(_line("session_meta", {"id": "sess"}), "{\"type\": \"response_item\", \"payload\": [",
                               _USER))]
