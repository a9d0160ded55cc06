"""Which desktop this is and what works on it; black frames; the portal's screenshot file;
the window lists of sway, Hyprland, KWin and GNOME (Window Calls) from hostile replies."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from persona_desktop.adapters.wayland import gnome, hyprland, kwin
from persona_desktop.adapters.wayland.shot_file import ShotFileError, decode_rgb, path_from_uri, take_file
from persona_desktop.adapters.wayland.sway import SwayWindows, WindowListError, views
from persona_desktop.capture.screen_black import BlackWatch, is_all_black
from persona_desktop.capture.screen_desktop import (
    FLASH_REASON,
    NO_WINDOWS_REASON,
    Desktop,
    Session,
    WindowSource,
    detect,
    support_for,
)
from persona_desktop.capture.screen_wayland import WholeDesktopGrabber
from persona_desktop.ports.screen import Frame, Monitor

# --- the desktop --------------------------------------------------------------------------

GNOME_WAYLAND = {"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0",
                 "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}  # fmt: skip


@pytest.mark.parametrize(
    ("env", "session", "desktop"),
    [
        (GNOME_WAYLAND, Session.WAYLAND, Desktop.GNOME),  # XWayland's DISPLAY does not make it X11
        ({"WAYLAND_DISPLAY": "wayland-1", "XDG_CURRENT_DESKTOP": "KDE"}, Session.WAYLAND, Desktop.KDE),
        ({"WAYLAND_DISPLAY": "w", "SWAYSOCK": "/run/user/1/sway-ipc.sock"}, Session.WAYLAND, Desktop.SWAY),
        ({"WAYLAND_DISPLAY": "w", "HYPRLAND_INSTANCE_SIGNATURE": "abc"}, Session.WAYLAND, Desktop.HYPRLAND),
        ({"WAYLAND_DISPLAY": "w", "XDG_CURRENT_DESKTOP": "river"}, Session.WAYLAND, Desktop.WLROOTS),
        ({"WAYLAND_DISPLAY": "w"}, Session.WAYLAND, Desktop.OTHER),
        ({"XDG_SESSION_TYPE": "x11", "DISPLAY": ":0", "WAYLAND_DISPLAY": "w"}, Session.X11, Desktop.OTHER),
        ({"DISPLAY": ":1", "XDG_CURRENT_DESKTOP": "GNOME"}, Session.X11, Desktop.GNOME),
        ({"XDG_SESSION_TYPE": "x11"}, Session.NONE, Desktop.OTHER),
        ({}, Session.NONE, Desktop.OTHER),
    ],
)
def test_the_session_and_desktop_come_from_the_environment(
    env: dict[str, str], session: Session, desktop: Desktop
) -> None:
    found = detect(env, "linux")
    assert (found.session, found.desktop) == (session, desktop)


def test_windows_and_macos_keep_mss() -> None:
    support = support_for(detect(GNOME_WAYLAND, "win32"))
    assert support.grabbers == ("mss",) and support.periodic_reason is None


def test_what_works_on_each_desktop_is_said_in_words() -> None:
    gnome_support = support_for(detect(GNOME_WAYLAND, "linux"))
    assert gnome_support.grabbers == ("portal",) and gnome_support.flashes
    assert gnome_support.periodic_reason == FLASH_REASON
    text = gnome_support.what_works()
    assert "GNOME on Wayland" in text and "flashes" in text and "Capture this screen now" in text
    chosen = support_for(detect(GNOME_WAYLAND, "linux"), allow_flash=True)
    assert chosen.periodic_reason is None and chosen.windows is WindowSource.GNOME_WINDOW_CALLS

    sway = support_for(detect({"WAYLAND_DISPLAY": "w", "SWAYSOCK": "/s"}, "linux"))
    assert sway.grabbers == ("portal", "grim") and sway.windows is WindowSource.SWAY
    assert "every few seconds" in sway.what_works()

    unknown = support_for(detect({"WAYLAND_DISPLAY": "w"}, "linux"))
    assert unknown.windows is None and unknown.periodic_reason == NO_WINDOWS_REASON
    assert "Periodic capture is off" in unknown.what_works()

    nothing = support_for(detect({}, "linux"))
    assert not nothing.works and "needs a graphical session" in nothing.what_works()
    assert "Wayland" in support_for(detect({"DISPLAY": ":0"}, "linux")).advice()


# --- black frames -------------------------------------------------------------------------


def _frame(pixels: np.ndarray, bgra: bool = False) -> Frame:
    return Frame(Monitor(1, 0, 0, pixels.shape[1], pixels.shape[0]), pixels, bgra)


def test_an_all_black_frame_is_recognised_and_a_dark_real_one_is_not() -> None:
    black = np.zeros((720, 1280, 4), np.uint8)
    black[:, :, 3] = 255  # mss's alpha channel is opaque: still black
    assert is_all_black(_frame(black, bgra=True))
    one_pixel = black.copy()
    one_pixel[700, 1279, 1] = 200  # a tray clock in a corner the sample grid misses
    assert not is_all_black(_frame(one_pixel, bgra=True))
    assert not is_all_black(_frame(np.full((10, 10, 3), 30, np.uint8)))


def test_black_passes_stop_capture_at_once_first_and_after_a_streak_later() -> None:
    first = BlackWatch(limit=3)
    assert first.saw(True)  # the very first pass black: this session hides the screen
    later = BlackWatch(limit=3)
    assert not later.saw(False)
    assert not later.saw(True) and not later.saw(True)  # a black video frame is a moment
    assert not later.saw(False)
    assert [later.saw(True) for _ in range(3)] == [False, False, True]


# --- the portal's screenshot file ----------------------------------------------------------


def _png(path: Path, size: tuple[int, int] = (64, 32)) -> Path:
    Image.new("RGB", size, (250, 250, 250)).save(path)
    return path


def test_the_returned_file_is_read_then_exactly_it_is_deleted(tmp_path: Path) -> None:
    shot = _png(tmp_path / "Screenshot from 2026-11-30 10-00-00.png")  # GNOME's name, with spaces
    neighbour = _png(tmp_path / "holiday.png")
    uri = "file://" + str(shot).replace(" ", "%20")
    data = take_file(uri, time.time())
    assert decode_rgb(data, "x").shape == (32, 64, 3)
    assert not shot.exists() and neighbour.exists()


@pytest.mark.parametrize(
    "uri",
    ["http://example.com/a.png", "file://otherhost/tmp/a.png", "file:relative.png", "file:///tmp/a.png?x=1",
     "file:///tmp/a%00b.png"],
)  # fmt: skip
def test_only_local_absolute_file_uris_are_accepted(uri: str) -> None:
    with pytest.raises(ShotFileError):
        path_from_uri(uri)


def test_a_symlink_at_the_returned_path_is_neither_followed_nor_deleted(tmp_path: Path) -> None:
    precious = _png(tmp_path / "precious.png")
    link = tmp_path / "out.png"  # someone else planted it where the wlr portal writes
    link.symlink_to(precious)
    with pytest.raises(ShotFileError, match="cannot be opened safely"):
        take_file(f"file://{link}", time.time())
    assert link.is_symlink() and precious.exists()


def test_a_stale_file_or_a_directory_is_left_alone(tmp_path: Path) -> None:
    old = _png(tmp_path / "out.png")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    with pytest.raises(ShotFileError, match="stale"):
        take_file(f"file://{old}", time.time())
    assert old.exists()
    folder = tmp_path / "dir.png"
    folder.mkdir()
    with pytest.raises(ShotFileError, match="not a regular file"):
        take_file(f"file://{folder}", time.time())
    assert folder.is_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_of_another_user_is_left_alone(tmp_path: Path) -> None:
    theirs = _png(tmp_path / "out.png")
    os.chown(theirs, 65534, 65534)
    with pytest.raises(ShotFileError, match="another user"):
        take_file(f"file://{theirs}", time.time())
    assert theirs.exists()


def test_a_file_with_another_name_is_neither_read_nor_deleted(tmp_path: Path) -> None:
    """A fresh screenshot has one name; a hard link at the returned path is someone's file."""
    precious = _png(tmp_path / "thesis-figure.png")
    out = tmp_path / "out.png"
    os.link(precious, out)
    with pytest.raises(ShotFileError, match="other names"):
        take_file(f"file://{out}", time.time())
    assert out.exists() and precious.exists()


