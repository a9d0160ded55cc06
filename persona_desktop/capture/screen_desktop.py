"""Which desktop this is and what screen capture can do on it, in words the owner reads.

Pure: decided from the environment variables a desktop session sets, so the first-run
dialog and Settings can say what works before anything is grabbed. What is actually
there (a portal that answers, a window list) is found when capture starts; the loop then
reports it (`ScreenCaptureLoop` status and events).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Session(StrEnum):
    X11 = "x11"
    WAYLAND = "wayland"
    NONE = "none"  # Linux without any display
    NATIVE = "native"  # Windows, macOS: mss grabs the screen directly


class Desktop(StrEnum):
    GNOME = "GNOME"
    KDE = "KDE Plasma"
    SWAY = "sway"
    HYPRLAND = "Hyprland"
    WLROOTS = "a wlroots desktop"
    OTHER = "this desktop"


WLROOTS_NAMES = ("wlroots", "river", "wayfire", "labwc", "niri", "hikari", "dwl", "cage", "phosh")


@dataclass(frozen=True, slots=True)
class DesktopSession:
    session: Session
    desktop: Desktop

    @property
    def wlroots(self) -> bool:
        return self.desktop in (Desktop.SWAY, Desktop.HYPRLAND, Desktop.WLROOTS)

    @property
    def label(self) -> str:
        if self.session is Session.WAYLAND:
            return f"{self.desktop.value} on Wayland"
        if self.session is Session.X11:
            return "an X11 session" if self.desktop is Desktop.OTHER else f"{self.desktop.value} on X11"
        if self.session is Session.NONE:
            return "no graphical session"
        return "this system"


def detect(env: Mapping[str, str], platform: str) -> DesktopSession:
    """The session from XDG_SESSION_TYPE, WAYLAND_DISPLAY and DISPLAY; the desktop from
    XDG_CURRENT_DESKTOP and the variables each compositor sets for its clients."""
    if not platform.startswith("linux"):
        return DesktopSession(Session.NATIVE, Desktop.OTHER)
    declared = env.get("XDG_SESSION_TYPE", "").strip().lower()
    if declared == "wayland" or (declared != "x11" and env.get("WAYLAND_DISPLAY")):
        session = Session.WAYLAND
    elif env.get("DISPLAY"):
        session = Session.X11
    else:
        session = Session.NONE
    return DesktopSession(session, _desktop(env))


def _desktop(env: Mapping[str, str]) -> Desktop:
    names = ":".join(
        env.get(k, "") for k in ("XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP", "DESKTOP_SESSION")
    )
    tokens = {t.strip().lower() for t in names.replace(";", ":").split(":") if t.strip()}
    if env.get("SWAYSOCK") or "sway" in tokens:
        return Desktop.SWAY
    if env.get("HYPRLAND_INSTANCE_SIGNATURE") or "hyprland" in tokens:
        return Desktop.HYPRLAND
    if env.get("KDE_FULL_SESSION") or tokens & {"kde", "plasma", "plasmawayland"}:
        return Desktop.KDE
    if tokens & {"gnome", "gnome-classic", "ubuntu", "gnome-flashback"} or env.get("GNOME_SETUP_DISPLAY"):
        return Desktop.GNOME
    if tokens & set(WLROOTS_NAMES):
        return Desktop.WLROOTS
    return Desktop.OTHER


class WindowSource(StrEnum):
    X11 = "x11"
    WIN32 = "win32"
    SWAY = "sway"
    HYPRLAND = "hyprland"
    KWIN = "kwin"
    GNOME_WINDOW_CALLS = "gnome-window-calls"


@dataclass(frozen=True, slots=True)
class ScreenSupport:
    """What screen capture can do here: grabbers to try in order, where window information
    comes from, and whether periodic capture may run (`periodic_reason` says why not)."""

    desktop: DesktopSession
    grabbers: tuple[str, ...]
    windows: WindowSource | None
    flashes: bool
    periodic_reason: str | None

    @property
    def works(self) -> bool:
        return bool(self.grabbers)

    def advice(self) -> str:
        """What to tell the owner after screen capture had to stop."""
        if self.desktop.session is Session.X11:
            return X11_ADVICE
        return self.what_works()

    def headline(self) -> str:
        """One sentence: what screen capture does on this desktop."""
        d = self.desktop
        if not self.works:
            return "No graphical session was found: screen capture cannot work here."
        if self.periodic_reason is None:
            return f"On {d.label}: a screenshot every few seconds; excluded windows are left out."
        if self.flashes:
            return (
                f"On {d.label}: screenshots only when you ask ('Capture this screen now'), as each one "
                "flashes the screen; periodic capture if you choose it in Settings."
            )
        return f"On {d.label}: screenshots only when you ask ('Capture this screen now'); Settings says why."

    def what_works(self) -> str:
        """A few sentences for the first-run dialog, Settings and error messages."""
        d = self.desktop
        if not self.works:
            return "Screen capture needs a graphical session (X11 or Wayland); none was found."
        if d.session is not Session.WAYLAND:
            return f"On {d.label}, screen capture runs every few seconds and leaves excluded windows out."
        how = "the desktop portal" + (" (or grim)" if "grim" in self.grabbers else "")
        if self.periodic_reason is None:
            return (
                f"On {d.label}, screenshots come from {how} and {_source_words(self.windows)} "
                "tells which windows are open, so screen capture runs every few seconds and "
                "leaves excluded windows out."
            )
        return (
            f"On {d.label}, screenshots come from {how}. Periodic capture is off: "
            f"{self.periodic_reason}. 'Capture this screen now' (tray menu, or the command "
            "`persona-desktop capture screen` on a keyboard shortcut) takes one screenshot when you ask."
        )


def _source_words(source: WindowSource | None) -> str:
    return {
        WindowSource.SWAY: "sway",
        WindowSource.HYPRLAND: "Hyprland",
        WindowSource.KWIN: "a KWin script",
        WindowSource.GNOME_WINDOW_CALLS: "the Window Calls extension",
    }.get(source, "the desktop") if source is not None else "nothing"  # fmt: skip


X11_ADVICE = (
    "If this is a Wayland desktop, start Persona Desktop from it (its menu or autostart, where "
    "XDG_SESSION_TYPE=wayland and WAYLAND_DISPLAY are set) so that it uses the desktop portal; "
    "on X11, a locked or blanked screen also grabs black"
)
FLASH_REASON = (
    "on GNOME every screenshot flashes the screen and plays the shutter sound, so Persona "
    "captures only when you ask, unless you turn on 'Capture periodically although the screen "
    "flashes' in Settings"
)
NO_WINDOWS_REASON = (
    "this desktop does not tell apps which windows are open, so excluded windows "
    "(password managers, private browsing) could not be left out"
)
GNOME_NO_EXTENSION = (
    "GNOME tells apps which windows are open only through the 'Window Calls' Shell extension, "
    "which is not installed or not enabled, so excluded windows could not be left out"
)


def support_for(desktop: DesktopSession, allow_flash: bool = False) -> ScreenSupport:
    """What to try on this desktop. `allow_flash`: the owner chose periodic capture on GNOME
    knowing each screenshot flashes the screen."""
    if desktop.session is Session.NONE:
        return ScreenSupport(desktop, (), None, False, "no display")
    if desktop.session is Session.NATIVE:
        return ScreenSupport(desktop, ("mss",), WindowSource.WIN32, False, None)
    if desktop.session is Session.X11:
        return ScreenSupport(desktop, ("mss",), WindowSource.X11, False, None)
    grabbers = ("portal", "grim") if desktop.wlroots else ("portal",)
    match desktop.desktop:
        case Desktop.SWAY:
            return ScreenSupport(desktop, grabbers, WindowSource.SWAY, False, None)
        case Desktop.HYPRLAND:
            return ScreenSupport(desktop, grabbers, WindowSource.HYPRLAND, False, None)
        case Desktop.KDE:
            return ScreenSupport(desktop, grabbers, WindowSource.KWIN, False, None)
        case Desktop.GNOME:
            reason = None if allow_flash else FLASH_REASON
            return ScreenSupport(desktop, grabbers, WindowSource.GNOME_WINDOW_CALLS, True, reason)
        case _:
            return ScreenSupport(desktop, grabbers, None, False, NO_WINDOWS_REASON)
