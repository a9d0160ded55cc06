"""Speech capture costs: transcription real-time factor, a minute of silence, memory.

Speech is espeak-ng sentences with short pauses (~60 s); silence is 60 s of zeros
and 60 s of faint noise. Real-time factor (RTF) = processing seconds / audio seconds.
Targets (issue 4): speech RTF <= 0.15, silence <= 0.01, peak RSS < 400 MB.
Also prints the streaming VAD chunker's own cost (what runs while the mic is open)
and the beam-size/thread variants so the defaults can be checked.

    .venv/bin/python bench/bench_speech.py [--seconds 60] [--variants]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from persona_desktop.adapters.whisper_transcriber import WhisperTranscriber
from persona_desktop.capture.speech import SpeechChunker
from tests.speech_support import SAMPLE_RATE, SENTENCES, read_wav, silence, synth, white_noise

EXTRA = [
    "The train to Porto leaves at half past seven.",
    "Could you send me the report before lunch?",
    "It has been raining all week in the city.",
    "I need to buy milk, bread and some apples.",
]


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def speech_audio(seconds: float, folder: Path) -> np.ndarray:
    sentences = [read_wav(synth(folder / f"s{i}.wav", t)) for i, t in enumerate(SENTENCES + EXTRA)]
    parts: list[np.ndarray] = []
    total = 0
    i = 0
    while total < seconds * SAMPLE_RATE:
        s = sentences[i % len(sentences)]
        parts += [s, silence(0.4)]
        total += len(s) + int(0.4 * SAMPLE_RATE)
        i += 1
    return np.concatenate(parts)[: int(seconds * SAMPLE_RATE)]


def timed(t: WhisperTranscriber, audio: np.ndarray, repeats: int = 2) -> tuple[float, int]:
    best = float("inf")
    n = 0
    for _ in range(repeats):
        start = time.perf_counter()
        n = len(t.transcribe(audio))
        best = min(best, time.perf_counter() - start)
    return best, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--variants", action="store_true", help="also time beam 1 and 2 threads")
    args = ap.parse_args()
    limit = os.environ.get("OMP_THREAD_LIMIT", "unset")
    print(f"cores: {os.cpu_count()}   OMP_THREAD_LIMIT: {limit}   python RSS at start: {rss_mb():.0f} MB")

    with tempfile.TemporaryDirectory() as tmp:
        speech = speech_audio(args.seconds, Path(tmp))
    quiet = silence(args.seconds)
    faint = white_noise(args.seconds, 0.01)
    dur = len(speech) / SAMPLE_RATE

    t = WhisperTranscriber(idle_unload_s=0)
    start = time.perf_counter()
    t.load()
    print(f"model load: {time.perf_counter() - start:.2f} s   RSS after load: {rss_mb():.0f} MB")
    t.transcribe(speech[: 5 * SAMPLE_RATE])  # warm-up

    secs, n = timed(t, speech)
    print(f"speech {dur:.0f} s: {secs:.2f} s, {n} segments, RTF {secs / dur:.3f}   (target <= 0.15)")
    secs, n = timed(t, quiet, repeats=3)
    print(f"silence {dur:.0f} s: {secs:.3f} s, {n} segments, RTF {secs / dur:.4f}   (target <= 0.01)")
    secs, n = timed(t, faint, repeats=3)
    print(f"faint noise {dur:.0f} s: {secs:.3f} s, {n} segments, RTF {secs / dur:.4f}")
    print(f"peak RSS with the model loaded: {peak_rss_mb():.0f} MB   (target < 400)")

    chunker = SpeechChunker("bench")
    pcm = (np.concatenate([speech, quiet]) * 32767).astype("<i2").tobytes()
    frame = 320 * 2  # 20 ms of 16-bit mono
    start = time.perf_counter()
    chunks = 0
    for i in range(0, len(pcm), frame):
        chunks += len(chunker.feed_pcm16(pcm[i : i + frame]))
    chunks += len(chunker.flush())
    secs = time.perf_counter() - start
    print(
        f"streaming VAD chunker, {2 * dur:.0f} s in 20 ms frames: {secs:.3f} s (RTF {secs / (2 * dur):.4f}), {chunks} chunks"
    )

    t.unload()
    gc.collect()
    print(f"RSS after idle unload: {rss_mb():.0f} MB")

    if args.variants:
        for beam, threads in ((1, 1), (5, 2), (1, 2)):
            v = WhisperTranscriber(idle_unload_s=0, beam_size=beam, cpu_threads=threads)
            v.load()
            v.transcribe(speech[: 5 * SAMPLE_RATE])
            secs, n = timed(v, speech)
            print(f"variant beam={beam} cpu_threads={v.cpu_threads}: RTF {secs / dur:.3f}, {n} segments")
            v.close()


if __name__ == "__main__":
    main()
