"""What every window needs from the outside, handed over by the composition root (app.py).

The ui never builds adapters itself: it gets a unit-of-work factory, a clock, the
settings and a few callables, all typed by ports; and the app's one "memory changed"
signal, which every write announces and every window follows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from persona_desktop.config import Settings
from persona_desktop.ports import LLM, Clock, Embedder, KeyGrabber, LocalModel, UnitOfWorkFactory
from persona_desktop.services.media import MediaReader
from persona_desktop.services.ollama_diagnosis import Diagnosis
from persona_desktop.ui.memory_events import MemoryEvents

LLMFor = Callable[[str, str], LLM]
"""(host, model) -> an LLM client, for "Test connection" before the settings are saved."""

Diagnose = Callable[[str, str], Diagnosis]
"""(host, model) -> what stands between the owner and a working model, with the next step."""

Diagnoser = Callable[[], Diagnose]
"""Called on the GUI thread (it imports the HTTP client there); its result runs on a worker.

A worker that imported the HTTP client while another thread imported the Ollama client
left a frozen build with a half-initialized pydantic ("partially initialized module")."""


@dataclass
class UiContext:
    data_dir: Path
    settings: Settings
    uow: UnitOfWorkFactory
    clock: Clock
    llm: Callable[[], LocalModel]
    llm_for: LLMFor
    autostart: Callable[[bool], None] | None = None
    diagnoser: Diagnoser | None = None
    key_grabber: KeyGrabber | None = None  # the desktop-wide search key (X11)
    media_dirs: list[Path] = field(default_factory=list)
    embedder: Callable[[], Embedder] | None = None  # recall by meaning, when recall.embeddings
    media_reader: MediaReader | None = None  # kept crops and clips, decrypted when sealed
    events: MemoryEvents = field(default_factory=MemoryEvents)  # "memory changed", for every window

    @property
    def media(self) -> MediaReader:
        if self.media_reader is None:
            self.media_reader = MediaReader(self.data_dir)
        return self.media_reader

    def save_settings(self) -> None:
        self.settings.save()
