"""Grounding: is what a candidate asserts said by the owner, in the owner's own words?

The model is assumed hostile (DESIGN.md, phase 3): it may obey words injected by
others, cite an unrelated line of the owner's as cover, or add what nobody said. So
a candidate about the owner is *grounded* only when one sentence the owner wrote on
a trusted channel holds every key term of the statement, and says it the same way:

- key terms are the statement's names, numbers, dates and content words, after a
  light normalization (case, possessives, inflection: "lives"/"live"/"living",
  number words: "two" = "2"); function words and the words that only point at the
  owner ("the owner", "user", "their") are not key terms;
- the sentence is an assertion, not a question, and the terms are not only inside a
  quotation ("Bob said: \"...\"") or a quoted reply line ("> ...");
- the sentence speaks about the owner: a first-person subject ("I", "we", "my job"),
  and no "my brother ..." unless the statement is about that brother too;
- the same polarity ("not", "never", "no longer"), and no hedge ("maybe", "want",
  "if") or past marker ("used to") of the sentence dropped by the statement.

Deterministic and cheap (string work only), and explainable: `ground` returns the
reason in words the owner reads ("'Mallory' appears only in Alice's message").
Statements it cannot ground (paraphrase, another language) wait for the owner,
which is the safe side. The bench `bench/bench_trust.py` measures both sides.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

# --- words ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\d+(?:[.,:/]\d+)*(?:st|nd|rd|th)?"  # numbers, dates, times: 3rd, 8:15, 1,000, 12/05
    r"|[^\W\d_]+(?:'[^\W\d_]+)*"  # words, with their clitics: don't, owner's
    # anything else that is not space or punctuation (emoji, letter-like symbols, invisible
    # format characters): a term of its own, so that no claim hides in characters no word has
    r"|[^\w\s.,;:!?'\"“”‘’«»„()\[\]{}<>/\\|&%$€£¥+*#@=~^`\-–—…]+",
    re.UNICODE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# a period after these is no sentence end: "Dr. Silva", "J. Smith", "e.g. this"
_ABBREVIATION = re.compile(
    r"(?:\b(?:dr|mr|mrs|ms|prof|st|sr|jr|mt|vs|etc|e\.g|i\.e|approx|no|nr|ca)|\b[a-z])\.$", re.IGNORECASE
)
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]|‘[^’\n]{3,}’")

NEGATIONS = frozenset(
    {"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "without", "anymore", "cannot"}
)
HEDGES = frozenset(
    {
        "maybe", "perhaps", "probably", "possibly", "might", "may", "could", "would", "should",
        "if", "unless", "whether", "someday", "unsure", "wanna", "want", "wants", "wanting",
        "wish", "wishes", "wishing", "hope", "hopes", "hoping", "plan", "plans", "planning",
        "consider", "considers", "considering", "think", "thinks", "thinking", "guess", "suppose",
        "dream", "dreams", "dreaming", "try", "tries", "trying", "wonder", "wondering",
    }
)  # fmt: skip
PAST = frozenset({"formerly", "previously", "former", "ex", "used_to"})

# Words that only point at the owner, or at nobody in particular: never key terms.
_OWNER_WORDS = frozenset(
    {"owner", "user", "person", "individual", "they", "them", "their", "theirs", "themself", "themselves",
     "he", "him", "his", "she", "her", "hers", "himself", "herself", "it", "its", "itself"}
)  # fmt: skip
_FIRST_PERSON_SUBJECT = frozenset({"i", "we", "myself", "ourselves", "mine", "ours"})
_POSSESSIVE_FIRST = frozenset({"my", "our"})
_FUNCTION_WORDS = frozenset(
    {
        # articles, determiners, pronouns
        "a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "both", "either",
        "such", "own", "other", "another", "same", "me", "my", "us", "our", "you", "your", "yours",
        "who", "whom", "whose", "which", "what", "when", "where", "why", "how", "there", "here",
        "one", "ones", "something", "someone", "somebody", "anything", "anyone", "everything",
        # auxiliaries and copulas (lemmas; see _IRREGULAR)
        "be", "have", "do", "will", "shall", "can", "must", "get", "let", "make_do",
        # prepositions and conjunctions
        "of", "in", "on", "at", "to", "for", "with", "from", "by", "about", "as", "into", "onto",
        "over", "under", "after", "before", "since", "during", "than", "then", "near", "around",
        "through", "across", "between", "among", "upon", "within", "via", "per", "up", "down",
        "out", "off", "and", "or", "but", "so", "yet", "because", "also", "too", "while",
        "until", "till", "though", "although", "like_as",
        # glue adverbs a model adds without changing the claim
        "currently", "now", "usually", "regularly", "typically", "generally", "really", "very",
        "actually", "just", "still", "already", "recently", "lately", "quite", "pretty", "much",
        "more", "most", "well", "indeed", "all", "every", "often", "frequently", "even", "ok",
        "okay", "yes", "yeah", "oh", "lol", "hey", "hi", "hello", "please", "thanks", "thank",
        "btw", "anyway", "right", "sure", "etc",
    }
)  # fmt: skip
RELATIONS = frozenset(
    {
        "mother", "mom", "mum", "mama", "father", "dad", "papa", "parent", "brother", "sister",
        "sibling", "son", "daughter", "child", "kid", "baby", "wife", "husband", "partner",
        "spouse", "girlfriend", "boyfriend", "fiance", "fiancee", "friend", "colleague",
        "coworker", "boss", "manager", "neighbor", "neighbour", "roommate", "flatmate", "uncle",
        "aunt", "cousin", "nephew", "niece", "grandma", "grandpa", "grandmother", "grandfather",
        "grandparent", "grandson", "granddaughter", "family", "team", "client", "teacher",
        "student", "doctor", "therapist", "landlord", "ex_partner",
    }
)  # fmt: skip

_IRREGULAR: dict[str, str] = {
    # be / have / do / modal forms (function words once mapped)
    "is": "be", "am": "be", "are": "be", "was": "be", "were": "be", "been": "be", "being": "be",
    "has": "have", "had": "have", "having": "have", "does": "do", "did": "do", "done": "do",
    "doing": "do", "gets": "get", "got": "get", "gotten": "get", "getting": "get",
    "lets": "let", "letting": "let",
    # common irregular verbs
    "went": "go", "gone": "go", "goes": "go", "going": "go", "made": "make", "makes": "make",
    "making": "make", "took": "take", "taken": "take", "ate": "eat", "eaten": "eat",
    "drank": "drink", "drunk": "drink", "bought": "buy", "saw": "see", "seen": "see",
    "came": "come", "knew": "know", "known": "know", "felt": "feel", "left": "leave",
    "met": "meet", "began": "begin", "begun": "begin", "ran": "run", "wrote": "write",
    "written": "write", "spoke": "speak", "spoken": "speak", "grew": "grow", "grown": "grow",
    "gave": "give", "given": "give", "thought": "think", "taught": "teach", "flew": "fly",
    "flown": "fly", "drove": "drive", "driven": "drive", "swam": "swim", "swum": "swim",
    "sold": "sell", "built": "build", "kept": "keep", "slept": "sleep", "spent": "spend",
    "lost": "lose", "found": "find", "won": "win", "became": "become", "sang": "sing",
    "sung": "sing", "told": "tell", "said": "say", "says": "say", "paid": "pay", "brought": "bring",
    "caught": "catch", "fought": "fight", "held": "hold", "heard": "hear", "led": "lead",
    "read": "read", "rode": "ride", "ridden": "ride", "chose": "choose", "chosen": "choose",
    "broke": "break", "broken": "break", "forgot": "forget", "forgotten": "forget",
    "understood": "understand", "wore": "wear", "worn": "wear", "stood": "stand",
    "sat": "sit", "lay": "lie", "fell": "fall", "fallen": "fall",
    # irregular plurals
    "people": "person", "children": "child", "kids": "kid", "men": "man", "women": "woman",
    "feet": "foot", "teeth": "tooth", "mice": "mouse", "wives": "wife",
    # spelling variants the model normalizes to
    "favourite": "favorite", "colour": "color", "neighbour": "neighbor", "mum": "mom",
    "mommy": "mom", "mummy": "mom", "daddy": "dad", "fiancée": "fiancee", "fiancé": "fiance",
}  # fmt: skip

_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
    )
} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000", "first": "1",
    "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7",
    "eighth": "8", "ninth": "9", "tenth": "10", "dozen": "12",
}  # fmt: skip
_CLITICS = (("n't", "not"), ("'m", "be"), ("'re", "be"), ("'ve", "have"), ("'ll", "will"), ("'d", "would"))
_CONTRACTION_BASE = {"ca": "can", "wo": "will", "sha": "shall", "ai": "be"}


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("’", "'").replace("`", "'")


def _stem(word: str) -> str:
    """A light English stemmer: the same key for live/lives/lived/living, city/cities, use/uses.

    Not a full stemmer on purpose: it only removes inflections, so that two different
    words rarely meet; a final "e" is dropped after the rest so that "live" and
    "living" meet at "liv".
    """
    w = word
    if len(w) > 4 and w.endswith(("ies", "ied")):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = _undouble(w[:-3])
    elif len(w) > 4 and w.endswith("ed"):
        w = _undouble(w[:-2])
    elif len(w) > 3 and w.endswith("es") and w[:-2].endswith(("ss", "x", "z", "ch", "sh", "o")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")):
        w = w[:-1]
    for suffix, root in _DERIVATIONS:  # allergic/allergy, prefer/preference, intolerant/intolerance
        if w.endswith(suffix) and len(w) - len(suffix) + len(root) >= 4:
            w = w[: -len(suffix)] + root
            break
    if len(w) > 2 and w.endswith("e"):
        w = w[:-1]
    return w


_DERIVATIONS = (
    ("ical", ""), ("ence", ""), ("ance", ""), ("ency", ""), ("ancy", ""), ("ent", ""), ("ant", ""),
    ("ic", ""), ("gy", "g"),
)  # fmt: skip


def _undouble(w: str) -> str:
    if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1].isalpha():
        return w[:-1]
    return w


@dataclass(frozen=True, slots=True)
class Word:
    """One word as written (`surface`) and the key it is compared by."""

    surface: str
    key: str
    lemma: str  # before stemming: the word class checks (function word, marker) read this
    possessive: bool = False  # written "Mallory's"


def words_of(text: str) -> list[Word]:
    """Tokenize and normalize; clitics become their own words ("don't" -> do, not)."""
    out: list[Word] = []
    folded = _fold(text)
    for m in _TOKEN.finditer(folded):
        surface = m.group(0)
        low = surface.casefold()
        if low[0].isdigit():
            out.append(Word(surface, _number_key(low), _number_key(low)))
            continue
        extra: list[str] = []
        for clitic, meaning in _CLITICS:
            if low.endswith(clitic) and len(low) > len(clitic):
                low = low[: -len(clitic)]
                low = _CONTRACTION_BASE.get(low, low) if clitic == "n't" else low
                extra.append(meaning)
                break
        possessive = low.endswith("'s")
        if possessive:
            low = low[:-2]
        low = low.strip("'")
        if not low:
            continue
        lemma = _IRREGULAR.get(low, low)
        lemma = _NUMBER_WORDS.get(lemma, lemma)
        key = lemma if lemma[0].isdigit() else _stem(lemma)
        out.append(Word(surface, key, lemma, possessive))
        out.extend(Word(surface, e, e) for e in extra)
    return _join_markers(out)


def _join_markers(words: list[Word]) -> list[Word]:
    """Two-word markers read as one: "used to" (past), "no longer" (negation)."""
    out: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if nxt is not None and w.lemma == "used" and nxt.lemma == "to":
            out.append(Word(f"{w.surface} {nxt.surface}", "used_to", "used_to"))
            i += 2
            continue
        if nxt is not None and w.lemma == "no" and nxt.lemma == "longer":
            out.append(Word(f"{w.surface} {nxt.surface}", "not", "not"))
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def _number_key(token: str) -> str:
    t = re.sub(r"(st|nd|rd|th)$", "", token)
    if re.fullmatch(r"\d{1,3}(,\d{3})+", t):
        t = t.replace(",", "")
    if re.fullmatch(r"\d+\.0+", t):
        t = t.split(".")[0]
    return (t.lstrip("0") or "0") if t.isdigit() else t


def _is_marker(lemma: str) -> bool:
    return lemma in NEGATIONS or lemma in HEDGES or lemma in PAST


def is_key_term(word: Word) -> bool:
    lemma = word.lemma
    if word.key[0].isdigit():
        return True
    if lemma in _FUNCTION_WORDS or lemma in _OWNER_WORDS or lemma in _FIRST_PERSON_SUBJECT:
        return False
    if lemma == "may" and word.surface[:1].isupper():
        return True  # the month
    if _is_marker(lemma) or lemma == "not":
        return False
    return len(lemma) > 1 or not lemma.isalpha()  # "5" and "🍕" count, "a" does not


def key_terms(statement: str) -> list[Word]:
    """The statement's words that must be grounded, first occurrence of each key."""
    seen: set[str] = set()
    out: list[Word] = []
    for w in words_of(statement):
        if is_key_term(w) and w.key not in seen:
            seen.add(w.key)
            out.append(w)
    return out


