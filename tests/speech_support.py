"""Speech test helpers: espeak-ng sentences, silence/noise WAVs, a private PulseAudio.

PulseAudio as root (CI and these machines): `pulseaudio -n --daemonize=no` with
HOME, XDG_RUNTIME_DIR and the socket under a temp dir, loading only the native
protocol (anonymous auth), a null sink and `module-remap-source` on its monitor.
It warns that it "is not intended to be run as root" and runs fine; no --system,
no D-Bus, no cookie needed. Clients find it through PULSE_SERVER.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000

# Sentences tiny.en gets (nearly) right from espeak-ng whatever the padding around them.
SENTENCES = [
    "My favourite colour is green and I live in Lisbon.",
    "I have a meeting with Alice tomorrow morning.",
    "We are going to visit my parents next weekend.",
    "I usually drink two cups of coffee every morning.",
]


def synth(path: Path, text: str, *, rate: int = SAMPLE_RATE) -> Path:
    """Speak `text` with espeak-ng, resampled to `rate` mono 16-bit WAV with sox."""
    raw = path.with_suffix(".espeak.wav")
    subprocess.run(["espeak-ng", "-w", str(raw), text], check=True, timeout=30)
    subprocess.run(
        ["sox", str(raw), "-r", str(rate), "-c", "1", "-b", "16", str(path)], check=True, timeout=30
    )
    raw.unlink()
    return path


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as w:
        assert w.getframerate() == SAMPLE_RATE and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768


def write_wav(path: Path, samples: np.ndarray, rate: int = SAMPLE_RATE) -> Path:
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return path


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32)


def white_noise(seconds: float, level: float = 0.3, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(int(seconds * SAMPLE_RATE)) * level).clip(-1, 1).astype(np.float32)


SPELLING = {"favourite": "favorite", "colour": "color", "nine": "9", "two": "2"}


def words(text: str) -> list[str]:
    return [SPELLING.get(w, w) for w in re.findall(r"[a-z0-9']+", text.lower())]


def word_recall(expected: str, got: str) -> float:
    """Share of expected words that appear in the transcript (order-free, tolerant)."""
    want = words(expected)
    have = set(words(got))
    return sum(1 for w in want if w in have) / len(want)


@dataclass
class Pulse:
    server: str
    sink: str
    source: str
    env: dict[str, str]

    def play(self, wav: Path, timeout: float = 30) -> None:
        subprocess.run(
            ["paplay", f"--device={self.sink}", str(wav)], env=self.env, check=True, timeout=timeout
        )


@contextmanager
def private_pulseaudio(tmp: Path, sink: str = "vspk", source: str = "vmic") -> Iterator[Pulse]:
    """A PulseAudio server of our own with a virtual microphone fed by a null sink."""
    for tool in ("pulseaudio", "paplay", "pactl"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed (scripts/install-system-deps installs pulseaudio)")
    runtime = tmp / "pulse-runtime"
    home = tmp / "pulse-home"
    runtime.mkdir(mode=0o700)
    home.mkdir()
    socket = runtime / "native"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "PULSE_RUNTIME_PATH": str(runtime),
        "PULSE_SERVER": f"unix:{socket}",
    }
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    log = (tmp / "pulseaudio.log").open("wb")
    proc = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--disallow-exit",
            "--disable-shm",
            "-L",
            f"module-native-protocol-unix socket={socket} auth-anonymous=1",
            "-L",
            f"module-null-sink sink_name={sink} rate=48000 channels=2",
            "-L",
            f"module-remap-source master={sink}.monitor source_name={source}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            ok = subprocess.run(["pactl", "info"], env=env, capture_output=True, timeout=10).returncode == 0
            if ok:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"pulseaudio did not start: {(tmp / 'pulseaudio.log').read_text()[-2000:]}"
                )
            time.sleep(0.1)
        subprocess.run(["pactl", "set-default-source", source], env=env, check=True, timeout=10)
        subprocess.run(["pactl", "set-default-sink", sink], env=env, check=True, timeout=10)
        yield Pulse(env["PULSE_SERVER"], sink, source, env)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
