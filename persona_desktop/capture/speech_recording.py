"""Speech segments as fragments: refs, locators, authorship, and audio-file ingest.

Authorship is deliberately cautious. Nothing here knows who spoke: a microphone
recording is *probably* the owner, but a visitor, a call on speaker or a TV is
captured the same way. So every speech fragment is authored `unknown` (or `other`
for system-audio/loopback capture, which is by construction someone else) and is
`untrusted`; the locator says `speaker: likely-owner` for the microphone. The policy
only auto-applies facts backed by owner-authored, trusted evidence, so speech alone
can only ever reach the morning review, never memory.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from persona_desktop.capture.speech_clips import clip_relpath, write_clip
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.errors import ImportFormatError
from persona_desktop.input_files import MB, read_input_file
from persona_desktop.ports import MediaFiles, SpeechSegment, Transcriber
from persona_desktop.speech_runtime import import_speech_module

SAMPLE_RATE = 16000
MAX_AUDIO_FILE_BYTES = 4096 * MB  # hours of uncompressed WAV
CLIP_PAD_S = 0.15


class Origin(StrEnum):
    MICROPHONE = "microphone"
    SYSTEM = "system"  # loopback / monitor of what the computer plays
    FILE = "file"


SPEAKER = {Origin.MICROPHONE: "likely-owner", Origin.SYSTEM: "other", Origin.FILE: "unknown"}
AUTHOR = {Origin.MICROPHONE: Author.UNKNOWN, Origin.SYSTEM: Author.OTHER, Origin.FILE: Author.UNKNOWN}


@dataclass(frozen=True, slots=True)
class Recording:
    """One recording session (live) or one audio file."""

    recording_id: str
    origin: Origin
    started_at: datetime
    device: str = ""
    file: str = ""
    model: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> SourceInfo:
        label = Path(self.file).name if self.file else f"{self.origin.value} {self.device}".strip()
        meta = {
            "origin": self.origin.value,
            "device": self.device,
            "file": self.file,
            "started_at": self.started_at.isoformat(),
            "model": self.model,
            **self.meta,
        }
        return SourceInfo(f"speech:{self.recording_id}", Kind.SPEECH, label, meta)


def segment_ref(recording_id: str, index: int) -> str:
    return f"sp:{recording_id}:{index}"


def file_recording_id(content: bytes) -> str:
    """Same bytes, same id: re-ingesting a file finds its fragments again."""
    return "f" + hashlib.sha256(content).hexdigest()[:20]


def segment_fragment(
    rec: Recording,
    index: int,
    seg: SpeechSegment,
    offset_s: float,
    clip: str | None,
    base_at: datetime | None = None,
) -> NewFragment:
    """`offset_s` is where the transcribed audio starts within the recording and
    `base_at` the wall-clock time of that start (default: recording start + offset)."""
    start_s = round(offset_s + seg.start, 3)
    end_s = round(offset_s + seg.end, 3)
    base = base_at if base_at is not None else rec.started_at + timedelta(seconds=offset_s)
    start_at = base + timedelta(seconds=seg.start)
    end_at = base + timedelta(seconds=seg.end)
    locator: dict[str, Any] = {
        "recording_id": rec.recording_id,
        "segment": index,
        "origin": rec.origin.value,
        "speaker": SPEAKER[rec.origin],
        "device": rec.device,
        "start": start_at.isoformat(),
        "end": end_at.isoformat(),
        "start_s": start_s,
        "end_s": end_s,
        "words": [
            {
                "word": w.word,
                "start_s": round(offset_s + w.start, 3),
                "end_s": round(offset_s + w.end, 3),
                "p": w.probability,
            }
            for w in seg.words
        ],
        "avg_logprob": seg.avg_logprob,
        "no_speech_prob": seg.no_speech_prob,
        "compression_ratio": seg.compression_ratio,
        "model": rec.model,
        "clip": clip,
    }
    if rec.file:
        locator["file"] = rec.file
    return NewFragment(
        ref=segment_ref(rec.recording_id, index),
        kind=Kind.SPEECH,
        author=AUTHOR[rec.origin],
        trust=Trust.UNTRUSTED,
        text=seg.text,
        captured_at=start_at,
        locator=locator,
        session=f"speech:{rec.recording_id}",
        seq=index,
    )


@dataclass
class SegmentWriter:
    """Turns transcribed audio into fragments, numbering segments across a recording."""

    recording: Recording
    data_dir: Path | None = None
    keep_audio: bool = False
    next_index: int = 0
    media: MediaFiles | None = None  # where clips go: sealed when the store is encrypted

    def fragments(
        self,
        audio: NDArray[np.float32],
        offset_s: float,
        segments: Sequence[SpeechSegment],
        base_at: datetime | None = None,
    ) -> list[NewFragment]:
        base = base_at if base_at is not None else self.recording.started_at + timedelta(seconds=offset_s)
        out: list[NewFragment] = []
        for seg in segments:
            index = self.next_index
            self.next_index += 1
            clip = self._clip(audio, index, seg, base) if self.keep_audio else None
            out.append(segment_fragment(self.recording, index, seg, offset_s, clip, base))
        return out

    def _clip(self, audio: NDArray[np.float32], index: int, seg: SpeechSegment, base: datetime) -> str | None:
        if self.data_dir is None:
            return None
        lo = max(0, int((seg.start - CLIP_PAD_S) * SAMPLE_RATE))
        hi = min(len(audio), int((seg.end + CLIP_PAD_S) * SAMPLE_RATE))
        rel = clip_relpath(self.recording.recording_id, index)
        write_clip(self.data_dir / rel, audio[lo:hi], base + timedelta(seconds=seg.start), self.media)
        return rel


# --- audio files ---------------------------------------------------------------------------


def decode_file(path: Path) -> tuple[bytes, NDArray[np.float32]]:
    """Read and decode any format FFmpeg knows (wav, flac, mp3, ogg, ...) to 16 kHz mono."""
    content = read_input_file(path, MAX_AUDIO_FILE_BYTES)  # never a FIFO or /dev/zero
    if not content:
        raise ImportFormatError(f"{path}: the file is empty")
    decode_audio = import_speech_module("faster_whisper").decode_audio

    try:
        audio = decode_audio(io.BytesIO(content), sampling_rate=SAMPLE_RATE)  # the bytes checked above
    except Exception as exc:  # PyAV raises many types for a broken or non-audio file
        reason = getattr(exc, "strerror", None) or str(exc).split("\n")[0] or type(exc).__name__
        raise ImportFormatError(f"{path}: not a readable audio file ({reason})") from None
    if audio.size == 0:
        raise ImportFormatError(f"{path}: no audio in the file")
    return content, np.asarray(audio, dtype=np.float32)


def transcribe_file(
    path: Path,
    transcriber: Transcriber,
    *,
    origin: Origin = Origin.FILE,
    recorded_at: datetime | None = None,
    data_dir: Path | None = None,
    keep_audio: bool = False,
    media: MediaFiles | None = None,
) -> tuple[SourceInfo, list[NewFragment]]:
    """One file as one recording.

    The recording's start is `recorded_at` if given, else the file's modification time
    minus its duration (a recorder writes the file as the recording ends).
    """
    content, audio = decode_file(path)
    duration = audio.size / SAMPLE_RATE
    if recorded_at is None:
        mtime = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        recorded_at = mtime - timedelta(seconds=duration)
    rec = Recording(
        file_recording_id(content),
        origin,
        recorded_at,
        device="",
        file=str(path.resolve()),
        model=transcriber.model_name,
        meta={"duration_s": round(duration, 3)},
    )
    segments = transcriber.transcribe(audio)
    writer = SegmentWriter(rec, data_dir, keep_audio, media=media)
    return rec.source, writer.fragments(audio, 0.0, segments)
