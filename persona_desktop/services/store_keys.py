"""The journal's side of re-keying the store: the store adapter changes the key, this records it."""

from __future__ import annotations

from datetime import datetime

from persona_desktop.ports import UnitOfWorkFactory


def journal_rekeyed(uow_factory: UnitOfWorkFactory, at: datetime, protection: str) -> None:
    """The owner re-keyed the store; `protection` says where the new key is kept."""
    with uow_factory() as uow:
        uow.journal.append(
            at=at, actor="owner", action="store.rekeyed", entity="store", data={"key": protection}
        )
        uow.commit()
