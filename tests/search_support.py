"""Seeding a real store for the search, recall and MCP tests: sources, fragments, facts with evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Subject, Trust
from persona_desktop.domain.proposals import NewFact
from persona_desktop.domain.text import statement_key
from persona_desktop.services import review
from persona_desktop.services.ingest import ingest


def add_source(
    rt: Runtime,
    key: str,
    kind: Kind,
    texts: list[str],
    *,
    at: datetime | None = None,
    author: Author = Author.OWNER,
    trust: Trust = Trust.TRUSTED,
    locator: dict[str, Any] | None = None,
) -> list[str]:
    """One source with one fragment per text (refs `<key>:<n>`), captured at `at` (default: now)."""
    when = at or datetime.now(UTC)
    frags = [
        NewFragment(
            ref=f"{key}:{n}",
            kind=kind,
            author=author,
            trust=trust,
            text=text,
            captured_at=when + timedelta(seconds=n),
            locator={"line": n, **(locator or {})},
            session=key,
            seq=n,
        )
        for n, text in enumerate(texts)
    ]
    ingest(rt.uow, [(SourceInfo(key, kind, f"label of {key}", {}), frags)], datetime.now(UTC))
    return [f.ref for f in frags]


def source_id(rt: Runtime, key: str) -> int:
    with rt.uow.read() as uow:
        return next(i for i, s, _ in uow.sources.all() if s.key == key)


def approved_fact(rt: Runtime, statement: str, refs: list[str], supersedes: int | None = None) -> int:
    """A candidate citing `refs`, approved by the owner: the fact's id."""
    now = datetime.now(UTC)
    with rt.uow() as uow:
        cid = uow.candidates.add(
            statement=statement,
            subject=Subject.OWNER,
            key=statement_key(statement),
            category=None,
            origin="test",
            run_id=None,
            proposal=NewFact(),
            supersedes_fact_id=supersedes,
            created_at=now,
        )
        ids = [f.id for f in uow.fragments.by_refs(refs).values()]
        uow.candidates.add_evidence(cid, ids, None)
        uow.commit()
    return review.approve(rt.uow, cid, now)
