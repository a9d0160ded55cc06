"""`ingest screen IMAGE...`: image files read and stored as screen captures.

The capture id is a hash of the file's content, so the same image ingested again
(under any name) gives the same refs and no new fragments.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.errors import ImportFormatError, PersonaError
from persona_desktop.input_files import MB, read_input_file
from persona_desktop.ports import Clock, UnitOfWorkFactory
from persona_desktop.ports.screen import MAX_IMAGE_PIXELS
from persona_desktop.services.ingest import IngestResult, ingest

MAX_IMAGE_FILE_BYTES = 256 * MB


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    result: IngestResult | None = None
    lines: int = 0
    error: str | None = None


def read_image(path: Path) -> tuple[bytes, np.ndarray, datetime]:
    """The file's bytes, its RGB pixels, and its modification time as the capture time."""
    data = read_input_file(path, MAX_IMAGE_FILE_BYTES)  # never a FIFO or /dev/zero
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.width * img.height > MAX_IMAGE_PIXELS:
                raise ImportFormatError(f"{path}: image too large ({img.width}x{img.height})")
            rgb = np.asarray(img.convert("RGB"))
        at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ImportFormatError(f"{path}: is a directory, not an image") from None
    except UnidentifiedImageError:
        raise ImportFormatError(f"{path}: not an image file Pillow can read") from None
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImportFormatError(f"{path}: cannot be read as an image: {exc}") from None
    if rgb.size == 0:
        raise ImportFormatError(f"{path}: empty image")
    return data, rgb, at


def ingest_images(
    uow: UnitOfWorkFactory, clock: Clock, pipeline: ScreenPipeline, paths: Sequence[Path]
) -> list[FileOutcome]:
    """OCR each image as one capture and store it; one file's failure does not stop the rest."""
    outcomes: list[FileOutcome] = []
    for path in paths:
        try:
            data, rgb, at = read_image(path)
            cid = hashlib.blake2b(data, digest_size=8).hexdigest()
            source, fragments = pipeline.process_file_image(rgb, cid, at, str(path))
            [result] = ingest(uow, [(source, fragments)], clock.now())
        except PersonaError as exc:
            outcomes.append(FileOutcome(str(path), error=str(exc)))
            continue
        outcomes.append(FileOutcome(str(path), result, len(fragments)))
    return outcomes
