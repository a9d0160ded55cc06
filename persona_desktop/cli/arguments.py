"""Numbers as the owner types them on the command line: row ids and counts, ASCII digits only."""

from __future__ import annotations

import argparse

from persona_desktop.errors import PersonaError

MAX_ID = 2**63 - 1  # SQLite's largest integer


def int_id(value: str | None, what: str) -> int:
    """A row id as the owner typed it: ASCII digits only ("²" and "٣" are digits to str.isdigit)."""
    text = (value or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > MAX_ID:
        raise PersonaError(f"expected a {what} id (a whole number like 12), got {value!r}")
    return int(text)


def count(text: str) -> int:
    """argparse type for --limit: a whole number from 0 to a billion."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or len(value) > 10 or int(value) > 1_000_000_000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 1000000000, got {text!r}")
    return int(value)
