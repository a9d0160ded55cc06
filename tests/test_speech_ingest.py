"""`persona-desktop ingest audio FILE...` end to end: real decode, real tiny.en, real store."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from persona_desktop.capture.speech_clips import purge_expired_clips
from tests.conftest import Cli
from tests.speech_support import SENTENCES, read_wav, silence, synth, white_noise, word_recall, write_wav
from tests.store_support import read_media

pytestmark = pytest.mark.timeout(180)


def _convert(src: Path, dst: Path) -> Path:
    subprocess.run(
        ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(src), str(dst)], check=True, timeout=60
    )
    return dst


@pytest.fixture
def audio_files(tmp_path: Path) -> dict[str, Path]:
    wav0 = synth(tmp_path / "s0.wav", SENTENCES[0])
    wav1 = synth(tmp_path / "s1.wav", SENTENCES[1])
    wav2 = synth(tmp_path / "s2.wav", SENTENCES[2])
    wav3 = synth(tmp_path / "s3.wav", SENTENCES[3])
    return {
        "wav": wav0,
        "flac": _convert(wav1, tmp_path / "s1.flac"),
        "mp3": _convert(wav2, tmp_path / "s2.mp3"),
        "ogg": _convert(wav3, tmp_path / "s3.ogg"),
        "silence": write_wav(tmp_path / "silence.wav", silence(8.0)),
        "noise": write_wav(tmp_path / "noise.wav", white_noise(8.0)),
    }


def test_ingest_audio_formats_with_one_bad_file(
    cli: Cli, audio_files: dict[str, Path], tmp_path: Path
) -> None:
    bad = tmp_path / "broken.mp3"
    bad.write_bytes(b"ID3 this is not really an mp3" * 20)
    files = [audio_files["wav"], bad, audio_files["flac"], audio_files["mp3"], audio_files["ogg"]]
    r = cli("ingest", "audio", *map(str, files))
    assert r.code == 1
    err_lines = r.err.strip().splitlines()
    assert (
        len(err_lines) == 1 and "broken.mp3" in err_lines[0] and "not a readable audio file" in err_lines[0]
    )
    assert r.out.count("new") == 4  # the four good files were stored

    frags = cli("fragments", "--kind", "speech", "--json").json()
    by_file: dict[str, list[dict]] = {}
    for f in frags:
        by_file.setdefault(Path(f["locator"]["file"]).name, []).append(f)
    assert sorted(by_file) == ["s0.wav", "s1.flac", "s2.mp3", "s3.ogg"]
    for i, name in enumerate(["s0.wav", "s1.flac", "s2.mp3", "s3.ogg"]):
        text = " ".join(f["text"] for f in by_file[name])
        assert word_recall(SENTENCES[i], text) >= 0.7, (name, text)
    for f in frags:
        loc = f["locator"]
        assert f["kind"] == "speech" and f["author"] == "unknown" and f["trust"] == "untrusted"
        assert f["ref"] == f"sp:{loc['recording_id']}:{loc['segment']}"
        assert loc["speaker"] == "unknown" and loc["origin"] == "file" and loc["clip"] is None
        assert 0 <= loc["start_s"] < loc["end_s"]
        start, end = datetime.fromisoformat(loc["start"]), datetime.fromisoformat(loc["end"])
        assert f["captured_at"] == loc["start"]
        assert abs((end - start).total_seconds() - (loc["end_s"] - loc["start_s"])) < 0.01
        assert loc["words"] and all(w["start_s"] <= w["end_s"] for w in loc["words"])


def test_reingest_keeps_refs_and_adds_nothing(cli: Cli, audio_files: dict[str, Path], tmp_path: Path) -> None:
    first = cli("ingest", "audio", "--json", str(audio_files["wav"]), str(audio_files["flac"]))
    assert first.code == 0
    assert [r["added"] for r in first.json()] == [r["segments"] for r in first.json()]
    refs = sorted(f["ref"] for f in cli("fragments", "--json").json())
    assert refs

    # Same content under another name and mtime: the same recording.
    copy = tmp_path / "copy.wav"
    copy.write_bytes(audio_files["wav"].read_bytes())
    os.utime(copy, (1_000_000_000, 1_000_000_000))
    again = cli("ingest", "audio", "--json", str(audio_files["wav"]), str(audio_files["flac"]), str(copy))
    assert again.code == 0
    assert [r["added"] for r in again.json()] == [0, 0, 0]
    assert sorted(f["ref"] for f in cli("fragments", "--json").json()) == refs


def test_silence_and_noise_files_give_zero_fragments(cli: Cli, audio_files: dict[str, Path]) -> None:
    r = cli("ingest", "audio", "--json", str(audio_files["silence"]), str(audio_files["noise"]))
    assert r.code == 0
    assert [x["segments"] for x in r.json()] == [0, 0]
    assert cli("fragments", "--json").json() == []


def test_recorded_at_and_origin(cli: Cli, audio_files: dict[str, Path], tmp_path: Path) -> None:
    # Speech starting 2 s into the file: absolute start = recorded-at + ~2 s.
    padded = write_wav(tmp_path / "padded.wav", np.concatenate([silence(2.0), read_wav(audio_files["wav"])]))
    r = cli("ingest", "audio", "--origin", "system", "--recorded-at", "2026-01-02T03:04:05Z", str(padded))
    assert r.code == 0, r.err
    [frag] = cli("fragments", "--json").json()
    assert frag["author"] == "other" and frag["trust"] == "untrusted"
    assert frag["locator"]["speaker"] == "other" and frag["locator"]["origin"] == "system"
    start = datetime.fromisoformat(frag["captured_at"])
    t0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert t0 + timedelta(seconds=1.4) <= start <= t0 + timedelta(seconds=2.6)


def test_microphone_origin_is_likely_owner_but_never_trusted(cli: Cli, audio_files: dict[str, Path]) -> None:
    assert cli("ingest", "audio", "--origin", "microphone", str(audio_files["wav"])).code == 0
    [frag] = cli("fragments", "--json").json()
    assert frag["locator"]["speaker"] == "likely-owner"
    assert frag["author"] == "unknown" and frag["trust"] == "untrusted"


def test_bad_inputs_are_one_line_errors(cli: Cli, tmp_path: Path, audio_files: dict[str, Path]) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    text = tmp_path / "notes.ogg"
    text.write_text("hello, I am not audio\n")
    r = cli("ingest", "audio", str(empty), str(tmp_path / "missing.flac"), str(text))
    assert r.code == 1
    lines = r.err.strip().splitlines()
    assert len(lines) == 3
    assert "empty.wav: the file is empty" in lines[0]
    assert "missing.flac: cannot read" in lines[1]
    assert "notes.ogg: not a readable audio file" in lines[2]
    assert cli("ingest", "audio", "--recorded-at", "yesterday", str(audio_files["wav"])).code == 1


def test_kept_clips_are_playable_and_expire(
    cli: Cli, audio_files: dict[str, Path], data_dir: Path, tmp_path: Path
) -> None:
    assert cli("config", "set", "capture.keep_audio", "true").code == 0
    recorded = datetime.now(UTC) - timedelta(days=2)
    r = cli("ingest", "audio", "--recorded-at", recorded.isoformat(), str(audio_files["wav"]))
    assert r.code == 0, r.err
    [frag] = cli("fragments", "--json").json()
    clip = data_dir / frag["locator"]["clip"]
    assert clip.suffix == ".ogg" and clip.is_file()
    assert not clip.read_bytes().startswith(b"OggS"), "the kept clip is not encrypted"
    sealed_clip = clip
    clip = tmp_path / "opened.ogg"  # what the app plays, from memory; ffprobe needs a file
    clip.write_bytes(read_media(data_dir, sealed_clip))
    probe = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-show_entries",
            "stream=codec_name,sample_rate,channels",
            "-of",
            "csv=p=0",
            str(clip),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert probe.stdout.strip().startswith("opus,") and probe.stdout.strip().endswith(",1")
    decoded = subprocess.run(
        [
            "ffmpeg",
            "-nostdin",
            "-loglevel",
            "error",
            "-i",
            str(clip),
            "-f",
            "s16le",
            "-ac",
            "1",
            "-ar",
            "16000",
            "-",
        ],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    seconds = len(decoded) / 2 / 16000
    assert abs(seconds - (frag["locator"]["end_s"] - frag["locator"]["start_s"])) < 0.6
    assert np.abs(np.frombuffer(decoded, "<i2")).max() > 1000  # there is sound in it

    now = datetime.now(UTC)
    clip = sealed_clip
    assert purge_expired_clips(data_dir, now, retention_days=7) == 0
    assert clip.exists()
    assert purge_expired_clips(data_dir, now, retention_days=1) == 1
    assert not clip.exists() and not clip.parent.exists()
    # The transcript stays (it follows the text retention, not the audio one).
    assert len(cli("fragments", "--json").json()) == 1


def test_forgetting_a_recording_deletes_its_kept_clips(
    cli: Cli, audio_files: dict[str, Path], data_dir: Path
) -> None:
    assert cli("config", "set", "capture.keep_audio", "true").code == 0
    assert cli("ingest", "audio", str(audio_files["wav"])).code == 0
    [frag] = cli("fragments", "--json").json()
    clip = data_dir / frag["locator"]["clip"]
    assert clip.is_file()
    [source] = cli("sources", "--json").json()
    result = cli("forget", "source", str(source["id"]))
    assert result.code == 0, result.err
    assert not clip.exists(), "the clip of a forgotten recording was kept"
    assert cli("fragments", "--json").json() == []
    assert audio_files["wav"].is_file()  # the owner's own file is never touched
