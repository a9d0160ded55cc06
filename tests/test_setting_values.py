"""Typed settings (`settings.values`): tied to the registry, and never holding a wrong-typed value."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from persona_desktop import config
from persona_desktop.config import SETTINGS, Setting, Settings
from persona_desktop.domain.scoring import DEFAULT_WEIGHTS
from persona_desktop.errors import ConfigError
from persona_desktop.service_configs import recall_config, review_config, sleep_config
from persona_desktop.services.recall import RecallConfig
from persona_desktop.services.review_setup import ReviewConfig
from persona_desktop.services.sleep_cycle import SleepConfig
from persona_desktop.setting_values import SettingValues, Strings, leaf_types

KINDS: dict[type, object] = {bool: bool, int: int, float: float, str: str, list: Strings}


def _leaf(values: SettingValues, key: str) -> object:
    node: object = values
    for part in key.split("."):
        node = getattr(node, part)
    return node


def disagreements() -> list[str]:
    """Where the typed sections and the registry differ on a key, a type or a default."""
    typed = leaf_types()
    problems = [
        f"{k}: in the registry, not in the typed sections" for k in sorted(set(SETTINGS) - set(typed))
    ]
    problems += [
        f"{k}: in the typed sections, not in the registry" for k in sorted(set(typed) - set(SETTINGS))
    ]
    for key in sorted(set(typed) & set(SETTINGS)):
        setting = SETTINGS[key]
        if KINDS.get(setting.kind) != typed[key]:
            problems.append(f"{key}: the registry says {setting.kind.__name__}, the field {typed[key]}")
    if problems:
        return problems
    try:
        defaults = Settings(None).values
    except ConfigError as exc:
        return [f"the defaults do not fit the typed sections: {exc}"]
    for key, setting in SETTINGS.items():
        value = _leaf(defaults, key)
        expected = tuple(setting.default) if isinstance(setting.default, list) else setting.default
        if value != expected or (type(value) is not typed[key] and typed[key] != Strings):
            problems.append(f"{key}: default {setting.default!r}, typed {value!r}")
    return problems


def test_the_typed_sections_name_every_registry_key_with_its_type_and_default() -> None:
    assert disagreements() == []


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (
            lambda s: s.update({"sleep.nap_minutes": Setting("sleep.nap_minutes", int, 5, "")}),
            "sleep.nap_minutes",
        ),
        (lambda s: s.pop("chat.include_observations"), "chat.include_observations: in the typed"),
        (
            lambda s: s.update(
                {"sleep.quiet_minutes": dataclasses.replace(s["sleep.quiet_minutes"], kind=float)}
            ),
            "sleep.quiet_minutes: the registry says float",
        ),
        (
            lambda s: s.update({"sleep.threshold": dataclasses.replace(s["sleep.threshold"], default="0.6")}),
            "sleep.threshold",
        ),
        (
            lambda s: s.update({"mcp.read_scopes": dataclasses.replace(s["mcp.read_scopes"], kind=str)}),
            "mcp.read_scopes: the registry says str",
        ),
    ],
)
def test_a_registry_that_drifts_from_the_typed_sections_is_caught(
    monkeypatch: pytest.MonkeyPatch, change: object, found: str
) -> None:
    registry = dict(SETTINGS)
    change(registry)  # type: ignore[operator]
    monkeypatch.setattr("persona_desktop.config.SETTINGS", registry)
    monkeypatch.setattr(f"{__name__}.SETTINGS", registry)
    assert any(found in p for p in disagreements()), disagreements()


def test_values_are_the_python_types_code_expects(tmp_path: Path) -> None:
    """JSON says 1 for a float and 60.0 for an int; the typed reader still gets float and int."""
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "sleep.threshold": 1,
                "sleep.quiet_minutes": 60.0,
                "sleep.enabled": "yes",
                "capture.exclude_apps": "keepassxc, Bitwarden",
                "ollama.timeout_seconds": "30",
            }
        )
    )
    values = Settings.load(path).values
    assert values.sleep.threshold == 1.0 and type(values.sleep.threshold) is float
    assert values.sleep.quiet_minutes == 60 and type(values.sleep.quiet_minutes) is int
    assert values.sleep.enabled is True
    assert values.capture.exclude_apps == ("keepassxc", "Bitwarden")
    assert values.ollama.timeout_seconds == 30.0 and type(values.ollama.timeout_seconds) is float
    for key, kind in leaf_types().items():
        value = _leaf(values, key)
        if kind == Strings:
            assert isinstance(value, tuple) and all(isinstance(v, str) for v in value), key
        else:
            assert type(value) is kind, key


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "sleep.threshold",
            float("nan"),
            "sleep.threshold: nan is not a finite number; allowed: a number from 0 to 1",
        ),
        (
            "sleep.weights.relevance",
            float("inf"),
            "sleep.weights.relevance: inf is not a finite number; allowed: a number from 0 to 1",
        ),
        (
            "sleep.quiet_minutes",
            "sixty",
            "sleep.quiet_minutes: 'sixty' is not valid; allowed: an integer from 0 to 1440",
        ),
        (
            "sleep.quiet_minutes",
            True,
            "sleep.quiet_minutes: True is not valid; allowed: an integer from 0 to 1440",
        ),
        ("sleep.enabled", 1, "sleep.enabled: 1 is not valid; allowed: true or false"),
        (
            "capture.exclude_apps",
            [1, 2],
            "capture.exclude_apps: [1, 2] is not valid; allowed: a comma-separated list or a JSON list of strings",
        ),
        ("ollama.model", None, "ollama.model: None is not valid; allowed: a string"),
        (
            "storage.max_mb",
            1e400,
            "storage.max_mb: inf is not valid; allowed: an integer from 10 to 10000000",
        ),
    ],
)
def test_a_hostile_settings_file_is_refused_with_the_same_message_naming_the_key(
    tmp_path: Path, key: str, value: object, message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"ollama.model": "qwen2.5:7b", key: value}))
    with pytest.raises(ConfigError) as refused:
        Settings.load(path)
    assert str(refused.value) == f"settings file {path}: {message}"
    with pytest.raises(ConfigError) as given:  # handed in directly, the same check applies
        Settings(None, {key: value})
    assert str(given.value) == message


def test_a_value_that_slipped_past_validation_never_reaches_typed_code() -> None:
    settings = Settings(None)
    settings._values["sleep.quiet_minutes"] = "60"  # as a bug elsewhere might leave it
    with pytest.raises(
        ConfigError, match=r"^sleep\.quiet_minutes: '60' is not valid here; expected an integer$"
    ):
        _ = settings.values
    settings._values["sleep.quiet_minutes"] = 60
    settings._values["sleep.threshold"] = float("nan")
    with pytest.raises(
        ConfigError, match=r"^sleep\.threshold: nan is not valid here; expected a finite number$"
    ):
        _ = settings.values


def test_the_snapshot_follows_every_accepted_change_and_ignores_a_refused_one() -> None:
    settings = Settings(None)
    before = settings.values
    settings.set("sleep.quiet_minutes", "5")
    assert settings.values.sleep.quiet_minutes == 5 and before.sleep.quiet_minutes == 60
    with pytest.raises(ConfigError):
        settings.set("sleep.quiet_minutes", "-1")
    assert settings.values.sleep.quiet_minutes == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.values.sleep.quiet_minutes = 1  # type: ignore[misc]


def test_a_change_made_while_a_snapshot_is_built_is_never_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture thread builds the snapshot while the GUI thread sets a value: the next read sees it."""
    settings = Settings(None)
    real = config.build_values
    interleaved: list[bool] = []

    def build_while_the_owner_changes_a_setting(read: Callable[[str], object]) -> SettingValues:
        values = real(read)  # read before the change ...
        if not interleaved:
            interleaved.append(True)
            settings.set("sleep.quiet_minutes", 5)  # ... which lands before the snapshot is kept
        return values

    monkeypatch.setattr(config, "build_values", build_while_the_owner_changes_a_setting)
    assert settings.values.sleep.quiet_minutes == 60
    assert settings.values.sleep.quiet_minutes == 5


def test_service_config_defaults_match_the_registry() -> None:
    """The services keep their own defaults (tests build them bare): they must be the owner's."""
    values = Settings(None).values
    assert sleep_config(values) == SleepConfig(weights=dict(DEFAULT_WEIGHTS))
    assert recall_config(values) == RecallConfig()
    built = review_config(values)
    assert built == dataclasses.replace(ReviewConfig(), prompt_paths=built.prompt_paths)
    assert built.prompt_paths == {"memory": "", "skill": "", "combined": ""}
