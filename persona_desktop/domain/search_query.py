"""What the owner typed into a search box, as plain terms: never as query syntax.

A search string is hostile input like any other: FTS5 operators (`NEAR(`, `AND`, `-`,
`^`, `*` inside a word, column filters `text:`) and stray quotes must neither raise nor
change what is searched. Only three things of what was typed are kept as meaning: a
`"quoted phrase"`, a trailing `*` for a prefix, and words. Each term is folded like the
indexed text (`search_fold.fold`) and handed to the index's own tokenizer inside
quotes (the store quotes it), so the query's words are cut exactly as the indexed
text's were; `tokens` are the same words as Python sees them, for what is decided here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from persona_desktop.domain.search_fold import fold

# Letters and digits, as the index's tokenizer (unicode61) mostly sees them; `_` separates.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PIECE = re.compile(r'"([^"]*)"?|(\S+)')
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\s]+")  # a NUL would end FTS5's reading of the query
MAX_TERMS = 24
MAX_TOKEN_CHARS = 64
MAX_TERM_CHARS = 256
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
    """Words that must occur next to each other; `prefix`: the last may go on.

    `text` is what the index's tokenizer reads (the folded words as typed); `tokens` are
    those words cut by Python (whether anything is left, a prefix's length, stopwords).
    """

    text: str
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
    return [t[:MAX_TOKEN_CHARS] for t in _TOKEN.findall(fold(text))]


def _term(piece: str, prefix: bool = False) -> Term | None:
    text = _CONTROL.sub(" ", fold(piece)).strip()[:MAX_TERM_CHARS]
    found = tokens(text)
    if not found:
        return None
    # a prefix of one or two letters matches half the index and finds nothing useful
    return Term(text.rstrip('*"'), tuple(found), prefix=prefix and len(found[-1]) >= MIN_PREFIX)


def parse_query(text: str) -> SearchQuery:
    """Terms of a search box's text; an empty query when nothing searchable is left."""
    terms: list[Term] = []
    for match in _PIECE.finditer(text or ""):
        phrase, word = match.group(1), match.group(2)
        term = None
        if phrase is not None:
            term = _term(phrase)
        elif word is not None:
            term = _term(word, prefix=word.rstrip('"').endswith("*"))
        if term is not None:
            terms.append(term)
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
    return SearchQuery(tuple(Term(t, (t,)) for t in seen))
