"""Storing captured fragments: one source, one transaction, idempotent by ref."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.model import NewFragment, SourceInfo
from persona_desktop.ports import UnitOfWork, UnitOfWorkFactory


@dataclass(frozen=True, slots=True)
class IngestResult:
    source_key: str
    source_id: int
    added: int
    skipped: int


def store_fragments(
    uow: UnitOfWork, source: SourceInfo, fragments: Sequence[NewFragment], at: datetime
) -> IngestResult:
    """Within an open unit of work: upsert the source, add new fragments, journal it."""
    source_id = uow.sources.upsert(source)
    added = uow.fragments.add_many(source_id, fragments)
    if added:
        uow.journal.append(
            at=at,
            actor="capture",
            action="fragments.ingested",
            entity="source",
            entity_id=source_id,
            data={
                "source": source.key,
                "kind": source.kind.value,
                "added": added,
                "skipped": len(fragments) - added,
            },
        )
    return IngestResult(source.key, source_id, added, len(fragments) - added)


def ingest(
    uow_factory: UnitOfWorkFactory,
    sources: Sequence[tuple[SourceInfo, Sequence[NewFragment]]],
    at: datetime,
) -> list[IngestResult]:
    """Store several sources atomically: either all of them land, or none does."""
    results: list[IngestResult] = []
    with uow_factory() as uow:
        for source, fragments in sources:
            results.append(store_fragments(uow, source, fragments, at))
        uow.commit()
    return results


def note_owner_activity(uow_factory: UnitOfWorkFactory, at: datetime) -> None:
    """The sleep cycle's quiet gate reads this (besides the owner's chat messages)."""
    with uow_factory() as uow:
        uow.kv.set("owner.last_active_at", at.isoformat())
        uow.commit()
