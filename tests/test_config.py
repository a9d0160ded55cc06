"""Settings: defaults, validation with clear messages, one file per data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli


def test_defaults_of_the_design(cli: Cli) -> None:
    expected = {
        "sleep.enabled": "false",
        "sleep.quiet_minutes": "60",
        "sleep.period_days": "7",
        "sleep.max_documents": "24",
        "sleep.threshold": "0.6",
        "sleep.weights.relevance": "0.3",
        "capture.screen_enabled": "false",
        "capture.speech_enabled": "false",
    }
    for key, value in expected.items():
        assert cli("config", "get", key).out.strip() == value, key


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("sleep.enabled", "maybe", "true or false"),
        ("sleep.threshold", "1.5", "a number from 0 to 1"),
        ("sleep.quiet_minutes", "-3", "an integer from 0 to 1440"),
        ("sleep.max_documents", "many", "an integer from 1 to 1000"),
        ("sleep.window_start", "25:00", "a time as HH:MM"),
        ("capture.ocr_languages", "eng rus", "Tesseract language codes"),
    ],
)
def test_bad_values_name_the_key_and_what_is_allowed(cli: Cli, key: str, value: str, allowed: str) -> None:
    result = cli("config", "set", key, value)
    assert result.code == 1
    assert key in result.err and allowed in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_unknown_key(cli: Cli) -> None:
    result = cli("config", "get", "sleep.enable")
    assert result.code == 1 and "unknown setting 'sleep.enable'" in result.err


def test_settings_live_under_the_data_dir(cli: Cli, tmp_path: Path) -> None:
    assert cli("config", "set", "sleep.enabled", "true").code == 0
    stored = json.loads((cli.data_dir / "settings.json").read_text())
    assert stored["sleep.enabled"] is True
    other = Cli(tmp_path / "other", cli._capsys)
    assert other("config", "get", "sleep.enabled").out.strip() == "false"


def test_weights_are_renormalized(cli: Cli) -> None:
    from persona_desktop.bootstrap import load_settings

    cli("config", "set", "sleep.weights.relevance", "0.9")
    weights = load_settings(cli.data_dir).weights()
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights["relevance"] == pytest.approx(0.9 / 1.6)


def test_ollama_host_from_env(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from persona_desktop.bootstrap import load_settings

    assert load_settings(cli.data_dir).ollama_host() == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    assert load_settings(cli.data_dir).ollama_host() == "http://10.0.0.5:11434"
    cli("config", "set", "ollama.host", "http://192.168.1.2:11434")
    assert load_settings(cli.data_dir).ollama_host() == "http://192.168.1.2:11434"


def test_broken_settings_file_is_a_clear_error(cli: Cli) -> None:
    cli.data_dir.mkdir(parents=True)
    (cli.data_dir / "settings.json").write_text("{oops", encoding="utf-8")
    result = cli("config", "get", "sleep.enabled")
    assert result.code == 1 and "settings.json cannot be read" in result.err


@pytest.mark.parametrize("argv", [["approve"], ["bogus"], ["sleep"], ["fragments", "--kind", "video"]])
def test_usage_errors_are_one_line_and_non_zero(cli: Cli, argv: list[str]) -> None:
    result = cli.process(*argv)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1 and "error:" in result.err


def test_tray_app_without_a_graphical_session_says_so(cli: Cli) -> None:
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": "", "QT_QPA_PLATFORM": ""}
    result = cli.process(env=env)
    assert result.code == 1
    assert "no graphical session" in result.err and "Reinstalling" not in result.err
