"""Encryption at rest of the store's file: new, migrated, opted out of, re-keyed.

Every change of the file is the same move: `sqlcipher_export` into a new file next to
the store, fsync, rename over the store, fsync the folder. Killed before the rename,
the old store is whole (the half-written copy is deleted at the next start, which
then does the change again); killed after it, the new one is. The replaced file's
content is then overwritten with zeros before its last name goes (best effort: a
copy-on-write or flash file system may keep old blocks).

Kept crops and clips follow in a second step, recorded by `media-pending.json`
before the rename, so an interrupted run is finished by the next start.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.keys.key_info import KeyInfo, Protection
from persona_desktop.adapters.keys.store_key import KeySource, StoreKeyError
from persona_desktop.adapters.media_vault import scrub
from persona_desktop.adapters.store import media_keys
from persona_desktop.adapters.store.cipher import FileState, connect, export_copy, file_state, opens_with
from persona_desktop.adapters.store.store_lock import StoreLock

DB_FILE = "persona.sqlite3"
MEDIA_PENDING = "media-pending.json"
_TEMP_SUFFIXES = (".encrypting", ".decrypting", ".rekeying")
_OLD_SUFFIX = ".replaced"


@dataclass
class PreparedStore:
    """The store's file in the state the settings ask for, and how to open it."""

    key: bytes | None = field(repr=False)
    lock: StoreLock
    media_pending: bool | None = None  # True: seal kept media; False: unseal it; None: nothing to do
    events: list[tuple[str, dict[str, object]]] = field(default_factory=list)  # to journal


def _db(data_dir: Path) -> Path:
    return data_dir / DB_FILE


def _temps(db: Path) -> list[Path]:
    names = [db.name + s for s in (*_TEMP_SUFFIXES, _OLD_SUFFIX)]
    return [db.with_name(n + extra) for n in names for extra in ("", "-wal", "-shm", "-journal")]