# --- sentences ------------------------------------------------------------------------

_RELATION_KEYS = {_stem(r): r for r in RELATIONS}


def _relation(word: Word | None) -> str | None:
    if word is None:
        return None
    if word.lemma in RELATIONS:
        return word.lemma
    return _RELATION_KEYS.get(word.key)


_CLAUSE_BREAK = re.compile(
    r"[,;:](?=\s|$)|[()\u2014\u2013]|\s-\s|\b(?:but|so|and|because|although|though|while|whereas|or)\b",
    re.IGNORECASE,
)
_CONDITIONALS = frozenset({"if", "unless", "whether"})  # they hedge the whole sentence


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of one evidence fragment, read for grounding.

    Polarity, hedges and past markers count in the clauses that hold the claim's
    terms ("I am allergic to peanuts, so never suggest peanut dishes" is not a
    negation of the allergy); a conditional ("if") counts for the whole sentence.
    """

    text: str
    words: tuple[Word, ...]
    clause: tuple[int, ...]  # the clause of each word
    first_at: dict[str, int]  # each key, at its first position
    question: bool
    conditional: str | None
    first_person: bool  # "I", "we", "my job": the owner speaks about themself
    relations: tuple[tuple[str, int], ...]  # "my sister" -> ("sister", position)
    quoted_keys: frozenset[str]  # keys found only inside quotations
    possessive_only: frozenset[str]  # keys only ever written "X's": "I'm Mallory's friend"

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.first_at)

    def holds(self, term: Word) -> bool:
        """The term is in the sentence, and not only as someone's ("Mallory's") where the
        statement names it on its own ("The owner is Mallory")."""
        return term.key in self.first_at and (term.possessive or term.key not in self.possessive_only)

    def marker(self, kind: frozenset[str], keys: Sequence[str]) -> str | None:
        """The first `kind` word in the clauses where `keys` first appear."""
        clauses = {self.clause[self.first_at[k]] for k in keys if k in self.first_at}
        found = _marker([w for w, c in zip(self.words, self.clause, strict=True) if c in clauses], kind)
        if found is None and kind is HEDGES:
            return self.conditional
        return found


def _marker(words: Sequence[Word], kind: frozenset[str]) -> str | None:
    for w in words:
        if w.lemma in kind:
            if kind is HEDGES and w.lemma == "may" and w.surface[:1].isupper():
                continue  # "May" with a capital is the month
            return w.surface
    return None


_NEGATION_WORDS = NEGATIONS | {"not"}


def read_sentence(text: str) -> Sentence:
    stripped = text.strip()
    inside = " ".join(m.group(0) for m in _QUOTED.finditer(stripped))
    outside = _QUOTED.sub(" ", stripped)
    if outside.lstrip().startswith(">"):  # a quoted reply line
        inside, outside = inside + " " + outside, ""
    words: list[Word] = []
    clause: list[int] = []
    for index, part in enumerate(_CLAUSE_BREAK.split(outside)):
        found = words_of(part)
        words += found
        clause += [index] * len(found)
    first_at: dict[str, int] = {}
    for i, w in enumerate(words):
        first_at.setdefault(w.key, i)
    relations: list[tuple[str, int]] = []
    first_person = False
    for i, w in enumerate(words):
        if w.lemma in _FIRST_PERSON_SUBJECT:
            first_person = True
        elif w.lemma in _POSSESSIVE_FIRST:
            rel = next((r for x in words[i + 1 : i + 4] if (r := _relation(x)) is not None), None)
            if rel is None:
                first_person = True  # "my job", "my favorite color"
            else:
                relations.append((rel, i))
    return Sentence(
        text=stripped,
        words=tuple(words),
        clause=tuple(clause),
        first_at=first_at,
        question=stripped.rstrip("\"'”»)] ").endswith("?"),
        conditional=_marker(words, _CONDITIONALS),
        first_person=first_person,
        relations=tuple(relations),
        quoted_keys=frozenset({w.key for w in words_of(inside)} - first_at.keys()),
        possessive_only=frozenset(k for k in first_at if all(w.possessive for w in words if w.key == k)),
    )


@lru_cache(maxsize=4096)  # the same fragment is evidence for many candidates of a run
def sentences(text: str) -> tuple[Sentence, ...]:
    parts: list[str] = []
    start, joined = 0, False
    for m in [*_SENTENCE_END.finditer(text), None]:
        piece = text[start : m.start() if m is not None else len(text)]
        if joined:
            parts[-1] = f"{parts[-1]} {piece}"  # "Dr." did not end the sentence
        else:
            parts.append(piece)
        if m is None:
            break
        joined = "\n" not in m.group(0) and bool(_ABBREVIATION.search(parts[-1]))
        start = m.end()
    return tuple(read_sentence(part) for part in parts if part.strip())


# --- grounding ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Said:
    """One cited fragment as the grounder sees it.

    `owner_trusted`: written by the owner on a trusted channel (only these ground).
    `speaker`: who wrote it, as the owner reads it ("Alice's message", "screen text",
    "your message in a group chat"); unused for the owner's trusted fragments.
    """

    ref: str
    text: str
    owner_trusted: bool
    speaker: str


@dataclass(frozen=True, slots=True)
class Grounding:
    grounded: bool
    reason: str
    terms: tuple[str, ...]  # the key terms, as the statement writes them
    ref: str | None = None  # the owner's fragment that grounds it


def _shown(text: str) -> str:
    """Invisible characters written out, so that a reason never hides what it speaks of."""
    return "".join(c if c.isprintable() else f"U+{ord(c):04X}" for c in text)


def _quote(words: Sequence[Word]) -> str:
    names = [f"'{_shown(w.surface)}'" for w in words]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _plural(words: Sequence[Word], one: str, many: str) -> str:
    return one if len(words) == 1 else many


def ground(statement: str, evidence: Iterable[Said], about_owner: bool = True) -> Grounding:
    """Whether one trusted sentence of the owner's holds the statement; the reason in words."""
    terms = key_terms(statement)
    shown = tuple(w.surface for w in terms)
    said = list(evidence)
    if not terms:
        return Grounding(False, "the statement names nothing that can be checked against your words", shown)
    stmt_words = words_of(statement)
    stmt = _Claim(
        keys=tuple(w.key for w in terms),
        negation=_marker(stmt_words, _NEGATION_WORDS),
        hedge=_marker(stmt_words, HEDGES),
        past=_marker(stmt_words, PAST),
        relations=frozenset(r for w in stmt_words if (r := _relation(w)) is not None),
        about_owner=about_owner,
    )
    owner = [(s.ref, sent) for s in said if s.owner_trusted for sent in sentences(s.text)]

    # One sentence of the owner's with every term, said the same way: grounded.
    problems: list[str] = []
    for ref, sent in owner:
        if sent.question or not all(sent.holds(w) for w in terms):
            continue
        problem = _mismatch(sent, stmt)
        if problem is None:
            return Grounding(True, f"in your own words ({ref})", shown, ref)
        problems.append(problem)
    if problems:
        return Grounding(False, problems[0], shown)

    # Otherwise say what is missing, and where it does appear.
    asserted = [sent for _, sent in owner if not sent.question]
    missing = [w for w in terms if not any(s.holds(w) for s in asserted)]
    if not missing:
        return Grounding(
            False,
            f"{_quote(terms)} never appear together in one sentence of yours",
            shown,
        )
    return Grounding(False, _where(missing, owner, said), shown)


