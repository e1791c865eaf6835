"""Tokenizers: chars4, offline tiktoken encodings checked against their sha256, the cache."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from inspector.encodings import PUBLISHED_SHA256, EncodingDataError, load_ranks
from inspector.model import Message, Role, ToolCall, ToolDef
from inspector.pipeline.profiles import REGISTRY
from inspector.tokens import (
    Chars4Tokenizer,
    TokenCounter,
    get_tokenizer,
    message_cost,
    tools_cost,
)


def test_chars4_is_ceil_of_chars_over_4():
    assert Chars4Tokenizer().count_many(["", "a", "abcd", "abcde", "x" * 401]) == [0, 1, 1, 2, 101]


def test_profile_overheads():
    overhead = {name: profile.message_overhead for name, profile in REGISTRY.items()}
    assert {k: overhead[k] for k in ("iris", "harness", "shifting")} == {"iris": 0, "harness": 10, "shifting": 4}
    assert all(overhead[k] == 0 for k in ("claude-code", "codex", "opencode", "anthropic-context-editing"))  # in the ratio
    counter = TokenCounter(Chars4Tokenizer())
    m = Message("m", Role.USER, "Inspect the parser and preserve its public API.")  # 47 chars
    assert message_cost(counter, m, overhead["iris"]) == 12
    assert message_cost(counter, m, overhead["harness"]) == 22
    assert message_cost(counter, m, overhead["shifting"]) == 16


def test_tool_call_arguments_and_definitions_count_as_json():
    counter = TokenCounter(Chars4Tokenizer())
    call = ToolCall("c1", "read_file", {"path": "src/app.py"})
    m = Message("a", Role.ASSISTANT, "", tool_calls=(call,))
    assert m.text_for_count() == 'read_file\n{"path": "src/app.py"}'
    assert message_cost(counter, m, 0) == -(-len(m.text_for_count()) // 4)
    tool = ToolDef("read_file", "Read a file.", {"type": "object"})
    assert tools_cost(counter, [tool]) == -(-len(tool.as_json()) // 4)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_encodings_exact_and_match_known_counts(name):
    tok = get_tokenizer(name)
    assert tok.approximate is False
    # Known counts: "hello world" is 2 tokens in both; the special token text is not special here.
    assert tok.count_many(["hello world"]) == [2]
    assert tok.count_many(["<|endoftext|>"])[0] > 1
    many = ["def f(x):\n    return x * 2\n"] * 100
    assert tok.count_many(many) == [tok.count_many([many[0]])[0]] * 100


def test_encoding_data_checked_against_published_sha256():
    assert set(PUBLISHED_SHA256) == {"cl100k_base", "o200k_base"}
    ranks = load_ranks("cl100k_base")
    assert len(ranks) == 100256
    with pytest.raises(EncodingDataError):
        load_ranks("p50k_base")


def test_encodings_load_with_networking_unavailable(tmp_path):
    """A fresh process whose sockets all fail still builds both encodings."""
    script = textwrap.dedent(
        """
        import socket
        def refuse(*a, **k):
            raise OSError("network disabled by test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from inspector.tokens import get_tokenizer
        for name in ("cl100k_base", "o200k_base"):
            print(name, get_tokenizer(name).count_many(["hello world, offline"])[0])
        """
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cl100k_base" in out.stdout and "o200k_base" in out.stdout
    assert not (tmp_path / "empty-cache").exists()


class _CountingTokenizer:
    name = "counting"
    approximate = True

    def __init__(self):
        self.seen: list[str] = []

    def count_many(self, texts):
        self.seen.extend(texts)
        return [len(t) for t in texts]


def test_counter_counts_each_distinct_text_once():
    tok = _CountingTokenizer()
    counter = TokenCounter(tok)
    assert counter.count_all(["a", "bb", "a", "bb", "ccc"]) == [1, 2, 1, 2, 3]
    assert counter.count("bb") == 2
    assert sorted(tok.seen) == ["a", "bb", "ccc"]


class _DictCache:
    def __init__(self):
        self.data: dict[tuple[str, str], int] = {}

    def get_many(self, tokenizer, texts):
        return {t: self.data[(tokenizer, t)] for t in texts if (tokenizer, t) in self.data}

    def put_many(self, tokenizer, counts):
        for t, n in counts.items():
            self.data[(tokenizer, t)] = n


def test_persistent_cache_is_consulted_before_the_tokenizer():
    cache = _DictCache()
    first = _CountingTokenizer()
    TokenCounter(first, persistent=cache).count_all(["x", "yy"])
    second = _CountingTokenizer()
    assert TokenCounter(second, persistent=cache).count_all(["yy", "x", "zzz"]) == [2, 1, 3]
    assert second.seen == ["zzz"]
