"""The live path: a private PulseAudio with a virtual microphone, Qt's QAudioSource, the real model.

A null sink `vspk` plus `module-remap-source` on its monitor makes `vmic`, a source Qt
lists as a microphone (Qt skips `.monitor` sources). paplay speaks an espeak-ng
sentence into the sink; `SpeechRecorder` (ui/audio_source.py) must turn it into a
stored fragment with capture-time timestamps. The no-microphone case runs in a child
process pointed at no sound server (Qt's audio backend is per process).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from persona_desktop.adapters.whisper_transcriber import WhisperTranscriber
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.speech_live import SessionStats, SpeechSession
from persona_desktop.domain.model import Author, Kind, Trust
from persona_desktop.errors import CaptureUnavailableError
from tests.speech_support import SENTENCES, Pulse, synth, word_recall

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pulse(pulse_server: Pulse) -> Pulse:
    return pulse_server


@pytest.fixture(scope="module")
def transcriber() -> Iterator[WhisperTranscriber]:
    t = WhisperTranscriber(idle_unload_s=0)
    t.load()
    yield t
    t.close()


def _recorder(  # type: ignore[no-untyped-def]
    runtime: Runtime, transcriber: WhisperTranscriber, microphone: str = "", *, native_format: bool = False
):
    from persona_desktop.ui.audio_source import SpeechRecorder

    def factory(device: str) -> SpeechSession:
        return SpeechSession(transcriber, runtime.uow, device=device, data_dir=runtime.data_dir)

    return SpeechRecorder(factory, microphone, native_format=native_format)


def test_the_virtual_microphone_is_listed(pulse: Pulse, qapp: object) -> None:
    from persona_desktop.ui.audio_source import find_microphone, list_microphones

    mics = list_microphones()
    assert mics, "Qt sees no audio input: was QtMultimedia started before PULSE_SERVER was set?"
    assert find_microphone("").description() == mics[0]
    assert find_microphone("vmic").description() == mics[0]  # by id works too
    with pytest.raises(CaptureUnavailableError, match=r"microphone 'Studio Mic' not found; available: "):
        find_microphone("Studio Mic")


@pytest.mark.parametrize("native_format", [False, True], ids=["16k-mono", "device-48k-stereo"])
def test_spoken_sentence_becomes_a_fragment(
    pulse: Pulse,
    qtbot: QtBot,
    runtime: Runtime,
    transcriber: WhisperTranscriber,
    tmp_path: Path,
    native_format: bool,
) -> None:
    wav = synth(tmp_path / "say.wav", SENTENCES[0])
    recorder = _recorder(runtime, transcriber, native_format=native_format)
    try:
        with qtbot.waitSignal(recorder.started, timeout=10_000) as started:
            recorder.start()
        fmt = recorder.format_used
        assert fmt is not None
        if native_format:  # the virtual mic's own format: 48 kHz stereo, converted by us
            assert (fmt.sampleRate(), fmt.channelCount()) == (48000, 2)
        else:
            assert (fmt.sampleRate(), fmt.channelCount()) == (16000, 1)
        recording_id = started.args[0]
        assert recorder.running and recorder.recording_id == recording_id
        qtbot.waitUntil(lambda: recorder.heard_seconds() >= 0.5, timeout=10_000)  # some silence first

        played_from = datetime.now(UTC)
        with qtbot.waitSignal(recorder.fragments_added, timeout=30_000) as added:
            player = subprocess.Popen(["paplay", f"--device={pulse.sink}", str(wav)], env=pulse.env)
            qtbot.waitUntil(lambda: player.poll() is not None, timeout=20_000)
            played_to = datetime.now(UTC)
            assert player.returncode == 0
        assert added.args[0] >= 1  # cut by the pause after the sentence, before stop

        with qtbot.waitSignal(recorder.stopped, timeout=30_000) as stopped:
            recorder.stop()
        stats: SessionStats = stopped.args[0]
        assert stats.errors == [] and stats.stored >= 1
        assert not recorder.running
    finally:
        recorder.shutdown()

    with runtime.uow.read() as uow:
        frags = uow.fragments.all(Kind.SPEECH)
    assert frags and all(f.ref.startswith(f"sp:{recording_id}:") for f in frags)
    assert word_recall(SENTENCES[0], " ".join(f.text for f in frags)) >= 0.7
    for f in frags:
        assert f.author is Author.UNKNOWN and f.trust is Trust.UNTRUSTED
        assert f.locator["speaker"] == "likely-owner" and f.locator["origin"] == "microphone"
        assert f.locator["device"] == "Remapped Monitor of Null Output"
        # Timestamps are when the words were heard, not when they were stored.
        assert played_from - timedelta(seconds=0.5) <= f.captured_at <= played_to
        assert datetime.fromisoformat(f.locator["end"]) <= played_to + timedelta(seconds=1.0)


def test_silence_on_the_microphone_stores_nothing(
    pulse: Pulse, qtbot: QtBot, runtime: Runtime, transcriber: WhisperTranscriber
) -> None:
    recorder = _recorder(runtime, transcriber)
    try:
        with qtbot.waitSignal(recorder.started, timeout=10_000):
            recorder.start()
        qtbot.waitUntil(lambda: recorder.heard_seconds() >= 2.0, timeout=20_000)  # two seconds of it
        with qtbot.waitSignal(recorder.stopped, timeout=30_000) as stopped:
            recorder.stop()
    finally:
        recorder.shutdown()
    assert stopped.args[0].chunks == 0
    with runtime.uow.read() as uow:
        assert uow.fragments.all(Kind.SPEECH) == []


def test_pause_then_resume_at_once_starts_a_new_recording(
    pulse: Pulse, qtbot: QtBot, runtime: Runtime, transcriber: WhisperTranscriber
) -> None:
    recorder = _recorder(runtime, transcriber)
    try:
        with qtbot.waitSignal(recorder.started, timeout=10_000) as first:
            recorder.start()
        with (
            qtbot.waitSignal(recorder.stopped, timeout=30_000),
            qtbot.waitSignal(recorder.started, timeout=30_000) as second,
        ):
            recorder.pause()
            recorder.resume()  # while the first recording is still closing
        assert second.args[0] != first.args[0]
        assert recorder.running and recorder.recording_id == second.args[0]
        with qtbot.waitSignal(recorder.stopped, timeout=30_000):
            recorder.pause()
        assert not recorder.running
    finally:
        recorder.shutdown()


# Qt's PulseAudio backend says so when the unplugged microphone's stream fails: expected here
@pytest.mark.qt_log_ignore(r'^Stream failed to connect: "Failed"$')
def test_a_microphone_that_cannot_open_reports_and_stays_off(
    pulse: Pulse,
    qtbot: QtBot,
    runtime: Runtime,
    transcriber: WhisperTranscriber,
    logged_warnings: list[logging.LogRecord],
) -> None:
    from persona_desktop.ui.audio_source import SpeechRecorder, find_microphone

    device = find_microphone("")
    # Unplug it: the source is gone from the server, Qt still holds the old device.
    subprocess.run(["pactl", "unload-module", "module-remap-source"], env=pulse.env, check=True, timeout=10)
    try:
        recorder = SpeechRecorder(
            lambda dev: SpeechSession(transcriber, runtime.uow, device=dev), device.description()
        )
        told: list[str] = []  # what the owner reads: the recorder's failure, or start's own refusal
        recorder.failed.connect(told.append)
        try:
            recorder.start()
        except CaptureUnavailableError as exc:  # the device list may already be empty
            told.append(str(exc))
        qtbot.waitUntil(lambda: bool(told), timeout=15_000)
        message = told[0]
        assert "speech capture is off" in message or "not found" in message or "no microphone" in message
        qtbot.waitUntil(lambda: not recorder.running, timeout=15_000)
        assert all(message in r.getMessage() for r in logged_warnings)  # and the log says the same
    finally:
        recorder.shutdown()
        subprocess.run(
            [
                "pactl",
                "load-module",
                "module-remap-source",
                f"master={pulse.sink}.monitor",
                f"source_name={pulse.source}",
            ],
            env=pulse.env,
            check=True,
            timeout=10,
        )


def test_no_microphone_at_all_is_a_clear_message(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        from PySide6.QtCore import QCoreApplication
        from persona_desktop.errors import CaptureUnavailableError
        from persona_desktop.ui.audio_source import SpeechRecorder, list_microphones

        app = QCoreApplication([])
        print("inputs", len(list_microphones()))
        recorder = SpeechRecorder(lambda dev: None)
        try:
            recorder.start()
        except CaptureUnavailableError as exc:
            print("error:", exc)
        print("running", recorder.running)
        """
    )
    env = {
        **os.environ,
        "PULSE_SERVER": f"unix:{tmp_path / 'no-such-socket'}",
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(REPO),
    }
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines == [
        "inputs 0",
        "error: no microphone found: speech capture is off (connect one, or check the sound settings)",
        "running False",
    ]
    assert time.monotonic() - start < 30
