"""Text that can always be stored and printed: lone UTF-16 surrogates replaced.

A Python string may hold a lone surrogate (from a JSON ``"\\ud800"`` escape in a chat
export or in a model's reply); SQLite, a terminal or a file cannot encode it
(UnicodeEncodeError). Every string that reaches the store passes through here:
valid surrogate pairs are joined into their character, lone ones become U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def clean_text(text: str) -> str:
    if _SURROGATE.search(text) is None:  # the common case: one regex scan, no copy
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_value(value: Any) -> Any:
    """`clean_text` through a JSON-like value (dicts, lists, tuples; keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    return value