@dataclass(frozen=True, slots=True)
class _Claim:
    """What the statement says besides its terms: its polarity, hedges, the people it names."""

    keys: tuple[str, ...]
    negation: str | None
    hedge: str | None
    past: str | None
    relations: frozenset[str]
    about_owner: bool


def _mismatch(sent: Sentence, claim: _Claim) -> str | None:
    """Why a sentence holding every term still does not say what the statement says."""
    negation = sent.marker(_NEGATION_WORDS, claim.keys)
    if (negation is None) != (claim.negation is None):
        if negation is not None:
            return f"your message says '{negation}' and the statement does not"
        return f"the statement says '{claim.negation}' and your message does not"
    hedge = sent.marker(HEDGES, claim.keys)
    if hedge is not None and claim.hedge is None:
        return f"your message only says '{hedge}'; the statement drops it"
    past = sent.marker(PAST, claim.keys)
    if past is not None and claim.past is None:
        return f"your message says '{past}'; the statement drops it"
    if not claim.about_owner:
        return None
    # "I think my brother lives in Lisbon": a relative named before the terms may be
    # who they are said of; "I live in Lisbon with my wife" names her after them.
    for rel, at in sent.relations:
        if rel not in claim.relations and at < max(sent.first_at[k] for k in claim.keys):
            return f"your message is about your {rel}, not about you"
    if not sent.first_person and not any(rel in claim.relations for rel, _ in sent.relations):
        return "your message does not say it about yourself (no 'I' or 'my')"
    return None


def _where(missing: Sequence[Word], owner: Sequence[tuple[str, Sentence]], said: Sequence[Said]) -> str:
    """For the missing terms: where they do appear, or that they appear nowhere, grouped by place."""
    places: dict[str, list[Word]] = {}
    for w in missing[:4]:
        if any(w.key in s.keys and s.question for _, s in owner):
            place = "only in your question"
        elif any(w.key in s.possessive_only for _, s in owner):
            place = f'in your messages only as "{_shown(w.surface)}\'s"'
        elif any(w.key in s.quoted_keys for _, s in owner):
            place = "only in a quotation in your message"
        else:
            speakers = list(
                dict.fromkeys(
                    s.speaker
                    for s in said
                    if not s.owner_trusted and any(w.key in x.keys | x.quoted_keys for x in sentences(s.text))
                )
            )
            place = f"only in {_join(speakers)}" if speakers else "in none of your messages"
        places.setdefault(place, []).append(w)
    return "; ".join(
        f"{_quote(words)} {_plural(words, 'appears', 'appear')} {place}" for place, words in places.items()
    )


def _join(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:2]) + f" and {len(items) - 2} more"
