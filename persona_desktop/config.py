"""Typed, validated settings stored as one JSON file in the user config dir.

Every key has a type, a default and a check; `set` refuses a bad value with a
message naming the key and what is allowed, and never writes a half-valid file.
`SETTINGS` is the one registry. Code reads the typed snapshot `Settings.values`
(setting_values.py: `settings.values.sleep.quiet_minutes` is an int); `get(key)` by
string serves only the generic paths, `config get/set/list` and the Settings window.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from persona_desktop.domain.scoring import DEFAULT_WEIGHTS, SIGNALS, normalize_weights
from persona_desktop.errors import ConfigError
from persona_desktop.private_files import ensure_private_dir
from persona_desktop.setting_values import SettingValues, build_values

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
SETTINGS_FILE = "settings.json"

SettingValue = bool | int | float | str | list[str]
"""What the string-keyed path holds; typed code reads `Settings.values` instead."""

_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


@dataclass(frozen=True, slots=True)
class Setting:
    key: str
    kind: type
    default: SettingValue
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    pattern: re.Pattern[str] | None = None
    pattern_help: str = ""

    def allowed(self) -> str:
        if self.kind is bool:
            return "true or false"
        if self.choices and self.kind is list:
            return "a comma-separated list of " + ", ".join(self.choices)
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.pattern is not None:
            return self.pattern_help
        if self.kind is list:
            return "a comma-separated list or a JSON list of strings"
        if self.kind in (int, float):
            name = "an integer" if self.kind is int else "a number"
            if self.minimum is not None and self.maximum is not None:
                return f"{name} from {_fmt(self.minimum)} to {_fmt(self.maximum)}"
            if self.minimum is not None:
                return f"{name} of at least {_fmt(self.minimum)}"
            return name
        return "a string"


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _s(key: str, kind: type, default: SettingValue, help: str, **kw: Any) -> Setting:
    return Setting(key, kind, default, help, **kw)


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        _s("sleep.enabled", bool, False, "Master switch of the nightly sleep cycle (off by default)."),
        _s(
            "sleep.quiet_minutes",
            int,
            60,
            "Minutes without owner activity before a cycle may run.",
            minimum=0,
            maximum=1440,
        ),
        _s(
            "sleep.period_days", int, 7, "How many days back a cycle reads fragments.", minimum=1, maximum=365
        ),
        _s(
            "sleep.max_documents",
            int,
            24,
            "At most this many documents (LLM calls) per run.",
            minimum=1,
            maximum=1000,
        ),
        _s(
            "sleep.threshold",
            float,
            0.6,
            "Score at or above which a proven owner fact applies by itself.",
            minimum=0.0,
            maximum=1.0,
        ),
        _s(
            "sleep.review_floor",
            float,
            0.3,
            "Candidates scoring below this are dropped, not reviewed.",
            minimum=0.0,
            maximum=1.0,
        ),
        _s(
            "sleep.auto_apply_per_document",
            int,
            3,
            "At most this many facts apply by themselves from one document or conversation; the rest wait ('too many at once').",
            minimum=0,
            maximum=100,
        ),
        _s(
            "sleep.auto_apply_per_run",
            int,
            10,
            "At most this many facts apply by themselves in one cycle or one chat review; the rest wait.",
            minimum=0,
            maximum=1000,
        ),
        *[
            _s(
                f"sleep.weights.{name}",
                float,
                DEFAULT_WEIGHTS[name],
                f"Weight of the {name} signal (weights are renormalized to sum 1).",
                minimum=0.0,
                maximum=1.0,
            )
            for name in SIGNALS
        ],
        _s(
            "sleep.window_start",
            str,
            "02:00",
            "Start of the nightly window (HH:MM, local time).",
            pattern=_HHMM,
            pattern_help="a time as HH:MM",
        ),
        _s(
            "sleep.window_end",
            str,
            "05:00",
            "End of the nightly window (HH:MM, local time).",
            pattern=_HHMM,
            pattern_help="a time as HH:MM",
        ),
        _s(
            "sleep.lease_seconds",
            int,
            900,
            "How long a runner's lease lasts without renewal.",
            minimum=10,
            maximum=86400,
        ),
        _s("ollama.host", str, "", "Ollama host URL; empty means OLLAMA_HOST, else http://127.0.0.1:11434."),
        _s("ollama.model", str, "llama3.1:8b", "Model name as `ollama list` shows it."),
        _s(
            "ollama.timeout_seconds",
            float,
            120.0,
            "Seconds to wait for one LLM reply.",
            minimum=1.0,
            maximum=3600.0,
        ),
        _s(
            "ollama.retries",
            int,
            2,
            "Retries of a transient LLM error (connection, timeout, 5xx).",
            minimum=0,
            maximum=10,
        ),
        _s(
            "ollama.retry_backoff_seconds",
            float,
            1.0,
            "First retry delay; doubles each retry.",
            minimum=0.0,
            maximum=600.0,
        ),
        _s("capture.screen_enabled", bool, False, "Capture the screen (off by default)."),
        _s(
            "capture.interval_seconds",
            float,
            10.0,
            "Seconds between screen grabs.",
            minimum=1.0,
            maximum=3600.0,
        ),
        _s(
            "capture.max_gap_seconds",
            float,
            300.0,
            "Force an OCR pass after this many seconds even if nothing changed.",
            minimum=10.0,
            maximum=86400.0,
        ),
        _s(
            "capture.ocr_languages",
            str,
            "eng",
            "Tesseract languages, e.g. eng or eng+rus.",
            pattern=re.compile(r"^[a-z_]{3,}(\+[a-z_]{3,})*$"),
            pattern_help="Tesseract language codes joined by +, e.g. eng+rus",
        ),
        _s(
            "capture.ocr_min_confidence",
            float,
            50.0,
            "OCR lines below this mean confidence are dropped as noise.",
            minimum=0.0,
            maximum=100.0,
        ),
        _s(
            "capture.exclude_apps",
            list,
            [
                "keepassxc",
                "keepass",
                "1password",
                "bitwarden",
                "lastpass",
                "enpass",
                "seahorse",
                "gnome-keyring",
            ],
            "Applications never captured (matched against the window class, case-insensitive).",
        ),
        _s(
            "capture.exclude_titles",
            list,
            ["password", "private browsing", "incognito", "inprivate", "keepassxc", "1password", "bitwarden"],
            "Windows never captured when the title contains one of these (case-insensitive).",
        ),
        _s(
            "capture.paused_until",
            str,
            "",
            "Capture is paused until this time (ISO 8601), or until you resume ('resume'); empty means not paused.",
        ),
        _s(
            "capture.keep_images",
            bool,
            False,
            "Keep a downscaled, redacted crop of each capture for provenance.",
        ),
        _s("capture.image_retention_days", int, 7, "Days kept screen crops live.", minimum=1, maximum=3650),
        _s(
            "capture.text_retention_days",
            int,
            30,
            "Days kept screen and speech text live (fragments cited by a fact are kept).",
            minimum=1,
            maximum=3650,
        ),
        _s(
            "capture.periodic_with_flash",
            bool,
            False,
            "On GNOME (Wayland) every screenshot flashes the screen and plays the shutter sound; capture periodically anyway.",
        ),
        _s(
            "capture.screen_confirmed",
            bool,
            False,
            "On Wayland, the desktop allowed a first screenshot taken from the 'Enable screen capture' window.",
        ),
        _s("capture.speech_enabled", bool, False, "Capture speech from the microphone (off by default)."),
        _s("capture.microphone", str, "", "Microphone name; empty means the system default."),
        _s(
            "capture.keep_audio",
            bool,
            False,
            "Keep compressed audio clips of speech segments for provenance.",
        ),
        _s("capture.audio_retention_days", int, 7, "Days kept speech clips live.", minimum=1, maximum=3650),
        _s(
            "capture.whisper_model",
            str,
            "",
            "faster-whisper model name or folder; empty means the bundled tiny.en.",
        ),
        _s(
            "capture.whisper_language",
            str,
            "",
            "Spoken language code for a multilingual model; empty means auto (tiny.en is English only).",
        ),
        _s(
            "review.enabled",
            bool,
            False,
            "Review the live chat for memories every few turns (off by default).",
        ),
        _s(
            "review.memory_interval",
            int,
            10,
            "Owner turns between two memory reviews.",
            minimum=1,
            maximum=1000,
        ),
        _s(
            "review.skill_interval",
            int,
            10,
            "Turns or tool iterations between two skill reviews.",
            minimum=1,
            maximum=1000,
        ),
        _s("review.allowed_toolsets", list, ["memory"], "Tool sets the reviewer may use: memory, skills."),
        _s(
            "review.max_iterations",
            int,
            16,
            "At most this many reviewer tool rounds.",
            minimum=1,
            maximum=200,
        ),
        _s(
            "review.timeout_seconds",
            float,
            180.0,
            "A review still running after this is cancelled.",
            minimum=5.0,
            maximum=3600.0,
        ),
        _s(
            "review.memory_prompt_path",
            str,
            "",
            "Own memory review prompt file; empty means the built-in one.",
        ),
        _s(
            "review.skill_prompt_path", str, "", "Own skill review prompt file; empty means the built-in one."
        ),
        _s(
            "review.combined_prompt_path",
            str,
            "",
            "Own combined review prompt file; empty means the built-in one.",
        ),
        _s(
            "chat.include_observations",
            bool,
            False,
            "Let the chat prompt carry observations, marked as unverified hypotheses.",
        ),
        _s(
            "recall.budget_tokens",
            int,
            1500,
            "Tokens of the chat prompt given to remembered facts (the relevant ones first).",
            minimum=0,
            maximum=100000,
        ),
        _s(
            "recall.embeddings",
            bool,
            False,
            "Also recall facts by meaning, with embeddings from your Ollama host (stored locally).",
        ),
        _s(
            "recall.embedding_model", str, "nomic-embed-text", "Ollama embedding model for recall by meaning."
        ),
        _s(
            "search.global_shortcut",
            str,
            "",
            "A desktop-wide key that opens search (X11), e.g. Ctrl+Alt+Space; empty means none.",
        ),
        _s("mcp.enabled", bool, False, "Serve the memory to other assistants over MCP (off by default)."),
        _s(
            "mcp.read_scopes",
            list,
            ["facts"],
            "What MCP clients may read: facts, and captured chat, screen or speech only when listed.",
            choices=("facts", "chat", "screen", "speech"),
        ),
        _s(
            "mcp.allow_proposals",
            bool,
            True,
            "Let MCP clients propose facts; a proposal only waits for your review.",
        ),
        _s("export.enabled", bool, False, "Mirror approved facts and skills into a Markdown folder."),
        _s("export.path", str, "", "Folder for the Markdown export (an Obsidian vault works)."),
        _s(
            "storage.encrypted",
            bool,
            True,
            "Keep the store, kept crops and clips encrypted (key in the OS keyring, else a passphrase).",
        ),
        _s(
            "storage.max_mb",
            int,
            2048,
            "Storage budget in MB: past 80 % the tray warns; past 100 % the oldest captures no fact cites go.",
            minimum=10,
            maximum=10_000_000,
        ),
        _s(
            "storage.min_free_mb",
            int,
            1024,
            "Capture pauses while the disk holding the data dir has less free space than this (MB).",
            minimum=0,
            maximum=10_000_000,
        ),
        _s("app.first_run_done", bool, False, "The first-run explanation has been shown."),
        _s("app.start_at_login", bool, False, "Start Persona Desktop at login (XDG autostart)."),
    ]
}


def _parse(setting: Setting, value: Any) -> SettingValue:
    key, kind = setting.key, setting.kind
    bad = ConfigError(f"{key}: {value!r} is not valid; allowed: {setting.allowed()}")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in (
            "true",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "1",
            "0",
        ):
            return value.strip().lower() in ("true", "yes", "on", "1")
        raise bad
    if kind in (int, float):
        if isinstance(value, bool):
            raise bad
        try:
            number: float = kind(value) if not isinstance(value, str) else kind(value.strip())
        except (TypeError, ValueError, OverflowError):
            raise bad from None
        if not math.isfinite(number):  # NaN passes every comparison below
            raise ConfigError(f"{key}: {value!r} is not a finite number; allowed: {setting.allowed()}")
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise bad
        if setting.minimum is not None and number < setting.minimum:
            raise bad
        if setting.maximum is not None and number > setting.maximum:
            raise bad
        return number
    if kind is list:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    raise bad from None
            else:
                value = [p.strip() for p in text.split(",") if p.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad
        if setting.choices and not all(v in setting.choices for v in value):
            raise bad
        return list(value)
    if not isinstance(value, str):
        raise bad
    if setting.choices and value not in setting.choices:
        raise bad
    if setting.pattern is not None and value and not setting.pattern.match(value):
        raise bad
    return value


def unknown_setting(key: str) -> ConfigError:
    """ "unknown setting 'sleep.enable'; did you mean sleep.enabled?", in one line."""
    names = list(SETTINGS)
    near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if not near:  # a key given without its end, e.g. capture.screen for capture.screen_enabled
        near = [k for k in names if k.startswith(key) and len(key) >= 4][:1]
    hint = f"did you mean {near[0]}?" if near else "`persona-desktop config list` shows every setting"
    return ConfigError(f"unknown setting {key!r}; {hint}")


class Settings:
    """The owner's settings: defaults overlaid with what the file holds."""

    def __init__(self, path: Path | None, values: dict[str, Any] | None = None) -> None:
        """`values` are validated as `set` would: nothing unchecked is ever held."""
        self.path = path
        self._values: dict[str, SettingValue] = {}
        for key, value in (values or {}).items():
            setting = SETTINGS.get(key)
            if setting is None:
                raise unknown_setting(key)
            self._values[key] = _parse(setting, value)
        self._version = 0  # bumped after every accepted change
        self._typed: tuple[int, SettingValues] | None = None

    @classmethod
    def load(cls, path: Path) -> Settings:
        if not path.exists():
            return cls(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"settings file {path} cannot be read: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"settings file {path} must hold a JSON object")
        values: dict[str, SettingValue] = {}
        for key, value in raw.items():
            setting = SETTINGS.get(key)
            if setting is None:
                continue  # a key from a newer or older version: ignored, kept on disk
            try:
                values[key] = _parse(setting, value)
            except ConfigError as exc:
                raise ConfigError(f"settings file {path}: {exc}") from None
        return cls(path, values)

    @property
    def values(self) -> SettingValues:
        """Every setting, typed (`settings.values.sleep.quiet_minutes`): what code reads."""
        version, typed = self._version, self._typed
        if typed is None or typed[0] != version:
            # A capture thread may read while the GUI thread sets: a snapshot built across a
            # change is stamped with the version before it, so the next read builds anew.
            typed = (version, build_values(self.get))
            self._typed = typed
        return typed[1]

    def get(self, key: str) -> SettingValue:
        """By key string: only for the generic paths (`config get`, the Settings window)."""
        setting = SETTINGS.get(key)
        if setting is None:
            raise unknown_setting(key)
        return self._values.get(key, setting.default)

    def set(self, key: str, value: Any) -> SettingValue:
        """Validate and store one value (in memory; `save()` writes the file)."""
        setting = SETTINGS.get(key)
        if setting is None:
            raise unknown_setting(key)
        parsed = _parse(setting, value)
        if key.startswith("sleep.weights.") and isinstance(parsed, float):
            trial = self.weights_raw() | {key.removeprefix("sleep.weights."): parsed}
            if sum(trial.values()) <= 0:
                raise ConfigError(f"{key}: the six weights must not all be 0")
        self._values[key] = parsed
        self._version += 1
        return parsed

    def validate(self, key: str, value: Any) -> SettingValue:
        """Check a value without storing it (for as-you-type validation)."""
        setting = SETTINGS.get(key)
        if setting is None:
            raise unknown_setting(key)
        return _parse(setting, value)

    def save(self) -> None:
        if self.path is None:
            return
        ensure_private_dir(self.path.parent, "the settings folder")  # 0700 even on a new data dir
        existing: dict[str, Any] = {}
        if self.path.exists():
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                existing = loaded if isinstance(loaded, dict) else {}
            except (OSError, json.JSONDecodeError):
                existing = {}
        data = existing | self._values
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".settings-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2, sort_keys=True)
                fh.write("\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a full disk leaves no half-written temp file behind
            raise

    def as_dict(self) -> dict[str, SettingValue]:
        return {key: self.get(key) for key in SETTINGS}

    def weights_raw(self) -> dict[str, float]:
        return self.values.sleep.weights.as_dict()

    def weights(self) -> dict[str, float]:
        return normalize_weights(self.weights_raw())

    def ollama_host(self) -> str:
        host = self.values.ollama.host or os.environ.get("OLLAMA_HOST", "") or DEFAULT_OLLAMA_HOST
        return host if "://" in host else f"http://{host}"

    def format(self, key: str) -> str:
        value = self.get(key)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return ",".join(value)
        return str(value)


SettingsSaver = Callable[[Settings], None]
