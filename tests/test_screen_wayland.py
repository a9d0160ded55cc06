"""Screen capture on a real (headless) Wayland desktop: sway, xdg-desktop-portal with its wlr
backend, grim, PipeWire, real Wayland windows (Qt's wayland platform) showing known text.

The app's own wiring runs (`capture_once`, `build_screen_loop`, the CLI), choosing the
portal, sway's window list and the exclusions exactly as on an owner's sway desktop. A
password manager's window (by app id) and a private browsing window (by title) are on
screen, and their text must never be stored. See tests/wayland_session.py for the session.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jeepney import DBusAddress, HeaderFields, message_bus, new_method_call, new_signal
from jeepney.io.blocking import open_dbus_connection
from PIL import Image, ImageDraw
from pytestqt.qtbot import QtBot

from persona_desktop.adapters.wayland.dbus import SessionBus
from persona_desktop.adapters.wayland.permission import STORE, forget_screenshot_answer, screenshot_answers
from persona_desktop.adapters.wayland.portal import PORTAL_PATH, REQUEST, PortalShooter, PortalTimeoutError
from persona_desktop.app import build_context, build_shell
from persona_desktop.bootstrap import Runtime
from persona_desktop.bootstrap.screen import DesktopCapture, build_screen_loop, capture_once
from persona_desktop.bootstrap.screen_support import screen_support
from persona_desktop.capture.screen_loop import ScreenEvent
from persona_desktop.domain.model import Kind
from persona_desktop.errors import CapturePermissionError, CaptureUnavailableError
from tests.conftest import Cli
from tests.wayland_session import WLR_OUT, WaylandSession, bare_bus, wayland_session

pytestmark = [pytest.mark.wayland, pytest.mark.timeout(120)]

NOTES = "Quarterly budget meeting Thursday"
VAULT = "Vault recovery phrase zebra"
PRIVATE = "Private search about neighbours"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WaylandSession]:
    with wayland_session(tmp_path_factory.mktemp("wayland")) as s:
        yield s


@pytest.fixture
def desktop(session: WaylandSession, monkeypatch: pytest.MonkeyPatch) -> Iterator[WaylandSession]:
    """This process is a client of the headless sway desktop (as the app is of the owner's)."""
    for key, value in session.env.items():
        if key in ("WAYLAND_DISPLAY", "SWAYSOCK", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE",
                   "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"):  # fmt: skip
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("DISPLAY", raising=False)
    yield session
    session.close_windows()


def screen_texts(runtime: Runtime) -> list[str]:
    with runtime.uow.read() as uow:
        return [f.text for f in uow.fragments.all(Kind.SCREEN)]


def _three_windows(desktop: WaylandSession) -> None:
    desktop.show_window("screentest", "Notes", NOTES)
    desktop.show_window("org.keepassxc.KeePassXC", "Passwords.kdbx - KeePassXC", VAULT)
    desktop.show_window("firefox", "Private Browsing - Mozilla Firefox", PRIVATE)


def test_the_portal_grab_stores_the_notes_and_masks_excluded_windows(
    desktop: WaylandSession, runtime: Runtime
) -> None:
    _three_windows(desktop)
    desktop.focus("screentest")
    support = screen_support(runtime.settings)
    assert support.grabbers == ("portal", "grim") and support.periodic_reason is None
    outcome = capture_once(runtime)
    assert outcome.grabber == "portal" and outcome.windows_known
    texts = screen_texts(runtime)
    assert NOTES in texts
    joined = " ".join(texts).lower()
    assert "zebra" not in joined and "recovery" not in joined and "neighbours" not in joined
    assert not WLR_OUT.exists()  # the portal's file was read, then deleted


def test_an_excluded_active_window_stores_nothing(desktop: WaylandSession, runtime: Runtime) -> None:
    desktop.show_window("screentest", "Notes", NOTES)
    desktop.show_window("org.keepassxc.KeePassXC", "Passwords.kdbx - KeePassXC", VAULT)
    desktop.focus("org.keepassxc.KeePassXC")
    outcome = capture_once(runtime)
    assert [r.status for r in outcome.results] == ["excluded"] and outcome.fragments == 0
    assert screen_texts(runtime) == []


def test_capture_screen_never_reads_the_tray_app_s_windows(desktop: WaylandSession, runtime: Runtime) -> None:
    """`capture screen` (a keyboard shortcut runs it) is a process of its own: the tray app's
    window, of another process, is known by its app id (the .desktop file's) and masked."""
    desktop.show_window("screentest", "Notes", NOTES)
    desktop.show_window("persona-desktop", "Review - Persona Desktop", "Approve: the owner keeps a llama")
    desktop.focus("screentest")
    outcome = capture_once(runtime)
    texts = screen_texts(runtime)
    assert NOTES in texts, outcome.summary()
    assert not any("llama" in t.lower() or "approve" in t.lower() for t in texts), texts


def test_the_periodic_loop_runs_on_sway_and_never_stores_the_vault(
    desktop: WaylandSession, runtime: Runtime
) -> None:
    _three_windows(desktop)
    desktop.focus("screentest")
    runtime.settings.set("capture.interval_seconds", 1.0)
    events: queue.Queue[ScreenEvent] = queue.Queue()
    loop = build_screen_loop(runtime, on_event=events.put)
    loop.start()
    try:
        captured = 0
        deadline = time.monotonic() + 30
        while captured < 3 and time.monotonic() < deadline:
            ev = events.get(timeout=30)
            assert ev.kind != "error", ev.data
            captured += ev.kind == "captured"
        assert captured == 3
        status = loop.status()
        assert status.periodic and status.state == "running"
    finally:
        assert loop.stop(5)
    texts = screen_texts(runtime)
    assert texts.count(NOTES) == 1  # read once, then unchanged
    assert not any("zebra" in t.lower() or "neighbours" in t.lower() for t in texts)


def test_a_window_list_that_breaks_skips_the_pass_instead_of_capturing_unmasked(
    desktop: WaylandSession, runtime: Runtime, tmp_path: Path
) -> None:
    _three_windows(desktop)
    desktop.focus("screentest")
    wiring = DesktopCapture(screen_support(runtime.settings))
    loop = build_screen_loop(runtime, desktop=wiring)
    grabber = wiring.grabber()
    windows = wiring.windows()
    try:
        windows.path = str(tmp_path / "gone.sock")  # type: ignore[attr-defined]  # sway's socket vanished
        assert loop.tick(grabber, windows, force=True) == []
        assert screen_texts(runtime) == []
        assert "window list could not be read" in (loop.status().last_error or "")
    finally:
        grabber.close()


def test_without_a_window_list_capture_runs_only_on_demand(
    desktop: WaylandSession, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWAYSOCK")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "river")  # a wlroots desktop with no window list
    desktop.show_window("screentest", "Notes", NOTES)
    events: queue.Queue[ScreenEvent] = queue.Queue()
    runtime.settings.set("capture.interval_seconds", 1.0)
    loop = build_screen_loop(runtime, on_event=events.put)
    loop.start()
    try:
        mode = _next(events, "mode")
        assert mode.data["periodic"] is False and "could not be left out" in mode.data["reason"]
        # the loop went to wait for a request; a periodic one grabs its first pass before that
        _wait(lambda: loop.status().idle >= 1)
        assert loop.status().frames == 0 and loop.status().passes == 0 and not loop.status().periodic
        loop.capture_now()
        _next(events, "captured")
    finally:
        assert loop.stop(5)
    assert NOTES in screen_texts(runtime)


def test_grim_takes_over_when_the_portal_has_no_screenshot(
    desktop: WaylandSession, runtime: Runtime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    desktop.show_window("screentest", "Notes", NOTES)
    with bare_bus(tmp_path / "bare") as address:  # a session bus where no portal runs
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        outcome = capture_once(runtime)
    assert outcome.grabber == "grim" and NOTES in screen_texts(runtime)


def test_a_session_bus_that_never_answers_is_an_error_in_time(tmp_path: Path) -> None:
    with bare_bus(tmp_path / "deaf", deaf=True) as address:
        started = time.monotonic()
        with pytest.raises(CaptureUnavailableError, match="did not answer within 1 s"):
            SessionBus(address, timeout=1.0)
        assert time.monotonic() - started < 3


def test_a_refused_screenshot_says_how_to_allow_it_again(desktop: WaylandSession, runtime: Runtime) -> None:
    """Answer 2 from the real portal: its wlr backend cannot write /tmp/out.png (a folder there)."""
    desktop.show_window("screentest", "Notes", NOTES)
    WLR_OUT.mkdir()
    try:
        with pytest.raises(CapturePermissionError, match="Ask the desktop again"):
            capture_once(runtime)
        events: list[ScreenEvent] = []
        loop = build_screen_loop(runtime, on_event=events.append)
        loop.start()
        _wait(lambda: loop.status().state == "error")
        fatal = [e for e in events if e.kind == "error"]
        assert fatal and fatal[0].data["fatal"] and fatal[0].data["refused"]
        assert loop.stop(5)
    finally:
        WLR_OUT.rmdir()
    assert screen_texts(runtime) == []


def test_a_portal_that_never_answers_times_out_and_a_late_answer_is_ignored(desktop: WaylandSession) -> None:
    """/tmp/out.png as a FIFO: grim blocks writing it, so the portal hangs, as 1.16 can."""
    desktop.show_window("screentest", "Notes", NOTES)
    os.mkfifo(WLR_OUT)
    shooter = PortalShooter(timeout_s=1.5)
    try:
        started = time.monotonic()
        with pytest.raises(PortalTimeoutError, match=r"did not answer within 1\.5 s"):
            shooter.take()
        assert time.monotonic() - started < 5
        drain = threading.Thread(target=lambda: Path(WLR_OUT).read_bytes(), daemon=True)
        drain.start()  # grim can finish now; the portal then answers the abandoned request
        drain.join(10)
        WLR_OUT.unlink()
        shooter.timeout_s = 10
        rgb = shooter.take()  # the stale answer for the old request must not be taken for this one
        assert rgb.shape == (720, 1280, 3) and not WLR_OUT.exists()
    finally:
        shooter.close()
        if WLR_OUT.exists() or WLR_OUT.is_symlink():
            WLR_OUT.unlink()


class Forger:
    """Another program on the session bus: it watches the bus (as any program of the owner's
    may, on a desktop bus), and answers the app's screenshot request before the portal does,
    naming one of the owner's files, broadcast and sent to the app directly."""

    def __init__(self, address: str, victim: Path) -> None:
        self.address, self.victim = address, victim
        self.ready, self.forged = threading.Event(), threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "the forging connection did not start"

    def _run(self) -> None:
        try:
            with open_dbus_connection(self.address) as mon, open_dbus_connection(self.address) as emit:
                monitoring = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus",
                                         "org.freedesktop.DBus.Monitoring")  # fmt: skip
                mon.send_and_get_reply(new_method_call(monitoring, "BecomeMonitor", "asu",
                                                       (["type='method_return'"], 0)), timeout=5)  # fmt: skip
                self.ready.set()
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    msg = mon.receive(timeout=deadline - time.monotonic())
                    handle = msg.body[0] if msg.body and isinstance(msg.body[0], str) else ""
                    if not handle.startswith(PORTAL_PATH + "/request/"):
                        continue
                    _save_png(self.victim, "chapter 3 draft")  # the owner saves a file just now
                    answer = (0, {"uri": ("s", f"file://{self.victim}")})
                    app, request = (
                        msg.header.fields[HeaderFields.destination],
                        DBusAddress(handle, interface=REQUEST),
                    )
                    for to in (None, app):  # to every listener, then to the app only
                        forged = new_signal(request, "Response", "ua{sv}", answer)
                        if to is not None:
                            forged.header.fields[HeaderFields.destination] = to
                        emit.send(forged)
                    emit.send_and_get_reply(message_bus.GetId(), timeout=5)  # both routed by now
                    self.forged.set()
                    return
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.ready.set()


def _save_png(path: Path, text: str) -> None:
    img = Image.new("RGB", (400, 60), "white")
    ImageDraw.Draw(img).text((5, 5), text, fill="black")
    img.save(path)


def test_a_forged_portal_answer_is_ignored_and_the_file_it_names_is_neither_read_nor_deleted(
    desktop: WaylandSession, tmp_path: Path
) -> None:
    """/tmp/out.png as a FIFO keeps the real portal from answering (as above): only the forged
    answer comes. The app must wait for the portal's own and time out, the owner's file intact."""
    desktop.show_window("screentest", "Notes", NOTES)
    victim = tmp_path / "thesis-figure.png"
    forger = Forger(desktop.env["DBUS_SESSION_BUS_ADDRESS"], victim)
    assert forger.error is None, forger.error
    os.mkfifo(WLR_OUT)
    shooter = PortalShooter(timeout_s=3)
    try:
        with pytest.raises(PortalTimeoutError):
            shooter.take()
        assert forger.forged.is_set(), forger.error
        assert victim.is_file()
        with Image.open(victim) as img:
            assert img.size == (400, 60)
    finally:
        shooter.close()
        drain = threading.Thread(target=lambda: Path(WLR_OUT).read_bytes(), daemon=True)
        drain.start()
        drain.join(10)
        WLR_OUT.unlink()


def test_forgetting_a_refusal_in_the_permission_store(desktop: WaylandSession) -> None:
    bus = SessionBus()
    try:
        bus.call(STORE, "SetPermission", "sbssas", ("screenshot", True, "screenshot", "", ["no"]))
        assert screenshot_answers(bus) == {"": ["no"]}
        assert forget_screenshot_answer(bus) == [""]
        assert screenshot_answers(bus) == {}
    finally:
        bus.close()


def test_the_cli_captures_on_demand_and_says_what_works(
    desktop: WaylandSession, cli: Cli, data_dir: Path
) -> None:
    desktop.show_window("screentest", "Notes", NOTES)
    support = cli("capture", "support", "--json")
    assert support.code == 0, support.err
    info = support.json()
    assert info["desktop"] == "sway" and info["periodic"] and info["window_source"] == "sway"
    shot = subprocess.run(  # the command a keyboard shortcut runs, as its own process
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(data_dir), "capture", "screen", "--json"],
        env={**os.environ, "OMP_THREAD_LIMIT": "1"}, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shot.returncode == 0, shot.stderr
    assert json.loads(shot.stdout)["fragments"] >= 1
    assert NOTES in [f["text"] for f in cli("fragments", "--kind", "screen", "--json").json()]


def _next(events: queue.Queue[ScreenEvent], kind: str, timeout: float = 30) -> ScreenEvent:
    deadline = time.monotonic() + timeout
    while True:
        ev = events.get(timeout=max(0.01, deadline - time.monotonic()))
        if ev.kind == kind:
            return ev
        assert ev.kind != "error", ev.data


def _made_folder() -> bool:
    """A folder at the wlr portal's fixed output path; False while a pass's picture is there."""
    try:
        WLR_OUT.mkdir()
    except FileExistsError:
        return False
    return True


def _wait(cond: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_the_tray_app_enables_capture_from_a_focused_window_and_a_refusal_switches_it_off(
    desktop: WaylandSession, runtime: Runtime, qtbot: QtBot
) -> None:
    """The app's own shell on sway: the Enable window's first screenshot (through the real
    portal) precedes any capture; later, the portal's answer 2 turns capture off, says how to
    allow it again, and the next switch-on asks from the window again."""
    desktop.show_window("screentest", "Notes", NOTES)
    runtime.settings.set("capture.interval_seconds", 1.0)
    ctx = build_context(runtime)
    sh = build_shell(ctx, runtime)
    notes: list[str] = []
    sh.notified.connect(lambda _title, message: notes.append(message))
    access = sh.screen_access
    assert access is not None
    try:
        sh.screen_action.trigger()
        window = access.window
        assert window is not None and window.isVisible() and screen_texts(runtime) == []
        window.enable_button.click()
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=30_000)
        assert ctx.settings.get("capture.screen_confirmed") is True
        assert any("The desktop allows screenshots (1280x720 through the desktop portal)" in m for m in notes)
        # no frame is read while the app's own notification may be on screen (~13 s)
        qtbot.waitUntil(lambda: NOTES in screen_texts(runtime), timeout=60_000)
        assert sh.screen_action.isChecked()

        _wait(_made_folder)  # from now on the desktop answers 2 (once the running pass left)
        try:
            qtbot.waitUntil(lambda: not sh.screen_action.isChecked(), timeout=30_000)
            qtbot.waitUntil(lambda: any("Ask the desktop again" in m for m in notes), timeout=10_000)
            assert ctx.settings.get("capture.screen_confirmed") is False
            stored = len(screen_texts(runtime))
            sh.screen_action.trigger()  # on again: the window asks first, nothing runs meanwhile
            assert window.isVisible() and window.enable_button.isEnabled()
            assert "Quarterly" not in window.status.text() and len(screen_texts(runtime)) == stored
        finally:
            WLR_OUT.rmdir()
        window.close()  # closed without the desktop's yes: capture stays off
        assert not sh.screen_action.isChecked()
    finally:
        assert sh.shutdown()


def test_on_a_desktop_without_a_window_list_the_tray_captures_only_when_asked(
    desktop: WaylandSession, runtime: Runtime, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on GNOME without the flash choice: switched on, the loop waits; the tray's "Capture
    this screen now" takes one screenshot through the running loop."""
    monkeypatch.delenv("SWAYSOCK")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "river")
    desktop.show_window("screentest", "Notes", NOTES)
    runtime.settings.set("capture.interval_seconds", 1.0)
    runtime.settings.set("capture.screen_confirmed", True)  # allowed earlier
    sh = build_shell(build_context(runtime), runtime)
    notes: list[str] = []
    sh.notified.connect(lambda _title, message: notes.append(message))
    access = sh.screen_access
    assert access is not None
    try:
        sh.screen_action.trigger()
        qtbot.waitUntil(lambda: any("only when you ask" in m for m in notes), timeout=30_000)
        assert "could not be left out" in access.describe()
        loop = sh.capture.loop("screen").inner.loop  # type: ignore[union-attr]  # gate > lazy > loop
        _wait(lambda: loop.status().idle >= 1)  # waiting for a request: a periodic loop grabs first
        assert loop.status().passes == 0 and screen_texts(runtime) == []  # no periodic grab
        access.capture_now_action.trigger()
        # no frame is read while the app's own notification may be on screen (~13 s)
        qtbot.waitUntil(lambda: NOTES in screen_texts(runtime), timeout=60_000)
    finally:
        assert sh.shutdown()
