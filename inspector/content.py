"""Provider content blocks as the text a thread holds.

Content flattening (every format): text blocks are joined with a newline into `content`;
`thinking` blocks are kept in `meta["thinking"]` (a list of texts, not counted as prompt
text, since providers drop earlier thinking from later prompts) and `redacted_thinking` blocks
are counted in `meta["redacted_thinking"]`; an image or document block becomes the
placeholder `[image]` / `[document]` in the text and its media type goes to `meta["attachments"]`;
any other block is kept as JSON in `meta["other_blocks"]`. Tool-result content lists flatten the
same way. Nothing is dropped without a trace.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""


def flatten_blocks(content: Any, meta: dict[str, Any]) -> str:
    """Text of a string or a list of content blocks; non-text blocks recorded in `meta` (see module doc)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, _MAPPING):
        content = [content]
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, _MAPPING):
            meta.setdefault("other_blocks", []).append(block)
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") or (kind is None and isinstance(block.get("text"), str)):
            parts.append(str(block.get("text") or ""))
        elif kind == "thinking":
            meta.setdefault("thinking", []).append(str(block.get("thinking") or ""))
        elif kind == "redacted_thinking":
            meta["redacted_thinking"] = int(meta.get("redacted_thinking", 0)) + 1
        elif kind in ("image", "input_image", "image_url", "document"):
            label = "document" if kind == "document" else "image"
            parts.append(f"[{label}]")
            source = block.get("source") if isinstance(block.get("source"), Mapping) else {}
            meta.setdefault("attachments", []).append(
                {"type": label, "media_type": source.get("media_type") if source else None}
            )
        elif kind == "tool_result":
            parts.append(flatten_blocks(block.get("content"), meta))
        else:
            meta.setdefault("other_blocks", []).append(dict(block))
    return "\n".join(p for p in parts if p)
