"""What the owner typed into a search box, as plain terms: never as query syntax.

A search string is hostile input like any other: FTS5 operators (`NEAR(`, `AND`, `-`,
`^`, `*` inside a word, column filters `text:`) and stray quotes must neither raise nor
change what is searched. So the text is cut into the same word tokens the index holds
(letters and digits; everything else separates), and only three things of what was typed
are kept as meaning: a `"quoted phrase"`, a trailing `*` for a prefix, and words. The
store turns these terms into its own syntax, quoting every token.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# The index's tokenizer (unicode61) keeps letters, digits and marks; `_` separates.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PIECE = re.compile(r'"([^"]*)"?|(\S+)')
MAX_TERMS = 24
MAX_TOKEN_CHARS = 64
MIN_PREFIX = 3

# Words that carry no meaning in a question; dropped from recall queries only (a search
# for "the who" still finds the band).
_STOPWORDS_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing don down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself
    yourselves tell know remember again please ok okay hey hi hello thanks thank also still
    like get got one something anything really"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True, slots=True)
class Term:
    """One or more tokens that must occur next to each other; `prefix`: the last may go on."""

    tokens: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    terms: tuple[Term, ...]

    @property
    def empty(self) -> bool:
        return not self.terms

    def words(self) -> list[str]:
        return [t for term in self.terms for t in term.tokens]


def tokens(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [t[:MAX_TOKEN_CHARS] for t in _TOKEN.findall(folded)]


def parse_query(text: str) -> SearchQuery:
    """Terms of a search box's text; an empty query when nothing searchable is left."""
    terms: list[Term] = []
    for match in _PIECE.finditer(text or ""):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            found = tokens(phrase)
            if found:
                terms.append(Term(tuple(found)))
        elif word is not None:
            found = tokens(word)
            if found:
                star = word.rstrip('"').endswith("*")
                # a prefix of one or two letters matches half the index and finds nothing useful
                terms.append(Term(tuple(found), prefix=star and len(found[-1]) >= MIN_PREFIX))
        if len(terms) >= MAX_TERMS:
            break
    return SearchQuery(tuple(dict.fromkeys(terms)))


def recall_query(text: str) -> SearchQuery:
    """The content words of a chat message, each its own term, for a ranked (any word) match."""
    seen: dict[str, None] = {}
    for token in tokens(text or ""):
        if token not in STOPWORDS and (len(token) > 1 or token.isdigit()):
            seen.setdefault(token, None)
        if len(seen) >= MAX_TERMS:
            break
    return SearchQuery(tuple(Term((t,)) for t in seen))
