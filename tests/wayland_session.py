"""A headless Wayland desktop for tests and benchmarks: sway, the desktop portal, real windows.

sway (wlroots, `WLR_BACKENDS=headless`, the pixman renderer) runs as a dedicated non-root
user when we are root (sway refuses to run as root; `setpriv` switches user), else as ourselves. The D-Bus session
with xdg-desktop-portal, its wlr backend (which runs `grim`), the gtk backend (the Access
interface xdg-desktop-portal 1.16 wants) and the permission store runs as the caller, with
PipeWire (without it the wlr backend exits). Why the caller and not the sway user: the
project's Python usually lives under /root (mode 0700), which another user cannot run, so
the app under test talks to the session bus as the caller, like an app of the logged-in
user does. WAYLAND_DISPLAY is an absolute path, so clients of any user find the socket.

The D-Bus session only knows the four services above (its own service directory), so
nothing else (the document portal and its FUSE mount, the accessibility bus) starts.
Every process is started in its own process group and killed with it at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.screen_support import WINDOW_SCRIPT, XWindow

SWAY_USER = "persona-wl-test"
PORTAL_SERVICES = (
    "org.freedesktop.portal.Desktop",
    "org.freedesktop.impl.portal.desktop.wlr",
    "org.freedesktop.impl.portal.desktop.gtk",
    "org.freedesktop.impl.portal.PermissionStore",
)
BACKENDS = (
    ("org.freedesktop.impl.portal.PermissionStore", "/usr/libexec/xdg-permission-store"),
    ("org.freedesktop.impl.portal.desktop.wlr", "/usr/libexec/xdg-desktop-portal-wlr"),
    ("org.freedesktop.impl.portal.desktop.gtk", "/usr/libexec/xdg-desktop-portal-gtk"),
)
NEEDED = ("sway", "grim", "pipewire", "dbus-daemon", "/usr/libexec/xdg-desktop-portal",
          "/usr/libexec/xdg-desktop-portal-wlr", "/usr/libexec/xdg-desktop-portal-gtk")  # fmt: skip
WLR_OUT = Path("/tmp/out.png")  # where xdg-desktop-portal-wlr always writes (a fixed name)


def missing_programs() -> list[str]:
    return [p for p in NEEDED if not (os.path.isabs(p) and os.access(p, os.X_OK)) and not shutil.which(p)]


def _wait_for(what: str, check: Any, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process exited with {proc.returncode}")
        time.sleep(0.05)
    raise AssertionError(f"{what}: not ready within {timeout:.0f} s")


def _ensure_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", name],
            check=True, capture_output=True,
        )  # fmt: skip
        return pwd.getpwnam(name)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process group the process leads (it was started in a new session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(3)
            break
        except subprocess.TimeoutExpired:
            continue
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream:
            stream.close()


# --- sway IPC (for the tests' own use: moving focus, waiting for windows) ------------------

_MAGIC = b"i3-ipc"


def sway_ipc(sock_path: str, kind: int, payload: str = "") -> Any:
    data = payload.encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(sock_path)
        s.sendall(_MAGIC + struct.pack("=II", len(data), kind) + data)
        head = b""
        while len(head) < 14:
            head += s.recv(14 - len(head))
        length, _ = struct.unpack("=II", head[6:])
        body = b""
        while len(body) < length:
            body += s.recv(length - len(body))
    return json.loads(body)


@dataclass
class WaylandSession:
    env: dict[str, str]  # what a client of this desktop (the app under test) needs
    swaysock: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    windows: list[XWindow] = field(default_factory=list)

    def ipc(self, kind: int, payload: str = "") -> Any:
        return sway_ipc(self.swaysock, kind, payload)

    def command(self, cmd: str) -> None:
        replies = self.ipc(0, cmd)
        assert all(r.get("success") for r in replies), f"swaymsg {cmd!r}: {replies}"

    def views(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []

        def walk(node: dict[str, Any]) -> None:
            if node.get("pid") and node.get("type") in ("con", "floating_con"):
                out.append(node)
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)

        walk(self.ipc(4))
        return out

    def show_window(self, app_id: str, title: str, text: str, font_px: int = 26) -> XWindow:
        """A real Wayland window (Qt's wayland platform) with this app id, title and text."""
        env = {**os.environ, **self.env, "QT_QPA_PLATFORM": "wayland"}
        env.pop("DISPLAY", None)
        proc = subprocess.Popen(
            [sys.executable, "-c", WINDOW_SCRIPT, title, text, "0", "0", "600", "400", str(font_px), app_id],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        win = XWindow(proc)
        self.windows.append(win)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        line = proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            win.close()
            err = proc.stderr.read() if proc.stderr and not proc.stderr.closed else ""
            raise AssertionError(f"wayland test window did not show: {line!r} {err[-2000:]}")
        _wait_for(f"window {app_id}", lambda: self._mapped(app_id, title), 10)
        return win

    def _mapped(self, app_id: str, title: str) -> bool:
        return any(v.get("app_id") == app_id and v.get("name") == title and v.get("visible")
                   for v in self.views())  # fmt: skip

    def focus(self, app_id: str) -> None:
        self.command(f'[app_id="{app_id}"] focus')
        _wait_for(f"focus on {app_id}",
                  lambda: any(v.get("app_id") == app_id and v.get("focused") for v in self.views()), 5)  # fmt: skip

    def close_windows(self) -> None:
        while self.windows:
            self.windows.pop().close()


def _service_dir(root: Path, names: tuple[str, ...]) -> Path:
    services = root / "services"
    services.mkdir()
    for name in names:
        text = Path(f"/usr/share/dbus-1/services/{name}.service").read_text()
        # no systemd user manager here: activation by Exec only
        kept = [ln for ln in text.splitlines() if not ln.startswith("SystemdService=")]
        (services / f"{name}.service").write_text("\n".join(kept) + "\n")
    return services


def _bus_config(root: Path, services: tuple[str, ...] = PORTAL_SERVICES) -> Path:
    conf = root / "session.conf"
    conf.write_text(
        textwrap.dedent(
            f"""\
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <listen>unix:dir={root}</listen>
              <auth>EXTERNAL</auth>
              <servicedir>{_service_dir(root, services)}</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        )
    )
    return conf


def _start_sway(base: Path, width: int, height: int) -> tuple[subprocess.Popen[bytes], Path]:
    run = Path(tempfile.mkdtemp(prefix="persona-wl-", dir="/tmp"))  # the sway user must reach it
    (run / "sway.conf").write_text(
        f"output HEADLESS-1 resolution {width}x{height} position 0 0\n"
        "default_border none\n"  # windows fill their tiles: their boxes are what the test knows
        "default_orientation vertical\n"  # full-width windows, one under another
        "focus_follows_mouse no\n"
        "xwayland disable\n"  # a lazy XWayland would take the first free X display from Xvfb tests
    )
    (run / "sway.conf").chmod(0o644)
    env = {
        "HOME": str(run),
        "XDG_RUNTIME_DIR": str(run),
        "PATH": "/usr/bin:/bin",
        "WLR_BACKENDS": "headless",
        "WLR_LIBINPUT_NO_DEVICES": "1",
        "WLR_RENDERER": "pixman",
        "WLR_HEADLESS_OUTPUTS": "1",
    }
    cmd = ["sway", "-c", str(run / "sway.conf")]
    if os.geteuid() == 0:
        user = _ensure_user(SWAY_USER)
        os.chown(run, user.pw_uid, user.pw_gid)
        run.chmod(0o700)
        envs = [f"{k}={v}" for k, v in env.items()]
        # setpriv execs sway in place (runuser forks and, on SIGTERM, waits 2 s before it kills)
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
               "env", "-i", *envs, *cmd]  # fmt: skip
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    with open(base / "sway.log", "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
    return proc, run


@contextlib.contextmanager
def wayland_session(base: Path, width: int = 1280, height: int = 720) -> Iterator[WaylandSession]:
    """A running headless sway desktop with a working desktop portal; `base` holds its files."""
    missing = missing_programs()
    assert not missing, f"missing {missing}: scripts/install-system-deps installs them"
    base.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen[bytes]] = []
    run: Path | None = None
    session: WaylandSession | None = None
    try:
        sway, run = _start_sway(base, width, height)
        procs.append(sway)
        wl = _wait_for("sway's wayland socket", lambda: _wayland_socket(run), 15, sway)
        swaysock = _wait_for(
            "sway's IPC socket", lambda: next(iter(run.glob("sway-ipc.*.sock")), None), 15, sway
        )
        _wait_for("sway's outputs", lambda: _outputs_ready(str(swaysock)), 10, sway)
        home, rt = base / "home", base / "run"
        (home / ".config" / "xdg-desktop-portal-wlr").mkdir(parents=True)
        (home / ".config" / "xdg-desktop-portal-wlr" / "config").write_text(
            "[screencast]\nchooser_type=none\n"
        )
        rt.mkdir(mode=0o700)
        bus_dir = base / "bus"
        bus_dir.mkdir()
        env = {
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(rt),
            "PATH": "/usr/bin:/bin",
            "WAYLAND_DISPLAY": str(wl),
            "SWAYSOCK": str(swaysock),
            "XDG_CURRENT_DESKTOP": "sway",
            "XDG_SESSION_TYPE": "wayland",
            "GDK_BACKEND": "wayland",
            "GTK_A11Y": "none",
            "NO_AT_BRIDGE": "1",
        }
        read_fd, write_fd = os.pipe()
        with open(base / "dbus.log", "wb") as log:
            bus = subprocess.Popen(
                ["dbus-daemon", "--config-file", str(_bus_config(bus_dir)), "--nofork",
                 f"--print-address={write_fd}"],
                env=env, pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
            )  # fmt: skip
        procs.append(bus)
        os.close(write_fd)
        ready, _, _ = select.select([read_fd], [], [], 10)
        address = os.read(read_fd, 1024).decode().strip() if ready else ""
        os.close(read_fd)
        assert address, "dbus-daemon printed no address"
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        with open(base / "pipewire.log", "wb") as log:
            pipewire = subprocess.Popen(["pipewire"], env=env, stdout=subprocess.DEVNULL, stderr=log,
                                        start_new_session=True)  # fmt: skip
        procs.append(pipewire)
        _wait_for("PipeWire's socket", lambda: (rt / "pipewire-0").exists(), 10, pipewire)
        # The backends first, each owning its name before the frontend starts: left to D-Bus
        # activation, xdg-desktop-portal 1.16 sometimes hangs 25 s in its start (a race with
        # the wlr backend's own start), which a desktop session's ordered start avoids too.
        for name, exe in BACKENDS:
            with open(base / f"{Path(exe).name}.log", "wb") as log:
                proc = subprocess.Popen([exe], env=env, stdout=subprocess.DEVNULL, stderr=log,
                                        start_new_session=True)  # fmt: skip
            procs.append(proc)
            _wait_for(f"{name} on the bus", lambda name=name: _has_owner(address, name), 10, proc)  # type: ignore[misc]
        WLR_OUT.unlink(missing_ok=True)  # a stale file from another run would be returned as ours
        session = WaylandSession(env, str(swaysock), procs)
        _wait_for("the portal's Screenshot interface", lambda: _portal_ready(address), 30)
        yield session
    finally:
        if session is not None:
            session.close_windows()
        for proc in reversed(procs):
            _stop(proc)
        if run is not None:
            shutil.rmtree(run, ignore_errors=True)
        with contextlib.suppress(OSError):
            if WLR_OUT.is_file() and not WLR_OUT.is_symlink():
                WLR_OUT.unlink()


@contextlib.contextmanager
def bare_bus(base: Path, deaf: bool = False) -> Iterator[str]:
    """A D-Bus session bus with no services at all (a desktop without a portal); its address.
    `deaf`: a policy that lets clients connect but never delivers a reply (a hung bus)."""
    base.mkdir(parents=True, exist_ok=True)
    conf = _bus_config(base, services=())
    if deaf:
        conf.write_text(
            conf.read_text()
            .replace('<allow send_destination="*" eavesdrop="true"/>', '<allow send_destination="*"/>')
            .replace('<allow eavesdrop="true"/>', "")
        )
    read_fd, write_fd = os.pipe()
    bus = subprocess.Popen(
        ["dbus-daemon", "--config-file", str(conf), "--nofork", f"--print-address={write_fd}"],
        pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 10)
        address = os.read(read_fd, 1024).decode().strip() if ready else ""
        assert address, "dbus-daemon printed no address"
        yield address
    finally:
        os.close(read_fd)
        _stop(bus)


def _wayland_socket(run: Path) -> Path | None:
    return next((p for p in sorted(run.glob("wayland-*")) if p.is_socket()), None)


def _outputs_ready(swaysock: str) -> bool:
    try:
        return bool(sway_ipc(swaysock, 3))
    except OSError:
        return False


def _has_owner(address: str, name: str) -> bool:
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    with open_dbus_connection(address) as conn:
        reply = conn.send_and_get_reply(message_bus.NameHasOwner(name), timeout=5)
    return bool(reply.body and reply.body[0])


def _portal_ready(address: str) -> bool:
    """True once xdg-desktop-portal answers for its Screenshot interface (it starts its
    backends on the first call; the first answer can take a few seconds)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    try:
        with open_dbus_connection(address) as conn:
            props = DBusAddress("/org/freedesktop/portal/desktop", "org.freedesktop.portal.Desktop",
                                "org.freedesktop.DBus.Properties")  # fmt: skip
            reply = conn.send_and_get_reply(
                new_method_call(props, "Get", "ss", ("org.freedesktop.portal.Screenshot", "version")),
                timeout=5,
            )
        return reply.header.message_type.name == "method_return"
    except (OSError, TimeoutError):
        return False
