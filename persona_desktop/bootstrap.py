"""The Qt-free composition root: the one place (with `app.py`) that picks concrete adapters.

Both the CLI and the tray app build their `Runtime` here, so a data dir always
means the same store, settings file and LLM host whichever way it is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import platformdirs
import sqlalchemy as sa

from persona_desktop.adapters.store.database import is_read_only, open_database
from persona_desktop.adapters.store.unit_of_work import SqlUnitOfWorkFactory, utc_now
from persona_desktop.config import SETTINGS_FILE, Settings
from persona_desktop.ports import LLM, Embedder
from persona_desktop.private_files import ensure_private_dir

APP_NAME = "persona-desktop"


def default_data_dir() -> Path:
    override = os.environ.get("PERSONA_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def settings_path(data_dir: Path | None) -> Path:
    """Under --data-dir when given, so that two data dirs never share state."""
    if data_dir is not None:
        return data_dir / SETTINGS_FILE
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / SETTINGS_FILE


class SystemClock:
    def now(self) -> datetime:
        return utc_now()


@dataclass
class Runtime:
    data_dir: Path
    settings: Settings
    engine: sa.Engine
    uow: SqlUnitOfWorkFactory
    clock: SystemClock = field(default_factory=SystemClock)

    def llm(self) -> LLM:
        from persona_desktop.adapters.ollama_llm import OllamaLLM

        s = self.settings
        return OllamaLLM(
            host=s.ollama_host(),
            model=str(s.get("ollama.model")),
            timeout_s=float(s.get("ollama.timeout_seconds")),
        )

    def embedder(self) -> Embedder:
        """For recall by meaning (`recall.embeddings`), on the same Ollama host."""
        from persona_desktop.adapters.ollama_embed import OllamaEmbedder

        s = self.settings
        return OllamaEmbedder(
            host=s.ollama_host(),
            model=str(s.get("recall.embedding_model")),
            timeout_s=float(s.get("ollama.timeout_seconds")),
        )

    def close(self) -> None:
        self.engine.dispose()

    @property
    def read_only(self) -> bool:
        """The store is damaged and was opened read-only: reading works, changes are refused."""
        return is_read_only(self.engine)


def load_settings(data_dir: Path | None) -> Settings:
    return Settings.load(settings_path(data_dir))


def open_runtime(data_dir: Path | None) -> Runtime:
    explicit = data_dir
    resolved = data_dir if data_dir is not None else default_data_dir()
    settings = load_settings(explicit if explicit is not None else None)
    ensure_private_dir(resolved)
    engine = open_database(resolved)
    return Runtime(resolved, settings, engine, SqlUnitOfWorkFactory(engine))
