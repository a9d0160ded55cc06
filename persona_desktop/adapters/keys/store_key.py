"""Getting a store's key: from the OS keyring, else from the owner's passphrase.

The passphrase comes from `PERSONA_DESKTOP_PASSPHRASE`, else from a prompt (the
terminal's, or the app's dialog); with neither, the error names the three ways. The
passphrase and the key live in memory only: never in a file, a log, an error
message or an argument list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.keys.key_info import Protection
from persona_desktop.adapters.keys.os_keyring import KeyringAccess
from persona_desktop.errors import PersonaError
from persona_desktop.ports import PassphrasePrompt, PassphraseRequest

ENV_PASSPHRASE = "PERSONA_DESKTOP_PASSPHRASE"
ENV_NEW_PASSPHRASE = "PERSONA_DESKTOP_NEW_PASSPHRASE"
PROMPT_TRIES = 3


class StoreKeyError(PersonaError):
    """The store's key cannot be had: no keyring and no passphrase, or a wrong one."""


class WrongPassphraseError(StoreKeyError):
    pass


def _three_ways(reason: str) -> str:
    return (
        f"{reason}; give it one of three ways: set {ENV_PASSPHRASE}, run the command in a terminal "
        "to type it, or start your desktop's keyring (Secret Service)"
    )


@dataclass
class KeySource:
    data_dir: Path
    prompt: PassphrasePrompt | None = None
    keyring: KeyringAccess = field(default_factory=KeyringAccess)
    params: key_info.ScryptParams | None = None  # None: the default cost

    # --- passphrases ----------------------------------------------------------------------

    def _from_env(self, name: str) -> str | None:
        value = os.environ.get(name)
        if value is None:
            return None
        if not value:
            raise StoreKeyError(f"{name} is set but empty; unset it or give the passphrase")
        return value

    def _ask(self, new: bool, retry: str, why: str) -> str:
        if self.prompt is None:
            raise StoreKeyError(_three_ways(why))
        answer = self.prompt(PassphraseRequest(self.data_dir, new=new, retry=retry))
        if answer is None:
            raise StoreKeyError(f"no passphrase given for the store in {self.data_dir}; nothing was changed")
        if not answer:
            raise StoreKeyError("an empty passphrase cannot protect the store; nothing was changed")
        return answer

    def new_passphrase(self, env: str = ENV_PASSPHRASE) -> str:
        from_env = self._from_env(env)
        if from_env is not None:
            return from_env
        return self._ask(
            True,
            "",
            f"the store in {self.data_dir} is to be encrypted and no OS keyring can hold its key "
            f"({self.keyring.reason or 'none found'}): it needs a passphrase",
        )

    # --- a new key ------------------------------------------------------------------------

    def protect_new(self, key: bytes, *, use_keyring: bool = True, env: str = ENV_PASSPHRASE) -> Protection:
        """Protect a fresh store key: in the keyring if one works, else under a passphrase."""
        if use_keyring:
            store_id = key_info.new_store_id()
            if self.keyring.put(store_id, key.hex()):
                return Protection("keyring", store_id)
        return key_info.passphrase_protection(self.new_passphrase(env), key, self.params)

    # --- the current key ------------------------------------------------------------------

    def unlock(self, protection: Protection) -> bytes:
        return self.unlock_any([protection])[1]

    def unlock_any(self, protections: list[Protection]) -> tuple[int, bytes]:
        """The first protection that gives its key: keyring items first, then one passphrase
        (from the environment, else up to three prompts) tried against each passphrase one."""
        keyring_error: StoreKeyError | None = None
        for i, p in enumerate(protections):
            if p.source == "keyring":
                try:
                    return i, self._from_keyring(p)
                except StoreKeyError as exc:
                    keyring_error = keyring_error or exc
        by_passphrase = [(i, p) for i, p in enumerate(protections) if p.source == "passphrase"]
        if not by_passphrase:
            assert keyring_error is not None
            raise keyring_error
        from_env = self._from_env(ENV_PASSPHRASE)
        if from_env is not None:
            found = _open_any(by_passphrase, from_env)
            if found is None:
                raise WrongPassphraseError(
                    f"wrong passphrase for the store in {self.data_dir} (from {ENV_PASSPHRASE}); "
                    "nothing was changed"
                )
            return found
        why = f"the store in {self.data_dir} is encrypted with a passphrase"
        retry = ""
        for _ in range(PROMPT_TRIES):
            found = _open_any(by_passphrase, self._ask(False, retry, why))
            if found is not None:
                return found
            retry = "That passphrase does not open the store. Try again."
        raise WrongPassphraseError(f"wrong passphrase for the store in {self.data_dir}; nothing was changed")

    def _from_keyring(self, protection: Protection) -> bytes:
        secret = self.keyring.get(protection.store_id)
        if secret is None:
            raise StoreKeyError(
                f"the key of the store in {self.data_dir} is kept in the OS keyring, which cannot give it now "
                f"({self.keyring.reason}): unlock or start your desktop's keyring (Secret Service) and try again, "
                "or run `persona-desktop storage passphrase` once in the desktop session to use a passphrase"
            )
        try:
            key = bytes.fromhex(secret)
        except ValueError:
            key = b""
        if len(key) != key_info.KEY_BYTES:
            raise StoreKeyError(
                f"the OS keyring's item for the store in {self.data_dir} is not a Persona Desktop key; "
                "nothing was changed"
            )
        return key

    def forget(self, protection: Protection) -> None:
        """Remove a protection's keyring item (after the store stopped using it)."""
        if protection.source == "keyring":
            self.keyring.delete(protection.store_id)


def _open_any(candidates: list[tuple[int, Protection]], passphrase: str) -> tuple[int, bytes] | None:
    for i, p in candidates:
        key = key_info.unlock(p, passphrase)
        if key is not None:
            return i, key
    return None
