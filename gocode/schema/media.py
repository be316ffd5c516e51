"""Which tools return images, audio or other non-text parts, and the runtime types they use."""

from __future__ import annotations

import re

from gocode.schema.names import (
    words,
)
from gocode.toolset import ToolInfo

RT_CONTENT = "gocodert.Content"
RT_MEDIA = "gocodert.Media"
MEDIA_DOC = "A result that may hold images, audio or other non-text parts."
MEDIA_PART_DOC = "One non-text part: its MIME type and raw bytes (decoded from base64)."
_MEDIA_WORDS = frozenset("image images screenshot screenshots picture photo audio thumbnail".split())
_FETCH_WORDS = frozenset("get take capture fetch read render download export screenshot".split())
_MEDIA_DESC = re.compile(r"(?i)\b(returns?|captures?)\b[^.|]{0,25}?\b(images?|screenshots?|audio|png|jpe?g)\b")


def returns_media(info: ToolInfo) -> bool:
    """Whether a tool without an output schema is expected to answer with non-text parts: its
    name fetches an image or audio (``get_tiny_image``, ``take_screenshot``) or its first
    sentence says it returns one. MCP has no declaration for this; a wrong guess costs little,
    since Content carries the text as well."""
    if isinstance(info.output_schema, dict):
        return False
    named = [w.lower() for w in words(info.name)]
    if "screenshot" in named or (_MEDIA_WORDS & set(named) and _FETCH_WORDS & set(named)):
        return True
    first = (info.description or "").split(". ", 1)[0]
    return bool(_MEDIA_DESC.search(first))


# --- helpers ----------------------------------------------------------------------------------
