"""Wiring of speech capture from the settings: the Whisper transcriber and the live sessions.

Part of the Qt-free composition root, like `bootstrap.screen`; the tray app's recorder
(`ui.audio_source`, Qt) gets the session factory handed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from persona_desktop.adapters.whisper_transcriber import WhisperTranscriber
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.speech_live import SpeechSession
from persona_desktop.config import Settings
from persona_desktop.ports import Transcriber, UnitOfWorkFactory


def transcriber_from_settings(settings: Settings, *, idle_unload_s: float = 300.0) -> WhisperTranscriber:
    """Build from `capture.whisper_model` and `capture.whisper_language`."""
    capture = settings.values.capture
    return WhisperTranscriber(capture.whisper_model, capture.whisper_language, idle_unload_s=idle_unload_s)


def speech_sessions(rt: Runtime, transcriber: Transcriber) -> Callable[[str], SpeechSession]:
    """A new live session for each start of the recorder, on its device, as the settings say
    at that start (a pause and resume is a new start: an unticked "Keep recordings" holds)."""

    def session(device: str) -> SpeechSession:
        s = rt.settings.values.capture
        return SpeechSession(
            transcriber,
            cast(UnitOfWorkFactory, rt.uow),
            device=device,
            data_dir=rt.data_dir,
            keep_audio=s.keep_audio,
            media=rt.media,
            audio_retention_days=s.audio_retention_days,
            text_retention_days=s.text_retention_days,
        )

    return session
