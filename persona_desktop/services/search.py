"""Search of everything captured and known: fragments (chat, screen, speech) and facts.

What comes back is only what the store still holds: forgotten and retention-deleted
fragments leave the index with their rows (database triggers), and only facts that are
applied now are found. Each hit carries its matching line with the spans of the matched
words, for the CLI's JSON and the search window's highlights.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from persona_desktop.domain.model import Kind
from persona_desktop.domain.search_query import SearchQuery, parse_query, tokens
from persona_desktop.errors import NotFoundError, PersonaError
from persona_desktop.ports import MARK_END, MARK_START, SearchHit, UnitOfWorkFactory
from persona_desktop.services.review import EvidenceItem, evidence_item

KINDS = ("chat", "screen", "speech", "fact")
DEFAULT_LIMIT = 50
MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class SearchResult:
    hit: SearchHit
    line: str  # the matching line of the text
    spans: tuple[tuple[int, int], ...]  # [start, end) of each matched word in `line`

    def to_json(self) -> dict[str, object]:
        h = self.hit
        out: dict[str, object] = {
            "kind": h.kind,
            "ref": h.ref,
            "captured_at": h.captured_at.isoformat(),
            "text": self.line,
            "score": h.score,
            "highlights": [list(s) for s in self.spans],
        }
        if h.fact_id is not None:
            out["id"] = out["fact_id"] = h.fact_id
        else:
            out.update(
                id=h.fragment_id,
                author=h.author,
                trust=h.trust,
                source_id=h.source_id,
                source=h.source_label,
                full_text=h.text,
            )
        return out


def parse_since(value: str | None) -> datetime | None:
    """`2026-11-20` (from local midnight) or an ISO 8601 time; a clear error otherwise."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = datetime.combine(date.fromisoformat(text), time.min)
        else:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise PersonaError(f"--since {value!r} is not a date (YYYY-MM-DD) or an ISO 8601 time") from None
    try:  # in UTC, as the store compares: the calendar's ends may fall off it
        return (parsed if parsed.tzinfo is not None else parsed.astimezone()).astimezone(UTC)
    except (OverflowError, ValueError):
        raise PersonaError(f"--since {value!r} is out of the range of dates") from None


def parse_kind(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if value not in KINDS:
        raise PersonaError(f"unknown kind {value!r}; use one of {', '.join(KINDS)}")
    return value


def matching_line(hit: SearchHit, query: SearchQuery) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The first line holding a marked match, without the marks, and where the marks were."""
    if hit.marked:
        lines = hit.marked.splitlines() or [hit.marked]
        chosen = next((ln for ln in lines if MARK_START in ln), lines[0])
        return _unmark(chosen)
    wanted = set(query.words())
    lines = hit.text.splitlines() or [hit.text]
    chosen = next((ln for ln in lines if wanted & set(tokens(ln))), lines[0])
    return chosen.strip(), ()


def _unmark(line: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    start = -1
    length = 0
    for ch in line:
        if ch == MARK_START:
            start = length
        elif ch == MARK_END:
            if start >= 0:
                spans.append((start, length))
            start = -1
        else:
            out.append(ch)
            length += 1
    text = "".join(out)
    lead = len(text) - len(text.lstrip())
    stripped = text.strip()
    shifted = tuple((max(0, a - lead), min(len(stripped), b - lead)) for a, b in spans)
    return stripped, tuple(s for s in shifted if s[0] < s[1])


def search(
    uow_factory: UnitOfWorkFactory,
    text: str,
    kind: str | None = None,
    since: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
    allowed: frozenset[str] = frozenset(KINDS),
) -> list[SearchResult]:
    """Fragments and facts matching every word of `text`, best first.

    `allowed` narrows what may be searched at all (the MCP read scopes).
    """
    kind = parse_kind(kind)
    query = parse_query(text)
    limit = max(1, min(int(limit), MAX_LIMIT))
    wanted = [k for k in KINDS if (kind is None or k == kind) and k in allowed]
    if query.empty or not wanted:
        return []
    fragment_kinds = [Kind(k) for k in wanted if k != "fact"]
    hits: list[SearchHit] = []
    with uow_factory.read() as uow:
        if fragment_kinds:
            every = len(fragment_kinds) == 3
            hits += uow.search.fragments(query, None if every else fragment_kinds, since, limit)
        if "fact" in wanted:
            hits += uow.search.facts(query, since, limit)
    hits.sort(key=lambda h: -h.score)
    return [SearchResult(h, *matching_line(h, query)) for h in hits[:limit]]


def hit_evidence(uow_factory: UnitOfWorkFactory, ref: str, context: int = 3) -> EvidenceItem:
    """A fragment hit at its source, with its neighbours (chat context), for the evidence view."""
    with uow_factory.read() as uow:
        found = uow.fragments.by_refs([ref]).get(ref)
        if found is None:
            raise NotFoundError(f"{ref} is no longer stored (forgotten or past its retention)")
        return evidence_item(uow, found, context)