@contextlib.contextmanager
def _undeletable(path: Path) -> Iterator[None]:
    """unlink(path) fails with EPERM: the immutable flag as root (root ignores modes), else
    a folder without write permission."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True, capture_output=True)
    else:
        path.parent.chmod(0o500)
        try:
            yield
        finally:
            path.parent.chmod(0o700)


def test_a_screenshot_that_cannot_be_deleted_is_an_error_in_words(tmp_path: Path) -> None:
    shot = _png(tmp_path / "out.png")
    with _undeletable(shot), pytest.raises(ShotFileError, match="could not be deleted"):
        take_file(f"file://{shot}", time.time())


def test_a_corrupt_or_enormous_picture_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(ShotFileError, match="not an image"):
        decode_rgb(b"\x89PNG\r\n\x1a\n garbage", "the portal's screenshot")
    # a PPM header claiming 200000 x 200000 pixels: refused before any allocation
    with pytest.raises(ShotFileError):
        decode_rgb(b"P6\n200000 200000\n255\n" + b"\0" * 64, "grim's screenshot")


# --- the whole-desktop grabber --------------------------------------------------------------


class _Shooter:
    """Hands back a fixed picture: what the portal returned on a HiDPI (scale 2) desktop."""

    name = "portal"

    def __init__(self, rgb: np.ndarray) -> None:
        self.rgb = rgb

    def take(self) -> np.ndarray:
        return self.rgb

    def close(self) -> None:
        return None


def test_a_hidpi_picture_is_fitted_to_the_logical_layout_so_window_boxes_fit() -> None:
    rgb = np.full((1440, 2560, 3), 255, np.uint8)
    rgb[200:400, 1280:1600] = 0  # a dark window at logical (640,100)-(800,200)
    grabber = WholeDesktopGrabber(_Shooter(rgb), layout=lambda: (0, 0, 1280, 720))
    [mon] = grabber.monitors()
    frame = grabber.grab(mon)
    assert frame.pixels.shape == (720, 1280, 3) and frame.monitor.box == (0, 0, 1280, 720)
    assert frame.pixels[150, 700].max() == 0 and frame.pixels[150, 600].min() == 255
    plain = WholeDesktopGrabber(_Shooter(rgb), layout=None).grab(mon)
    assert plain.pixels.shape == (1440, 2560, 3) and plain.monitor.box == (0, 0, 2560, 1440)


# --- sway ----------------------------------------------------------------------------------


def _con(cid: int, app_id: str | None, name: str, rect: tuple[int, int, int, int], **extra: object) -> dict:
    x, y, w, h = rect
    return {"id": cid, "type": "con", "pid": 100 + cid, "app_id": app_id, "name": name, "nodes": [],
            "floating_nodes": [], "rect": {"x": x, "y": y, "width": w, "height": h}, "visible": True,
            "focused": False, **extra}  # fmt: skip


def _tree(*workspace_nodes: dict, floating: tuple[dict, ...] = (), scratch: tuple[dict, ...] = ()) -> dict:
    ws = {"type": "workspace", "name": "1", "nodes": list(workspace_nodes), "floating_nodes": list(floating)}
    return {
        "type": "root",
        "nodes": [
            {"type": "output", "name": "__i3", "nodes": [{"type": "workspace", "name": "__i3_scratch",
                                                          "nodes": [], "floating_nodes": list(scratch)}]},
            {"type": "output", "name": "HEADLESS-1", "nodes": [ws], "floating_nodes": []},
        ],
    }  # fmt: skip


def test_sway_tree_gives_visible_windows_bottom_to_top() -> None:
    tree = _tree(
        _con(4, "firefox", "Mail", (0, 0, 640, 720), focused=True),
        _con(5, None, "Old X app", (640, 0, 640, 720), window=123, window_properties={"class": "XTerm"}),
        _con(6, "firefox", "hidden tab", (0, 0, 640, 720), visible=False),
        floating=(_con(7, "org.keepassxc.KeePassXC", "Vault", (100, 100, 300, 200), type="floating_con"),),
        scratch=(_con(8, "notes", "Scratch", (10, 10, 100, 100), type="floating_con"),),
    )
    got = [(w.app, w.title, w.box, w.active) for w in views(tree)]
    assert got == [
        ("firefox", "Mail", (0, 0, 640, 720), True),
        ("XTerm", "Old X app", (640, 0, 1280, 720), False),
        ("org.keepassxc.KeePassXC", "Vault", (100, 100, 400, 300), False),
    ]


def test_sway_tree_attacks_are_errors_never_an_empty_list() -> None:
    deep: dict = _con(1, "x", "x", (0, 0, 1, 1))
    for _ in range(200):
        deep = {"type": "con", "nodes": [deep], "floating_nodes": []}
    with pytest.raises(WindowListError, match="nested too deeply"):
        list(views(deep))
    # a visible window without a usable box could not be masked: the pass must not run
    bad = _tree(_con(2, "org.keepassxc.KeePassXC", "Vault", (0, 0, 0, 0)))
    with pytest.raises(WindowListError, match="no usable position"):
        list(views(bad))
    huge = _tree(_con(3, "a", "t" * 100_000, (0, 0, 10, 10)))
    [w] = views(huge)
    assert len(w.title) == 1000


@pytest.fixture
def hostile_sway(tmp_path: Path) -> Iterator[tuple[str, list[bytes]]]:
    """A UNIX socket that speaks like sway's IPC but answers whatever the test queues."""
    path = str(tmp_path / "sway-ipc.sock")
    replies: list[bytes] = []
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(14)
                conn.sendall(replies.pop(0) if replies else b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, replies
    stop.set()
    thread.join(2)
    server.close()


def _ipc(body: bytes, claimed: int | None = None) -> bytes:
    return b"i3-ipc" + struct.pack("=II", len(body) if claimed is None else claimed, 4) + body


def test_a_hostile_sway_socket_gives_errors(hostile_sway: tuple[str, list[bytes]]) -> None:
    path, replies = hostile_sway
    replies.append(
        _ipc(json.dumps([{"active": True, "rect": {"x": 0, "y": 0, "width": 800, "height": 600}}]).encode())
    )
    sway = SwayWindows(path)
    replies.append(_ipc(b"{not json"))
    with pytest.raises(WindowListError, match="not JSON"):
        sway.windows()
    replies.append(_ipc(b"", claimed=1 << 30))
    with pytest.raises(WindowListError, match="too large"):
        sway.windows()
    replies.append(b"HTTP/1.1 200 OK\r\n\r\n")
    with pytest.raises(WindowListError):
        sway.windows()


# --- Hyprland (not run here: recorded replies of hyprctl's documented shape) ----------------

HYPR_MONITORS = [
    {"id": 0, "name": "DP-1", "x": 0, "y": 0, "width": 3840, "height": 2160, "scale": 2.0, "transform": 0,
     "activeWorkspace": {"id": 1, "name": "1"}, "specialWorkspace": {"id": 0, "name": ""}, "disabled": False},
    {"id": 1, "name": "HDMI-A-1", "x": 1920, "y": 0, "width": 1920, "height": 1080, "scale": 1.0,
     "transform": 1, "activeWorkspace": {"id": 5, "name": "5"}, "specialWorkspace": {"id": -98, "name": "special:s"}},
]  # fmt: skip


def _client(
    title: str, cls: str, at: list[int], size: list[int], ws: int, focus: int, **extra: object
) -> dict:
    return {"address": "0x1", "mapped": True, "hidden": False, "at": at, "size": size,
            "workspace": {"id": ws, "name": str(ws)}, "floating": False, "class": cls, "title": title,
            "pid": 1, "focusHistoryID": focus, **extra}  # fmt: skip


def test_hyprland_clients_on_shown_workspaces_in_stacking_guess_order() -> None:
    clients = [
        _client("Mail", "thunderbird", [0, 0], [960, 1080], 1, 2),
        _client("Vault", "org.keepassxc.KeePassXC", [100, 100], [400, 300], 1, 0, floating=True),
        _client("Other ws", "kitty", [0, 0], [10, 10], 2, 3),
        _client("Scratch", "kitty", [1920, 0], [500, 500], -98, 1),
        _client("Hidden", "kitty", [0, 0], [10, 10], 1, 4, hidden=True),
    ]
    got = [(w.title, w.box, w.active) for w in hyprland.visible_clients(clients, HYPR_MONITORS)]
    assert got == [("Mail", (0, 0, 960, 1080), False), ("Scratch", (1920, 0, 2420, 500), False),
                   ("Vault", (100, 100, 500, 400), True)]  # fmt: skip
    # logical layout: 3840x2160 at scale 2 is 1920x1080; the rotated 1920x1080 one is 1080 wide
    assert hyprland.monitors_layout(HYPR_MONITORS) == (0, 0, 3000, 1920)
    with pytest.raises(WindowListError):
        hyprland.visible_clients([_client("Vault", "keepassxc", [0, 0], ["x", 3], 1, 0)], HYPR_MONITORS)
    with pytest.raises(WindowListError):
        hyprland.visible_clients({"not": "a list"}, HYPR_MONITORS)


# --- KWin and GNOME Window Calls (not run here: replies of the shapes their code sends) -----


def test_kwin_report_parsing() -> None:
    report = {"windows": [{"title": "Vault", "app": "keepassxc", "x": 10.4, "y": 20, "width": 300,
                           "height": 200.6, "active": True}], "screen": {"x": 0, "y": 0, "width": 1920, "height": 1080}}  # fmt: skip
    [w] = kwin.parse_windows(report)
    assert (w.title, w.app, w.box, w.active) == ("Vault", "keepassxc", (10, 20, 310, 221), True)
    with pytest.raises(WindowListError):
        kwin.parse_windows({"windows": [{"title": "Vault", "app": "keepassxc"}]})
    with pytest.raises(WindowListError):
        kwin.parse_windows({"windows": "everything is fine"})


def test_gnome_window_calls_old_and_new_replies() -> None:
    old = [{"in_current_workspace": True, "wm_class": "org.keepassxc.KeePassXC", "title": "Vault", "id": 7,
            "x": 5, "y": 6, "width": 100, "height": 50, "focus": True, "window_type": 0},
           {"in_current_workspace": False, "wm_class": "firefox", "title": "elsewhere", "id": 8,
            "x": 0, "y": 0, "width": 10, "height": 10},
           {"in_current_workspace": True, "wm_class": "gnome-shell", "id": 9, "window_type": 1}]  # fmt: skip
    [w] = gnome.parse_list(old)
    assert (w.app, w.title, w.box, w.active) == ("org.keepassxc.KeePassXC", "Vault", (5, 6, 105, 56), True)
    asked: list[int] = []

    def details(wid: int) -> dict:
        asked.append(wid)
        return {"x": 1, "y": 2, "width": 30, "height": 40, "title": "Notes"}

    [n] = gnome.parse_list(
        [{"in_current_workspace": True, "wm_class": "gedit", "id": 3, "focus": False}], details
    )
    assert asked == [3] and (n.title, n.box) == ("Notes", (1, 2, 31, 42))
    with pytest.raises(WindowListError):
        gnome.parse_list([{"in_current_workspace": True, "wm_class": "keepassxc", "id": 4}])
