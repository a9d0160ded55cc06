"""`keyinfo.json` beside the store: how its key is found. Nothing in it is secret.

The store key is 32 random bytes. Either the OS keyring holds it (`source:
keyring`, under the item named by `store_id`), or it is wrapped (AES-256-GCM) under a
key stretched from the owner's passphrase with scrypt (`source: passphrase`; the
salt and cost are here, as in any password hash). A wrong passphrase fails the GCM
tag, so it is told apart from a damaged store before the store is touched.

During a change of key (`storage passphrase`, `storage keyring`) the file also holds
`next`: the new key, protected the new way, and wrapped under the current key, so
whoever can open the store now can finish (or cleanly abandon) an interrupted change.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import unicodedata
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from persona_desktop.errors import PersonaError

KEY_INFO_FILE = "keyinfo.json"
FORMAT = 1
KEY_BYTES = 32
_NONCE = 12


@dataclass(frozen=True, slots=True)
class ScryptParams:
    """scrypt cost: n=2**17, r=8 (128 MiB, ~0.5-1 s here): OWASP's recommendation."""

    n: int = 2**17
    r: int = 8
    p: int = 1

    def checked(self) -> ScryptParams:
        # A hostile keyinfo.json must not make us allocate gigabytes: cap at 1 GiB.
        if not (
            2**10 <= self.n <= 2**20 and self.n & (self.n - 1) == 0 and 1 <= self.r <= 16 and 1 <= self.p <= 4
        ):
            raise PersonaError(
                "keyinfo.json names scrypt parameters out of range; it was not written by Persona Desktop"
            )
        return self


DEFAULT_SCRYPT = ScryptParams()


@dataclass(frozen=True, slots=True)
class Protection:
    """One way of holding a store key: in the keyring, or wrapped under a passphrase."""

    source: str  # "keyring" | "passphrase"
    store_id: str  # names the keyring item; bound into the wrapping too
    salt: bytes = b""
    scrypt: ScryptParams = DEFAULT_SCRYPT
    wrapped: bytes = b""  # nonce + AES-GCM(kek, store key)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "store_id": self.store_id}
        if self.source == "passphrase":
            out["kdf"] = {"name": "scrypt", "n": self.scrypt.n, "r": self.scrypt.r, "p": self.scrypt.p}
            out["salt"] = _b64(self.salt)
            out["wrapped_key"] = _b64(self.wrapped)
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Protection:
        if not isinstance(raw, dict) or raw.get("source") not in ("keyring", "passphrase"):
            raise ValueError("source")
        store_id = str(uuid.UUID(str(raw["store_id"])))
        if raw["source"] == "keyring":
            return cls("keyring", store_id)
        kdf = raw["kdf"]
        if kdf.get("name") != "scrypt":
            raise ValueError("kdf")
        params = ScryptParams(int(kdf["n"]), int(kdf["r"]), int(kdf["p"]))
        salt, wrapped = _unb64(raw["salt"]), _unb64(raw["wrapped_key"])
        if len(salt) < 16 or len(wrapped) != _NONCE + KEY_BYTES + 16:
            raise ValueError("sizes")
        return cls("passphrase", store_id, salt, params, wrapped)


@dataclass(frozen=True, slots=True)
class PendingKey:
    """A change of key under way: the new protection and the new key under the old key."""

    protection: Protection
    under_current: bytes  # nonce + AES-GCM(current store key, new store key)


@dataclass(frozen=True, slots=True)
class KeyInfo:
    current: Protection
    next: PendingKey | None = None

    def without_next(self) -> KeyInfo:
        return replace(self, next=None)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes:
    return base64.b64decode(str(text), validate=True)


def new_store_id() -> str:
    return str(uuid.uuid4())


def stretch(passphrase: str, salt: bytes, params: ScryptParams) -> bytes:
    """The key-encryption key: scrypt of the passphrase (NFC, so the same typed text is the same bytes)."""
    params = params.checked()
    text = unicodedata.normalize("NFC", passphrase).encode("utf-8")
    return Scrypt(salt=salt, length=KEY_BYTES, n=params.n, r=params.r, p=params.p).derive(text)


def _aad(store_id: str, what: str) -> bytes:
    return f"persona-desktop {what} v{FORMAT} {store_id}".encode()


def wrap(kek: bytes, key: bytes, store_id: str, what: str = "store key") -> bytes:
    nonce = os.urandom(_NONCE)
    return nonce + AESGCM(kek).encrypt(nonce, key, _aad(store_id, what))


def unwrap(kek: bytes, blob: bytes, store_id: str, what: str = "store key") -> bytes | None:
    """The wrapped key, or None when `kek` is not the one it was wrapped under."""
    try:
        return AESGCM(kek).decrypt(blob[:_NONCE], blob[_NONCE:], _aad(store_id, what))
    except InvalidTag:
        return None


def passphrase_protection(passphrase: str, key: bytes, params: ScryptParams | None = None) -> Protection:
    store_id = new_store_id()
    salt = os.urandom(16)
    chosen = params or DEFAULT_SCRYPT
    kek = stretch(passphrase, salt, chosen)
    return Protection("passphrase", store_id, salt, chosen, wrap(kek, key, store_id))


def unlock(protection: Protection, passphrase: str) -> bytes | None:
    """The store key under a passphrase protection, or None for a wrong passphrase."""
    kek = stretch(passphrase, protection.salt, protection.scrypt)
    return unwrap(kek, protection.wrapped, protection.store_id)


def pending(protection: Protection, current_key: bytes, new_key: bytes) -> PendingKey:
    return PendingKey(protection, wrap(current_key, new_key, protection.store_id, "next key"))


def next_key(info: KeyInfo, current_key: bytes) -> bytes | None:
    if info.next is None:
        return None
    return unwrap(current_key, info.next.under_current, info.next.protection.store_id, "next key")


# --- the file ----------------------------------------------------------------------------


def key_info_path(data_dir: Path) -> Path:
    return data_dir / KEY_INFO_FILE


def load(data_dir: Path) -> KeyInfo | None:
    path = key_info_path(data_dir)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PersonaError(
            f"{path} cannot be read ({exc.__class__.__name__}); the store's key cannot be found"
        ) from None
    try:
        if raw.get("format") != FORMAT:
            raise ValueError("format")
        current = Protection.from_json(raw["current"])
        nxt = None
        if raw.get("next") is not None:
            nxt = PendingKey(
                Protection.from_json(raw["next"]["protection"]), _unb64(raw["next"]["under_current"])
            )
        info = KeyInfo(current, nxt)
    except (AttributeError, KeyError, TypeError, ValueError):
        raise PersonaError(
            f"{path} is not a key description Persona Desktop wrote; the store's key cannot be found"
        ) from None
    if current.source == "passphrase":
        current.scrypt.checked()
    return info


def save(data_dir: Path, info: KeyInfo) -> None:
    """Atomically (temp file, fsync, rename, fsync the folder), 0600."""
    raw: dict[str, Any] = {"format": FORMAT, "current": info.current.to_json()}
    if info.next is not None:
        raw["next"] = {
            "protection": info.next.protection.to_json(),
            "under_current": _b64(info.next.under_current),
        }
    path = key_info_path(data_dir)
    fd, tmp = tempfile.mkstemp(dir=data_dir, prefix=".keyinfo-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(raw, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(data_dir)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
