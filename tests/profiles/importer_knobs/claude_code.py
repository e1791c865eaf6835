from tests.profiles.importer_knobs import jsonl


def _line(uuid, parent, kind, content):
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "S", "timestamp": "t",
            "message": {"role": kind, "content": content}}


SAMPLES = [("session.jsonl", jsonl(_line("u1", None, "user", "hello"), _line("a1", "u1", "assistant", "hi")))]
BAD = [("session.jsonl", jsonl(_line("u1", None, "user", "hello"), "{not json", _line("a1", "u1", "assistant", "hi")))]
