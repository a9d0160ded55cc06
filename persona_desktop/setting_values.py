"""The owner's settings as frozen, typed sections: `settings.values.sleep.quiet_minutes` is an int.

`config.SETTINGS` stays the one registry (key, type, default, check, help): the sections
below only name its keys for code, a field `quiet_minutes` of `SleepSettings` under
`SettingValues.sleep` standing for the key `sleep.quiet_minutes`. They carry no defaults
and no checks of their own. `build_values` fills them from a reader of already-validated
values and checks every value against its field's type once more, so a value that
somehow slipped past validation stops here with the key's name instead of reaching code
typed for something else. tests/test_setting_values.py fails when a field and the
registry disagree on a key, a type or a default.

Code that needs a setting reads it here; only the generic paths (`config get/set/list`,
the Settings window) go by key string.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from persona_desktop.errors import ConfigError

Strings = tuple[str, ...]  # a list setting: immutable in a frozen snapshot


@dataclass(frozen=True, slots=True)
class SleepWeights:
    relevance: float
    frequency: float
    diversity: float
    recency: float
    consolidation: float
    richness: float

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclass(frozen=True, slots=True)
class SleepSettings:
    enabled: bool
    quiet_minutes: int
    period_days: int
    max_documents: int
    threshold: float
    review_floor: float
    auto_apply_per_document: int
    auto_apply_per_run: int
    weights: SleepWeights
    window_start: str
    window_end: str
    lease_seconds: int


@dataclass(frozen=True, slots=True)
class OllamaSettings:
    host: str
    model: str
    timeout_seconds: float
    retries: int
    retry_backoff_seconds: float


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    screen_enabled: bool
    interval_seconds: float
    max_gap_seconds: float
    ocr_languages: str
    ocr_min_confidence: float
    exclude_apps: Strings
    exclude_titles: Strings
    paused_until: str
    keep_images: bool
    image_retention_days: int
    text_retention_days: int
    periodic_with_flash: bool
    screen_confirmed: bool
    speech_enabled: bool
    microphone: str
    keep_audio: bool
    audio_retention_days: int
    whisper_model: str
    whisper_language: str


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    enabled: bool
    memory_interval: int
    skill_interval: int
    allowed_toolsets: Strings
    max_iterations: int
    timeout_seconds: float
    memory_prompt_path: str
    skill_prompt_path: str
    combined_prompt_path: str


@dataclass(frozen=True, slots=True)
class ChatSettings:
    include_observations: bool


@dataclass(frozen=True, slots=True)
class RecallSettings:
    budget_tokens: int
    embeddings: bool
    embedding_model: str


@dataclass(frozen=True, slots=True)
class SearchSettings:
    global_shortcut: str


@dataclass(frozen=True, slots=True)
class McpSettings:
    enabled: bool
    read_scopes: Strings
    allow_proposals: bool


@dataclass(frozen=True, slots=True)
class ExportSettings:
    enabled: bool
    path: str


@dataclass(frozen=True, slots=True)
class StorageSettings:
    encrypted: bool
    max_mb: int
    min_free_mb: int


@dataclass(frozen=True, slots=True)
class AppSettings:
    first_run_done: bool
    start_at_login: bool


@dataclass(frozen=True, slots=True)
class SettingValues:
    """Every setting, typed, as one immutable snapshot (a `set` builds the next one)."""

    sleep: SleepSettings
    ollama: OllamaSettings
    capture: CaptureSettings
    review: ReviewSettings
    chat: ChatSettings
    recall: RecallSettings
    search: SearchSettings
    mcp: McpSettings
    export: ExportSettings
    storage: StorageSettings
    app: AppSettings


Section = TypeVar("Section")
Leaf = type[bool] | type[int] | type[float] | type[str] | type[Strings]


def leaf_types() -> dict[str, Leaf]:
    """Every key the sections name, with the Python type its field holds."""
    return _leaves(SettingValues, "")


def build_values(read: Callable[[str], object]) -> SettingValues:
    """The snapshot, from `read(key)` (the stored value, or the registry's default)."""
    return _section(SettingValues, "", read)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _leaves(cls: type, prefix: str) -> dict[str, Leaf]:
    out: dict[str, Leaf] = {}
    for name, hint in _hints(cls).items():
        key = prefix + name
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            out |= _leaves(hint, key + ".")
        else:
            out[key] = hint
    return out


def _section(cls: type[Section], prefix: str, read: Callable[[str], object]) -> Section:
    values: dict[str, object] = {}
    for name, hint in _hints(cls).items():
        key = prefix + name
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[name] = _section(hint, key + ".", read)
        else:
            values[name] = _typed(key, hint, read(key))
    return cls(**values)


def _typed(key: str, kind: Leaf, value: object) -> object:
    """The value as its field's type, or a one-line error naming the key."""
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if (
        kind is float
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
    ):
        return float(value)
    if kind is str and isinstance(value, str):
        return value
    if kind == Strings and isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{key}: {value!r} is not valid here; expected {_name(kind)}")


def _name(kind: Leaf) -> str:
    if kind == Strings:
        return "a list of strings"
    return {bool: "true or false", int: "an integer", float: "a finite number"}.get(kind, "a string")
