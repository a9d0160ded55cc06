"""The one folding of text for search, applied to both sides: what the index holds and
what a query looks for.

SQLite's unicode61 tokenizer lowercases and drops Latin diacritics, but it knows no
compatibility forms (the ligature "ﬁ", full-width "Ｐ", "²") and no full case folding
("ß" stays "ß", so "Hauptstrasse" never finds "Hauptstraße"), and it treats a
precomposed letter and its decomposed spelling differently. Python's NFKC and casefold
know all of these. So the text is folded here before the tokenizer sees it, on both
sides: the store indexes `index_text(text)` (or the text itself when folding would not
change its words) and a query is folded with `fold`; the tokenizer then cuts both the
same way.

The folding: NFKC, full case folding, NFKC again (casefold may undo it); Latin letters
lose their diacritics (é -> e, İ -> i, ş -> s), as unicode61 would, and the few Latin
letters that have no decomposition are spelled as an ASCII keyboard would (ł -> l,
ø -> o, æ -> ae); other scripts keep theirs (й, ё and ά stay), except a combining accent
that no letter absorbs (a stress mark over a Cyrillic vowel), which unicode61 drops too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_COMBINING = "\u0300-\u036f"  # the Combining Diacritical Marks block
_LATIN_MARKS = re.compile(f"(?<=[a-z])[{_COMBINING}]+")
_LEFT_MARKS = re.compile(f"[{_COMBINING}]")
# Latin letters with a stroke or a ligature, which no normalization takes apart.
_LETTERS = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ð": "d", "æ": "ae", "œ": "oe", "þ": "th"}
)
# What continues a character for composition: combining marks, Hangul vowel and final jamo.
_CONTINUES = re.compile("[\u1160-\u11ff\ud7b0-\ud7ff]")


def fold(text: str) -> str:
    """The text as search compares it: NFKC, case-folded, Latin diacritics removed."""
    if text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    bare = _LATIN_MARKS.sub("", unicodedata.normalize("NFD", folded))
    return _LEFT_MARKS.sub("", unicodedata.normalize("NFC", bare)).translate(_LETTERS)


def index_text(text: str) -> str | None:
    """What the full-text index should hold for `text`: None when the text itself will do.

    ASCII text needs no folding (the tokenizer lowercases ASCII exactly like `fold`), nor
    does text that folding leaves unchanged."""
    if text.isascii():
        return None
    folded = fold(text)
    return None if folded == text else folded


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """A character with what composes with it (the marks and jamo that follow it)."""
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not _continues(text[i]):
            yield start, i
            start = i


def _continues(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M") or _CONTINUES.match(ch) is not None


def original_spans(text: str, folded_spans: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """Spans of `fold(text)` as spans of `text`, widened to whole characters ("ß" for "ss").

    Folding character by character must give `fold(text)` for the spans to be exact;
    where it does not (a composition across characters), None: no highlight rather than
    a wrong one."""
    origin: list[tuple[int, int]] = []
    if text.isascii():  # folded character by character, in place
        origin = [(i, i + 1) for i in range(len(text))]
    else:
        pieces = []
        for a, b in _clusters(text):
            piece = fold(text[a:b])
            pieces.append(piece)
            origin.extend([(a, b)] * len(piece))
        if "".join(pieces) != fold(text):
            return None
    out: list[tuple[int, int]] = []
    for a, b in sorted(folded_spans):
        if not 0 <= a < b <= len(origin):
            continue
        start, end = origin[a][0], origin[b - 1][1]
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out
