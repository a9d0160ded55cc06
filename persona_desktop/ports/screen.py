"""What the screen pipeline needs from the outside: a grabber, an OCR engine, window info.

Plain values and Protocols only, so the pipeline and the capture loop can be driven by
the real adapters (mss, Tesseract, X11) or by anything else that fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias

Box = tuple[int, int, int, int]
"""left, top, right, bottom in pixels (right/bottom exclusive)."""

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Pixels: TypeAlias = npt.NDArray[np.uint8]
else:

    def __getattr__(name: str) -> object:
        """`Pixels` made on first import: the window values here serve the tray at start,
        which must not load numpy (about 15 MB) while capture is off."""
        if name == "Pixels":
            import numpy as np
            import numpy.typing as npt

            return npt.NDArray[np.uint8]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAX_IMAGE_PIXELS = 100_000_000
"""Larger pictures are refused, whoever hands them over (a file, a portal, grim)."""


@dataclass(frozen=True, slots=True)
class Monitor:
    index: int  # 1-based, as mss numbers them
    left: int
    top: int
    width: int
    height: int

    @property
    def box(self) -> Box:
        return (self.left, self.top, self.left + self.width, self.top + self.height)


def bounds(boxes: Iterable[Box]) -> Box | None:
    """The box around all of them (None for none): a desktop's layout from its outputs."""
    boxes = list(boxes)
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Frame:
    """One monitor's pixels: an H x W x 3 (RGB) or H x W x 4 (BGRA) uint8 array.

    `unplaced` says why window boxes cannot be placed on these pixels (the picture's scale
    against the window list's coordinates is unknown), None when they can: exclusions are
    then refused rather than masked in the wrong place."""

    monitor: Monitor
    pixels: Pixels
    bgra: bool = False
    unplaced: str | None = None

    def rgb(self) -> Pixels:
        if not self.bgra:
            return self.pixels
        import numpy as np

        return np.ascontiguousarray(self.pixels[:, :, 2::-1])


@dataclass(frozen=True, slots=True)
class WindowDesc:
    """A top-level window, in virtual-screen coordinates.

    `pid`: the process that owns it, where the window source can tell (X11's
    `_NET_WM_PID`); the app's own windows are never read (`screen_privacy`).
    """

    title: str
    app: str
    box: Box
    active: bool = False
    wid: int = 0
    pid: int | None = None


@dataclass(frozen=True, slots=True)
class OcrWord:
    text: str
    conf: float
    box: Box


@dataclass(frozen=True, slots=True)
class OcrLine:
    text: str
    conf: float
    box: Box
    block: int
    par: int
    line: int
    words: tuple[OcrWord, ...] = field(default_factory=tuple)

    def shifted(self, dx: int, dy: int) -> OcrLine:
        def mv(b: Box) -> Box:
            return (b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy)

        return OcrLine(
            self.text,
            self.conf,
            mv(self.box),
            self.block,
            self.par,
            self.line,
            tuple(OcrWord(w.text, w.conf, mv(w.box)) for w in self.words),
        )


class ScreenGrabber(Protocol):
    def monitors(self) -> list[Monitor]: ...
    def grab(self, monitor: Monitor) -> Frame: ...
    def close(self) -> None: ...


class DesktopShooter(Protocol):
    """One picture of the whole desktop (every output) per call: the portal or grim on Wayland."""

    name: str

    def take(self) -> Pixels:
        """RGB pixels, H x W x 3."""
        ...

    def close(self) -> None: ...


class OcrEngine(Protocol):
    def read(self, image: Pixels) -> list[OcrLine]:
        """OCR a grayscale (H x W) or RGB image; boxes are in the image's pixels."""
        ...

    def read_lines(self, image: Pixels) -> list[OcrLine]:
        """OCR an image that is text lines stacked one under another, one column, no page
        layout to find (the screen pipeline's crops): like `read`, without column detection,
        which cuts aligned monospaced lines into words."""
        ...


class WindowInfo(Protocol):
    def windows(self) -> list[WindowDesc]:
        """Visible top-level windows, bottom to top; at most one is `active`."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class OwnScreen:
    """What of the app's own is on screen now, as the ui knows it."""

    boxes: tuple[Box, ...] = ()  # its windows, menus and tooltips, in virtual-screen pixels
    placed: bool = True  # False: the app cannot tell where its windows are (Wayland)
    windows: bool = False  # a window of the app's is visible
    popups: bool = False  # a menu or a tooltip of the app's is visible
    notification: bool = False  # a notification of the app's may be on screen (another process draws it)


class OwnWindows(Protocol):
    """The app's own windows. Called on the capture thread: answered from a thread-safe snapshot."""

    def screen(self) -> OwnScreen: ...


def as_pid(value: object) -> int | None:
    """A process id from a window source's answer, or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31 else None


class NoWindowInfo:
    """Where the platform exposes no window list: no titles, no per-window exclusions."""

    def windows(self) -> list[WindowDesc]:
        return []

    def close(self) -> None:
        return None
