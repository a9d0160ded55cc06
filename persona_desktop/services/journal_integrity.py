"""Is the revision journal intact? (`journal verify`, and the app's check at start-up)."""

from __future__ import annotations

from persona_desktop.ports import JournalCheck, UnitOfWorkFactory


def verify_journal(uow_factory: UnitOfWorkFactory) -> JournalCheck:
    """Walk the whole hash chain in one read transaction (a consistent snapshot under WAL)."""
    with uow_factory.read() as uow:
        return uow.journal.verify()
