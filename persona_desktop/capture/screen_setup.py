"""Wiring of screen capture from the settings: the loop for the tray app, files for the CLI.

This module picks the concrete adapters (mss, Tesseract, X11), so, like `bootstrap.py`,
only composition roots (`app.py`, `cli.py`) may import it; the ui gets the loop handed in.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import numpy as np
from PIL import Image, UnidentifiedImageError

from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.screen_mss import MssGrabber
from persona_desktop.bootstrap import Runtime
from persona_desktop.capture.screen_loop import ScreenCaptureLoop, ScreenEvent
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_ports import NoWindowInfo, OcrEngine, WindowInfo
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.config import Settings
from persona_desktop.domain.model import Kind
from persona_desktop.errors import ImportFormatError, PersonaError
from persona_desktop.ports import UnitOfWorkFactory
from persona_desktop.services.ingest import IngestResult, ingest
from persona_desktop.services.screen_retention import purge_expired_fragments

MAX_IMAGE_PIXELS = 100_000_000


def _uow(runtime: Runtime) -> UnitOfWorkFactory:
    return cast(UnitOfWorkFactory, runtime.uow)


def screen_image_dir(data_dir: Path) -> Path:
    return data_dir / "screens"


def build_ocr(settings: Settings) -> TesseractOcr:
    return TesseractOcr(
        str(settings.get("capture.ocr_languages")), float(settings.get("capture.ocr_min_confidence"))
    )


def build_pipeline(settings: Settings, data_dir: Path, ocr: OcrEngine | None = None) -> ScreenPipeline:
    keep = bool(settings.get("capture.keep_images"))
    return ScreenPipeline(
        ocr if ocr is not None else build_ocr(settings),
        ExclusionRules.of(settings.get("capture.exclude_apps"), settings.get("capture.exclude_titles")),
        max_gap=timedelta(seconds=float(settings.get("capture.max_gap_seconds"))),
        image_dir=screen_image_dir(data_dir) if keep else None,
    )


def window_info_factory() -> WindowInfo:
    """X11 and Windows expose window titles; elsewhere (macOS for now) frames carry none."""
    if sys.platform.startswith("linux"):
        from persona_desktop.capture.screen_window_x11 import X11WindowInfo

        return X11WindowInfo()
    if sys.platform == "win32":
        from persona_desktop.capture.screen_window_win32 import Win32WindowInfo

        return Win32WindowInfo()
    return NoWindowInfo()


def purge_expired_images(image_dir: Path, now: datetime, retention_days: int) -> int:
    """Delete kept screen crops written more than `retention_days` ago; return how many."""
    if not image_dir.is_dir():
        return 0
    cutoff = (now - timedelta(days=retention_days)).timestamp()
    removed = 0
    for path in image_dir.glob("*/*.png"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    for folder in image_dir.iterdir():
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return removed


def maintenance(runtime: Runtime) -> Callable[[datetime], None]:
    """Retention of screen text and kept crops, run by the loop about once an hour."""

    def run(now: datetime) -> None:
        s = runtime.settings
        purge_expired_fragments(_uow(runtime), Kind.SCREEN, int(s.get("capture.text_retention_days")), now)
        purge_expired_images(
            screen_image_dir(runtime.data_dir), now, int(s.get("capture.image_retention_days"))
        )

    return run


def build_screen_loop(
    runtime: Runtime, on_event: Callable[[ScreenEvent], None] | None = None
) -> ScreenCaptureLoop:
    """The loop the tray app drives. Raises CaptureUnavailableError if Tesseract is missing;
    a missing display is reported when the loop starts (as an `error` event and status)."""
    s = runtime.settings
    return ScreenCaptureLoop(
        grabber_factory=MssGrabber,
        window_info_factory=window_info_factory,
        pipeline=build_pipeline(s, runtime.data_dir),
        uow_factory=_uow(runtime),
        clock=runtime.clock,
        interval_s=float(s.get("capture.interval_seconds")),
        maintenance=maintenance(runtime),
        on_event=on_event,
    )


# --- `ingest screen IMAGE...` ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    result: IngestResult | None = None
    lines: int = 0
    error: str | None = None


def read_image(path: Path) -> tuple[bytes, np.ndarray, datetime]:
    """The file's bytes, its RGB pixels, and its modification time as the capture time."""
    try:
        data = path.read_bytes()
        with Image.open(path) as img:
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


def ingest_screen_files(
    runtime: Runtime, paths: Sequence[Path], pipeline: ScreenPipeline | None = None
) -> list[FileOutcome]:
    """OCR each image as one capture and store it; one file's failure does not stop the rest.

    The capture id is a hash of the file's content, so the same image ingested again
    (under any name) gives the same refs and no new fragments."""
    pipe = pipeline or build_pipeline(runtime.settings, runtime.data_dir)
    outcomes: list[FileOutcome] = []
    for path in paths:
        try:
            data, rgb, at = read_image(path)
            cid = hashlib.blake2b(data, digest_size=8).hexdigest()
            source, fragments = pipe.process_file_image(rgb, cid, at, str(path))
            [result] = ingest(_uow(runtime), [(source, fragments)], runtime.clock.now())
        except PersonaError as exc:
            outcomes.append(FileOutcome(str(path), error=str(exc)))
            continue
        outcomes.append(FileOutcome(str(path), result, len(fragments)))
    return outcomes
