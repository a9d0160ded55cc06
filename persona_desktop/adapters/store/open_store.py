"""Opening a data dir's store as the settings ask: encrypted (the default) or plain.

Order: the file is brought to the asked state and its key found (`encryption.prepare`),
the schema migrated (`database.open_database`), the media key made, kept crops and
clips sealed or unsealed if a migration left that to do, and what changed journaled.

A damaged store that `open_database` could only open read-only is left as it is: no
media key is made, no kept file converted, nothing journaled (a pending conversion
stays recorded for a start that can write).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.keys.store_key import KeySource, StoreKeyError
from persona_desktop.adapters.media_vault import MediaVault, media_files, scrub_leftovers
from persona_desktop.adapters.store import encryption, media_keys
from persona_desktop.adapters.store.cipher import DriverError, FileState, file_state
from persona_desktop.adapters.store.database import is_read_only, open_database, set_engine_key
from persona_desktop.adapters.store.failures import store_failure
from persona_desktop.adapters.store.runs import SqlJournal
from persona_desktop.adapters.store.store_lock import StoreLock
from persona_desktop.errors import PersonaError, StoreCorruptError

log = logging.getLogger(__name__)


@dataclass
class OpenedStore:
    engine: sa.Engine
    key: bytes | None = field(repr=False)  # held for a later change of key; never written, never printed
    lock: StoreLock
    media: MediaVault
    keys: KeySource

    @property
    def encrypted(self) -> bool:
        return self.key is not None

    @property
    def key_source(self) -> str | None:
        """ "keyring" or "passphrase" for an encrypted store, None for a plain one."""
        if self.key is None:
            return None
        info = key_info.load(self.keys.data_dir)
        return None if info is None else info.current.source

    def change_key(self, *, to_keyring: bool) -> str:
        """Re-key: a new store key, in the keyring or under a new passphrase; returns which."""
        if self.key is None:
            raise StoreKeyError("the store is not encrypted: `config set storage.encrypted true` first")
        self.engine.dispose()  # no pooled connection may keep the replaced file open
        protection, new_key = encryption.change_key(
            self.keys.data_dir, self.key, self.keys, self.lock, to_keyring=to_keyring
        )
        self.key = new_key
        set_engine_key(self.engine, new_key)
        self.media = _media(self.engine, self.keys.data_dir, True)
        return protection.source

    def close(self) -> None:
        self.engine.dispose()
        self.lock.release()


def open_store(data_dir: Path, *, encrypted: bool, keys: KeySource, now: datetime) -> OpenedStore:
    try:
        prepared = encryption.prepare(data_dir, encrypted, keys)
    except DriverError as exc:
        raise _prepare_failure(exc, data_dir, encrypted) from None
    try:
        engine = open_database(data_dir, prepared.key)
    except BaseException:
        prepared.lock.release()
        raise
    try:
        if is_read_only(engine):
            media = _media(engine, data_dir, prepared.key is not None, make_key=False)
            return OpenedStore(engine, prepared.key, prepared.lock, media, keys)
        media = _media(engine, data_dir, prepared.key is not None)
        if prepared.media_pending is not None:
            _convert_media(data_dir, engine, media, prepared)
        _journal(engine, prepared.events, now)
    except BaseException:
        engine.dispose()
        prepared.lock.release()
        raise
    return OpenedStore(engine, prepared.key, prepared.lock, media, keys)


def _prepare_failure(exc: BaseException, data_dir: Path, encrypted: bool) -> PersonaError:
    """A SQLite failure while the file was checked, encrypted or decrypted, as one line."""
    db = data_dir / encryption.DB_FILE
    failure = store_failure(exc, db)
    changing = (file_state(db) is FileState.ENCRYPTED) != encrypted
    if isinstance(failure, StoreCorruptError) and changing:
        change, other = ("encrypted", "false") if encrypted else ("decrypted", "true")
        return StoreCorruptError(
            f"the store {db} is damaged ({' '.join(str(exc).split())}), so it cannot be {change}: nothing was "
            f"changed; copy the data dir somewhere safe; to read what is left, `persona-desktop config set "
            f"storage.encrypted {other}` opens it read-only as it is"
        )
    if failure is not None:
        return failure
    return PersonaError(
        f"the store {db} cannot be {'encrypted' if encrypted else 'opened'}: {exc}; nothing was changed"
    )


def _media(engine: sa.Engine, data_dir: Path, encrypted: bool, make_key: bool = True) -> MediaVault:
    with engine.begin() as conn:
        raw = conn.connection.driver_connection
        keys = media_keys.load(raw)
        if encrypted and not keys and make_key:
            media_keys.add(raw)
            keys = media_keys.load(raw)
    return MediaVault(data_dir, keys, seal=encrypted)


def _convert_media(
    data_dir: Path, engine: sa.Engine, media: MediaVault, prepared: encryption.PreparedStore
) -> None:
    """Seal (or unseal) every kept crop and clip; one file at a time, each atomic. What an
    earlier conversion cut short left under hidden names goes first."""
    scrub_leftovers(data_dir)
    changed = 0
    for path in media_files(data_dir):
        try:
            changed += media.convert(path)
        except PersonaError as exc:  # a file sealed with a lost key: left as it is, said in the log
            log.warning("kept media %s left as it is: %s", path, exc)
    if not media.seal:
        with engine.begin() as conn:
            media_keys.clear(conn.connection.driver_connection)
    encryption.media_done(data_dir)
    prepared.events.append(("media.sealed" if media.seal else "media.unsealed", {"files": changed}))


def _journal(engine: sa.Engine, events: list[tuple[str, dict[str, object]]], now: datetime) -> None:
    if not events:
        return
    with engine.begin() as conn:
        journal = SqlJournal(conn)
        for action, data in events:
            journal.append(at=now, actor="storage", action=action, entity="store", data=dict(data))
