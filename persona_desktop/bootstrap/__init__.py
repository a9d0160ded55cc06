"""The Qt-free composition root: the one place (with `app.py`) that picks concrete adapters.

Both the CLI and the tray app build their `Runtime` here, so a data dir always
means the same store, settings file and LLM host whichever way it is opened. The
capture pipelines are wired in `bootstrap.screen` and `bootstrap.speech`, imported only
when capture is used (they load numpy, PIL, Tesseract, Whisper).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import platformdirs
import sqlalchemy as sa

from persona_desktop.adapters.keys.store_key import KeySource
from persona_desktop.adapters.store.database import is_read_only
from persona_desktop.adapters.store.open_store import OpenedStore, open_store
from persona_desktop.adapters.store.unit_of_work import SqlUnitOfWorkFactory, utc_now
from persona_desktop.config import SETTINGS_FILE, Settings
from persona_desktop.ports import Embedder, LocalModel, MediaFiles, PassphrasePrompt
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
    store: OpenedStore
    clock: SystemClock = field(default_factory=SystemClock)

    @property
    def media(self) -> MediaFiles:
        """Kept crops and clips: sealed with the store's media key when the store is encrypted."""
        return self.store.media

    def llm(self) -> LocalModel:
        return llm_from(self.settings)

    def embedder(self) -> Embedder:
        """For recall by meaning (`recall.embeddings`), on the same Ollama host."""
        from persona_desktop.adapters.ollama_embed import OllamaEmbedder

        s = self.settings
        return OllamaEmbedder(
            host=s.ollama_host(),
            model=s.values.recall.embedding_model,
            timeout_s=s.values.ollama.timeout_seconds,
        )

    def close(self) -> None:
        self.store.close()

    @property
    def read_only(self) -> bool:
        """The store is damaged and was opened read-only: reading works, changes are refused."""
        return is_read_only(self.engine)


def make_llm(host: str, model: str, timeout_s: float) -> LocalModel:
    """The one place an `OllamaLLM` is built (imported here, so the CLI starts without httpx)."""
    from persona_desktop.adapters.ollama_llm import OllamaLLM

    return OllamaLLM(host=host, model=model, timeout_s=timeout_s)


def llm_from(settings: Settings) -> LocalModel:
    """The owner's Ollama host and model, as `ollama.*` says."""
    return make_llm(
        settings.ollama_host(),
        settings.values.ollama.model,
        settings.values.ollama.timeout_seconds,
    )


def load_settings(data_dir: Path | None) -> Settings:
    return Settings.load(settings_path(data_dir))


def open_runtime(
    data_dir: Path | None, prompt: PassphrasePrompt | None = None, encrypted: bool | None = None
) -> Runtime:
    """Open the data dir's store as `storage.encrypted` says (migrating it if it says otherwise).

    `prompt` asks the owner for the passphrase when no OS keyring holds the key and
    PERSONA_DESKTOP_PASSPHRASE is unset (the terminal's getpass, or the app's dialog).
    `encrypted` overrides the setting (`config set storage.encrypted` migrates first and
    saves the setting only once that worked)."""
    explicit = data_dir
    resolved = data_dir if data_dir is not None else default_data_dir()
    settings = load_settings(explicit if explicit is not None else None)
    ensure_private_dir(resolved)
    store = open_store(
        resolved,
        encrypted=settings.values.storage.encrypted if encrypted is None else encrypted,
        keys=KeySource(resolved, prompt),
        now=utc_now(),
    )
    return Runtime(resolved, settings, store.engine, SqlUnitOfWorkFactory(store.engine), store)
