"""Retention of captured text: old screen (or speech) fragments go, unless a fact cites them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from persona_desktop.domain.model import Kind
from persona_desktop.ports import UnitOfWorkFactory


@dataclass(frozen=True, slots=True)
class PurgeResult:
    kind: Kind
    before: datetime
    deleted: int
    kept: int


def purge_expired_fragments(
    uow_factory: UnitOfWorkFactory, kind: Kind, retention_days: int, now: datetime
) -> PurgeResult:
    """Delete `kind` fragments captured more than `retention_days` ago, journaled.

    Kept: fragments cited by a fact (applied, superseded or reverted: the provenance
    chain of a fact must stay whole) or by a candidate still waiting for review.
    """
    if kind is Kind.CHAT:
        raise ValueError("chat history is not subject to capture retention")
    before = now - timedelta(days=retention_days)
    with uow_factory() as uow:
        deleted, kept = uow.fragments.purge_before(kind, before)
        if deleted:
            uow.journal.append(
                at=now,
                actor="capture",
                action="fragments.purged",
                entity="fragment",
                data={"kind": kind.value, "before": before.isoformat(), "deleted": deleted, "kept": kept},
            )
        uow.commit()
    return PurgeResult(kind, before, deleted, kept)
