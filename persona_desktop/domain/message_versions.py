"""Versions of an edited chat message: their refs, and which one is the owner's last word.

A chat message imported again with other text (an edit) is stored beside its first text,
never over it (services.ingest): under `<message ref>:v:<digest of the new text>`. So one
message can have several stored texts. The one stored last is what its author says now;
an earlier one stays as it was for the facts already drawn from it, but it no longer
speaks for the owner: a claim grounded only in wording the owner has since replaced
("I live in Berlin", edited to "I live in Munich") is not in the owner's own words.
"""

from __future__ import annotations

import hashlib
import re

VERSION_MARK = ":v:"
_VERSION = re.compile(r"(?s)(.+):v:[0-9a-f]{12}")


def version_ref(ref: str, text: str) -> str:
    """The ref of `text` as an edited version of the message stored under `ref`.

    Importers' refs are escaped parts joined by ':' with a fixed number of parts per
    format, so `<ref>:v:<digest>` is never another message's ref.
    """
    return f"{ref}{VERSION_MARK}{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def message_ref(ref: str) -> str:
    """The ref of the message a stored text belongs to: itself, or what a version edits."""
    match = _VERSION.fullmatch(ref)
    return match.group(1) if match else ref
