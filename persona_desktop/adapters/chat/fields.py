"""Small checks shared by the chat importers: text, ids and refs."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from persona_desktop.adapters.chat.dates import Unreadable

MAX_ID = 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters escaped in a ref component: the separator, the escape itself, the brackets of
# the `[<ref>] text` document lines, and anything that would break a line. Everything
# else stays as it is, so the refs of earlier imports (`tg:42:1`, `chat:saved:999`) are
# byte for byte the same.
_REF_SPECIAL = frozenset("%:[]")
_REF_SPECIAL_RE = re.compile(r"[%:\[\]]")


def string(value: Any) -> str | None:
    """`value` if it is a string: lets a hostile file's lists and objects fail a set lookup safely."""
    return value if isinstance(value, str) else None


def plain(value: Any) -> str | int | bool | None:
    """A value kept in a locator as it came (a string, an integer, a flag or nothing), else as
    text: a JSON number with a fraction arrives as Decimal, which the store cannot save."""
    if value is None or isinstance(value, bool | int):
        return value
    return without_surrogates(value) if isinstance(value, str) else str(value)


def clean_text(text: str) -> str:
    """Lone surrogates (from `\\ud800` escapes) become U+FFFD; surrounding space goes."""
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    return text.strip()


def without_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _needs_escape(ch: str) -> bool:
    return (
        ch in _REF_SPECIAL or (ch.isspace() and ch != " ") or unicodedata.category(ch) in ("Cc", "Cf", "Cs")
    )


def ref_part(value: object) -> str:
    """One component of a ref, with ':' (and '%', '[', ']', control characters) escaped.

    Chat `a:b` with message `c` and chat `a` with message `b:c` get different refs.
    """
    text = str(value)
    if text.isprintable() and not _REF_SPECIAL_RE.search(text):
        return text  # the common case, at C speed: nothing to escape
    if not any(_needs_escape(ch) for ch in text):
        return text
    return "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")) if _needs_escape(ch) else ch
        for ch in text
    )


def make_ref(*parts: object) -> str:
    """`prefix:part:part...`: the first part is a fixed prefix, the rest escaped."""
    head, *rest = parts
    return ":".join([str(head), *(ref_part(p) for p in rest)])


def int_id(value: Any) -> int:
    """A numeric id (an int or a string of digits) within 64 bits.

    ValueError when it is not an id at all; Unreadable when it is out of range.
    """
    if isinstance(value, bool):
        raise ValueError("not a numeric id")
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,40}", value.strip()):
        value = int(value)
    if not isinstance(value, int):
        raise ValueError("not a numeric id")
    if abs(value) > MAX_ID:
        raise Unreadable(f"id {value} is out of range")
    return value


def text_id(value: Any) -> str | int:
    """An id that is a string or an integer (a JSONL or export message id)."""
    if isinstance(value, bool):
        raise ValueError("not an id")
    if isinstance(value, int):
        return int_id(value)
    if isinstance(value, str) and value.strip():
        if len(value) > 200:
            raise Unreadable("id longer than 200 characters")
        return without_surrogates(value)
    raise ValueError("not an id")