def _media_pending(data_dir: Path) -> bool | None:
    try:
        raw = json.loads((data_dir / MEDIA_PENDING).read_text(encoding="utf-8"))
        return bool(raw["seal"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _set_media_pending(data_dir: Path, seal: bool) -> None:
    path = data_dir / MEDIA_PENDING
    tmp = path.with_name("." + path.name)
    tmp.write_text(json.dumps({"seal": seal}) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    key_info.fsync_dir(data_dir)


def media_done(data_dir: Path) -> None:
    (data_dir / MEDIA_PENDING).unlink(missing_ok=True)


def _steady(data_dir: Path, state: FileState, info: KeyInfo | None, encrypted: bool) -> bool:
    """Nothing to change: open with the lock shared."""
    db = _db(data_dir)
    if any(p.exists() for p in _temps(db)) or (data_dir / MEDIA_PENDING).exists():
        return False
    if encrypted:
        return state is FileState.ENCRYPTED and info is not None and info.next is None
    return state is not FileState.ENCRYPTED and info is None


def _swap_in(db: Path, new: Path) -> None:
    """Rename `new` over the store; scrub the replaced file's content afterwards."""
    old: Path | None = db.with_name(db.name + _OLD_SUFFIX)
    assert old is not None
    old.unlink(missing_ok=True)
    try:
        os.link(db, old)  # keeps the replaced content reachable, to zero it after the rename
    except OSError:  # a file system without hard links: the rename alone, no scrubbing
        old = None
    os.replace(new, db)
    key_info.fsync_dir(db.parent)
    for side in ("-wal", "-shm"):
        db.with_name(db.name + side).unlink(missing_ok=True)  # the old file's; empty after the checkpoint
    if old is not None:
        scrub(old)


def _clean_temps(db: Path) -> None:
    for path in _temps(db):
        if path.exists():
            scrub(path) if path.name.endswith(_OLD_SUFFIX) else path.unlink(missing_ok=True)


def prepare(data_dir: Path, encrypted: bool, keys: KeySource) -> PreparedStore:
    """Bring the store's file to what `storage.encrypted` says, and find its key."""
    db = _db(data_dir)
    lock = StoreLock(data_dir)
    if _steady(data_dir, file_state(db), key_info.load(data_dir), encrypted):
        lock.shared()
    else:
        lock.exclusive("encrypt or decrypt the store" if encrypted else "decrypt the store")
    try:
        return _prepare_locked(data_dir, encrypted, keys, lock)
    except BaseException:
        lock.release()
        raise
    finally:
        if lock.mode == "exclusive":
            lock.downgrade()


def _prepare_locked(data_dir: Path, encrypted: bool, keys: KeySource, lock: StoreLock) -> PreparedStore:
    db = _db(data_dir)
    state, info = file_state(db), key_info.load(data_dir)  # again: another process may have changed it
    if lock.mode == "exclusive":
        _clean_temps(db)
    prepared = PreparedStore(None, lock, _media_pending(data_dir))
    if state is FileState.ENCRYPTED:
        if info is None:
            raise StoreKeyError(
                f"the store {db} is encrypted (or damaged) and {key_info.KEY_INFO_FILE}, which says where its "
                "key is, is missing from the data dir; restore it from a backup; nothing was changed"
            )
        key = _unlock(db, info, keys, prepared)
        if encrypted:
            prepared.key = key
            return prepared
        _set_media_pending(data_dir, False)
        tmp = db.with_name(db.name + ".decrypting")
        export_copy(db, key, tmp, None)
        _swap_in(db, tmp)
        key_info.key_info_path(data_dir).unlink(missing_ok=True)
        key_info.fsync_dir(data_dir)
        keys.forget(info.current)
        prepared.media_pending = False
        prepared.events.append(("store.decrypted", {"by": "storage.encrypted false"}))
        return prepared
    if not encrypted:
        if info is not None:  # left by an interrupted decryption, or an encryption never done
            key_info.key_info_path(data_dir).unlink(missing_ok=True)
            keys.forget(info.current)
        return prepared
    key = os.urandom(key_info.KEY_BYTES)
    protection = keys.protect_new(key)
    key_info.save(data_dir, KeyInfo(protection))
    if info is not None:
        keys.forget(info.current)  # a key made for a store that was never encrypted with it
    prepared.key = key
    if state is FileState.MISSING:
        os.close(os.open(db, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o600))
        conn = connect(db, key)
        try:
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
        return prepared
    _set_media_pending(data_dir, True)
    tmp = db.with_name(db.name + ".encrypting")
    export_copy(db, None, tmp, key)
    _swap_in(db, tmp)
    prepared.media_pending = True
    prepared.events.append(("store.encrypted", {"from": "plaintext", "key": protection.source}))
    return prepared


def _unlock(db: Path, info: KeyInfo, keys: KeySource, prepared: PreparedStore) -> bytes:
    """The key that opens the store, finishing or abandoning an interrupted change of key."""
    if info.next is None:
        key = keys.unlock(info.current)
        _check_opens(db, key, info.current)
        return key
    which, key = keys.unlock_any([info.current, info.next.protection])
    data_dir = db.parent
    if which == 0:
        new_key = key_info.next_key(info, key)
        if new_key is not None and opens_with(db, new_key):
            key_info.save(data_dir, KeyInfo(info.next.protection))
            keys.forget(info.current)
            prepared.events.append(
                ("store.rekeyed", {"key": info.next.protection.source, "finished": "at start"})
            )
            return new_key
        _check_opens(db, key, info.current)
        key_info.save(data_dir, info.without_next())
        keys.forget(info.next.protection)
        prepared.events.append(
            ("store.rekey_abandoned", {"reason": "interrupted before the new file was in place"})
        )
        return key
    if opens_with(db, key):
        key_info.save(data_dir, KeyInfo(info.next.protection))
        keys.forget(info.current)
        prepared.events.append(
            ("store.rekeyed", {"key": info.next.protection.source, "finished": "at start"})
        )
        return key
    raise StoreKeyError(
        f"a change of passphrase of the store in {data_dir} was interrupted before it "
        "took effect: open it once with the old passphrase; nothing was changed"
    )


def _check_opens(db: Path, key: bytes, protection: Protection) -> None:
    if opens_with(db, key):
        return
    if protection.source == "keyring":
        raise StoreKeyError(
            f"the key in the OS keyring does not open the store {db} (the keyring item was replaced, or the "
            "file is damaged); nothing was changed"
        )
    raise StoreKeyError(
        f"the passphrase is right but the store {db} does not open with its key: the file is damaged or is not "
        "the one keyinfo.json describes; nothing was changed"
    )


def change_key(
    data_dir: Path, key: bytes, keys: KeySource, lock: StoreLock, *, to_keyring: bool
) -> tuple[Protection, bytes]:
    """Re-key the store: a new random key, protected anew (keyring, or a new passphrase).

    The old key stops opening the store. The store's engine must be closed (no pooled
    connection may keep the replaced file open); the lock is taken alone meanwhile.
    """
    from persona_desktop.adapters.keys.store_key import ENV_NEW_PASSPHRASE

    db = _db(data_dir)
    info = key_info.load(data_dir)
    if info is None or file_state(db) is not FileState.ENCRYPTED:
        raise StoreKeyError("the store is not encrypted: `config set storage.encrypted true` first")
    lock.exclusive("change the store's key")
    try:
        new_key = os.urandom(key_info.KEY_BYTES)
        if to_keyring:
            protection = Protection("keyring", key_info.new_store_id())
            if not keys.keyring.put(protection.store_id, new_key.hex()):
                raise StoreKeyError(
                    f"no OS keyring can hold the key ({keys.keyring.reason}); nothing was changed"
                )
        else:
            protection = keys.protect_new(new_key, use_keyring=False, env=ENV_NEW_PASSPHRASE)
        key_info.save(data_dir, KeyInfo(info.current, key_info.pending(protection, key, new_key)))
        tmp = db.with_name(db.name + ".rekeying")
        _clean_temps(db)
        export_copy(db, key, tmp, new_key)
        conn = connect(tmp, new_key)
        try:
            conn.execute("BEGIN IMMEDIATE")
            media_keys.add(conn)
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        _swap_in(db, tmp)
        key_info.save(data_dir, KeyInfo(protection))
        keys.forget(info.current)
        return protection, new_key
    finally:
        lock.downgrade()
