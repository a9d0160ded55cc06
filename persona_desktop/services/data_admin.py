"""Deleting everything captured, on the owner's request, without touching the journal.

Fragments, their sources and kept media go; facts stay (they are the owner's
memory, not captured data) but lose their links to the deleted evidence, and
candidates still waiting are dropped because nothing backs them any more. The
journal is append-only: the deletion is one more entry in it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from persona_desktop.domain.model import CandidateStatus
from persona_desktop.ports import UnitOfWorkFactory

REASON = "captured data deleted by the owner"


def delete_captured_data(
    uow_factory: UnitOfWorkFactory, at: datetime, media_dirs: Sequence[Path] = ()
) -> dict[str, int]:
    """Delete every fragment and source, then the kept media files; returns counts."""
    with uow_factory() as uow:
        source_ids = sorted({f.source_id for f in uow.fragments.all()})
        dropped: set[int] = set()
        fragments = 0
        for source_id in source_ids:
            for candidate in uow.candidates.citing_source(source_id):
                if candidate.status is CandidateStatus.PENDING and candidate.id not in dropped:
                    uow.candidates.set_status(candidate.id, CandidateStatus.DROPPED, REASON, at)
                    dropped.add(candidate.id)
            fragments += uow.fragments.delete_source(source_id)
        uow.journal.append(
            at=at,
            actor="owner",
            action="captured_data.deleted",
            entity="store",
            data={
                "sources": len(source_ids),
                "fragments": fragments,
                "candidates_dropped": sorted(dropped),
            },
        )
        uow.commit()
    files = 0
    for folder in media_dirs:
        if folder.is_dir():
            files += sum(1 for p in folder.rglob("*") if p.is_file())
            shutil.rmtree(folder, ignore_errors=True)
    return {
        "sources": len(source_ids),
        "fragments": fragments,
        "candidates dropped": len(dropped),
        "media files": files,
    }
