"""Per-segment audio clips, kept only when the owner opts in (`capture.keep_audio`).

Clips are Ogg/Opus at 16 kHz mono (~3 kB per second of speech), under
`<data dir>/clips/speech/<recording id>/<segment>.ogg`, encoded in memory and written
through `MediaFiles` (sealed with AES-GCM when the store is encrypted, so no plain
audio ever touches the disk). A clip's modification time is
set to the moment its speech was captured, so retention counts from capture, not from
when the file happened to be written; `purge_expired_clips` deletes what is older.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from persona_desktop.ports import MediaFiles
from persona_desktop.services.media import PlainMedia, purge_expired_files

SAMPLE_RATE = 16000
CLIPS_DIR = Path("clips") / "speech"


def clip_relpath(recording_id: str, index: int) -> str:
    return str(CLIPS_DIR / recording_id / f"{index:04d}.ogg")


def write_clip(
    path: Path, samples: NDArray[np.float32], captured_at: datetime, media: MediaFiles | None = None
) -> None:
    import av

    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    buf = io.BytesIO()
    with av.open(buf, "w", format="ogg") as out:
        stream = out.add_stream("libopus", rate=SAMPLE_RATE, layout="mono")
        stream.bit_rate = 24000
        frame_size = 960  # 60 ms
        for i in range(0, len(pcm), frame_size):
            block = pcm[i : i + frame_size]
            frame = av.AudioFrame.from_ndarray(block.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = SAMPLE_RATE
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    (media or PlainMedia()).write(path, buf.getvalue(), mtime=captured_at.timestamp())


def purge_expired_clips(data_dir: Path, now: datetime, retention_days: int) -> int:
    """Delete clips captured more than `retention_days` ago; return how many."""
    return purge_expired_files(data_dir / CLIPS_DIR, "*/*.ogg", now, retention_days)
