"""The OS keyring (Secret Service, Keychain, Credential Manager) through `keyring`.

"No keyring" is a normal case, not a failure: a headless machine, an SSH session
without D-Bus, or `keyring`'s fail backend. Every call answers None/False then, with
the reason kept for the one-line error; nothing from the keyring library is raised.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

SERVICE = "persona-desktop"

log = logging.getLogger(__name__)


def item_name(store_id: str) -> str:
    return f"store-{store_id}"


@dataclass
class KeyringAccess:
    """One keyring backend as found at start; `reason` says why it cannot be used."""

    reason: str = ""

    def _backend(self) -> KeyringBackend | None:
        try:
            import keyring
            from keyring.backends import fail

            backend = keyring.get_keyring()
        except Exception as exc:  # a broken keyring config file, a backend that fails to load
            self.reason = f"the keyring library failed to start ({exc.__class__.__name__})"
            return None
        if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
            self.reason = "no OS keyring (Secret Service) is running in this session"
            return None
        chained = getattr(backend, "backends", None)
        if chained is not None and not chained:
            self.reason = "no OS keyring (Secret Service) is running in this session"
            return None
        return backend

    def get(self, store_id: str) -> str | None:
        backend = self._backend()
        if backend is None:
            return None
        try:
            value: str | None = backend.get_password(SERVICE, item_name(store_id))
        except Exception as exc:  # locked, D-Bus gone, user dismissed the unlock prompt
            self.reason = f"the OS keyring did not answer ({exc.__class__.__name__})"
            log.info("keyring read failed: %s", exc.__class__.__name__)
            return None
        if value is None:
            self.reason = f"the OS keyring has no item {SERVICE}/{item_name(store_id)}"
        return value

    def put(self, store_id: str, secret: str) -> bool:
        """Store and read back; False (with `reason`) when the keyring cannot keep it."""
        backend = self._backend()
        if backend is None:
            return False
        try:
            backend.set_password(SERVICE, item_name(store_id), secret)
            ok = bool(backend.get_password(SERVICE, item_name(store_id)) == secret)
        except Exception as exc:
            self.reason = f"the OS keyring refused to store the key ({exc.__class__.__name__})"
            log.info("keyring write failed: %s", exc.__class__.__name__)
            return False
        if not ok:
            self.reason = "the OS keyring did not give back the key it was given"
        return ok

    def delete(self, store_id: str) -> None:
        backend = self._backend()
        if backend is None:
            return
        try:
            backend.delete_password(SERVICE, item_name(store_id))
        except Exception:
            log.info("keyring item %s was not deleted", item_name(store_id))
