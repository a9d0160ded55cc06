"""User-facing errors: the environment's or the input's fault, written for a person.

Anything else that escapes is a bug and is left to the crash handler.
"""


class PersonaError(Exception):
    """An error the owner can act on; its message is one line, shown as-is."""


class ConfigError(PersonaError):
    """A settings key or value is wrong."""


class ImportFormatError(PersonaError):
    """A chat export, image or audio file cannot be read."""


class LLMError(PersonaError):
    """The LLM host could not answer."""


class TransientLLMError(LLMError):
    """A failure worth retrying: connection refused, timeout, 5xx."""


class NotFoundError(PersonaError):
    """An id given by the owner does not exist."""


class StateError(PersonaError):
    """The action does not fit the current state (approving an applied fact, say)."""


class CaptureUnavailableError(PersonaError):
    """Screen or microphone capture cannot work on this system."""


class CapturePermissionError(CaptureUnavailableError):
    """The desktop refused a screenshot (the portal's answer 2, or its prompt was cancelled)."""


class StoreError(PersonaError):
    """The store cannot do what was asked: disk full, locked, damaged, read-only, too new."""


class StoreFullError(StoreError):
    """The disk holding the store is full; nothing stored was lost."""


class StoreCorruptError(StoreError):
    """The store's file is damaged."""


class StoreBusyError(StoreError):
    """Another process holds the store's lock for too long."""


class LeaseLostError(PersonaError):
    """A sleep cycle's lease was taken over by another runner: this one must stop writing."""

    def __init__(self, holder: str | None) -> None:
        self.holder = holder
        super().__init__(
            f"another runner ({holder or 'unknown'}) took over this sleep cycle's lease; "
            "this one stopped before its next write"
        )
