"""Normalized keys: how two statements or two fragments are recognized as the same."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[\w']+", re.UNICODE)
_NEGATION = {"not", "no", "never", "don't", "doesn't", "isn't", "aren't", "wasn't", "won't", "can't"}
_FILLER = {"the", "a", "an", "owner", "user", "i", "i'm", "my", "me", "is", "am", "are", "does", "do"}


def words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return _WORD.findall(folded)


def statement_key(statement: str) -> str:
    """Same key for statements that differ only in case, punctuation or spacing."""
    return " ".join(words(statement))


def core_words(statement: str) -> frozenset[str]:
    return frozenset(w for w in words(statement) if w not in _FILLER and w not in _NEGATION)


def is_negated(statement: str) -> bool:
    return any(w in _NEGATION for w in words(statement))


def contradicts(a: str, b: str) -> bool:
    """A cheap, deterministic contradiction test: same content words, opposite polarity.

    "I drink coffee" vs "I don't drink coffee". The model may also name the fact a
    candidate updates; this check catches the plain negations it forgets to name.
    """
    if is_negated(a) == is_negated(b):
        return False
    ca, cb = core_words(a), core_words(b)
    return bool(ca) and ca == cb
