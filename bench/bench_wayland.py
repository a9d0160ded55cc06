"""Screen capture cost on Wayland (the desktop portal, grim) beside X11 (mss on Xvfb), same run.

Starts the headless sway desktop of the tests (tests/wayland_session.py: sway as a dedicated
user, xdg-desktop-portal with its wlr backend, PipeWire) and an Xvfb, each 1280x720 with the
same Qt window showing the same text. For each grabber it measures:

- latency per frame: wall time of one grab, as the capture thread sees it (median, p90);
- CPU per captured minute: one capture pass every 10 s (the default interval) = 6 passes a
  minute; a pass is what the app's loop does on an unchanged screen (window list, grab,
  black check, change detection; no OCR, nothing new to store). CPU counts every process
  that works for the grab: this one, and the portal frontend, its wlr backend (with the grim
  it runs), PipeWire and sway for Wayland; Xvfb for X11.

    .venv/bin/python bench/bench_wayland.py [--frames 30] [--json]

Needs what scripts/install-system-deps installs (sway, grim, xdg-desktop-portal-wlr, ...);
as root it creates the dedicated user the tests use.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["OMP_THREAD_LIMIT"] = "1"

from bench.store_modes import headless_keys
from persona_desktop.bootstrap import open_runtime
from persona_desktop.bootstrap.screen import DesktopCapture, build_screen_loop
from persona_desktop.bootstrap.screen_support import screen_support
from persona_desktop.ports.screen import ScreenGrabber, WindowInfo
from tests.screen_support import show_window, xvfb
from tests.wayland_session import WaylandSession, wayland_session

W, H = 1280, 720
INTERVAL = 10.0
TEXT = "Quarterly budget meeting Thursday\nCall the plumber tomorrow at nine"
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process and its reaped children (grim, run by the wlr backend)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return (utime + stime + cutime + cstime) / TICK


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime


def session_pids(session: WaylandSession) -> list[int]:
    """sway, dbus-daemon, PipeWire, the portal backends and the portal frontend (activated)."""
    pids = {p.pid for p in session.procs}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
                env = (entry / "environ").read_bytes()
            except OSError:
                continue
            if cmd.endswith("xdg-desktop-portal") and session.env["DBUS_SESSION_BUS_ADDRESS"].encode() in env:
                pids.add(int(entry.name))
    return sorted(pids)


def measure(
    name: str, grabber: ScreenGrabber, windows: WindowInfo, loop_tick: Callable[[], object], frames: int,
    helpers: Callable[[], list[int]],
) -> dict[str, float]:  # fmt: skip
    mon = grabber.monitors()[0]
    grabber.grab(mon)  # warm up (the portal's first call starts its backend)
    lat = []
    for _ in range(frames):
        t = time.perf_counter()
        grabber.grab(mon)
        lat.append((time.perf_counter() - t) * 1000)
    loop_tick()  # the first pass reads the screen in full (OCR); the rest find it unchanged
    pids = helpers()
    assert pids, f"{name}: no helper process found to count"
    cpu0 = self_cpu() + sum(proc_cpu(p) for p in pids)
    wall0 = time.perf_counter()
    for _ in range(frames):
        loop_tick()
    wall = time.perf_counter() - wall0
    cpu = self_cpu() + sum(proc_cpu(p) for p in pids) - cpu0
    per_pass = cpu / frames
    lat.sort()
    return {
        "latency_ms_median": statistics.median(lat),
        "latency_ms_p90": lat[int(0.9 * (len(lat) - 1))],
        "pass_wall_ms": wall / frames * 1000,
        "cpu_ms_per_pass": per_pass * 1000,
        "cpu_s_per_captured_minute": per_pass * 60 / INTERVAL,
        "helper_processes": len(pids),
    }


def measure_app(
    name: str, data: Path, only: str | None, frames: int, helpers: Callable[[], list[int]]
) -> dict[str, float]:
    """The app's own wiring for this desktop (`only`: force that grabber), measured."""
    rt = open_runtime(data)
    support = screen_support(rt.settings)
    if only is not None:
        support = dataclasses.replace(support, grabbers=(only,))
    wiring = DesktopCapture(support)
    loop = build_screen_loop(rt, desktop=wiring)
    grabber = wiring.grabber()
    windows = wiring.windows()
    try:
        return measure(name, grabber, windows, lambda: loop.tick(grabber, windows), frames, helpers)
    finally:
        grabber.close()
        windows.close()
        rt.close()


def run_wayland(base: Path, frames: int, grabbers: tuple[str, ...]) -> dict[str, dict[str, float]]:
    with wayland_session(base / "wl", W, H) as session, client_env(session.env, drop=("DISPLAY",)):
        session.show_window("screentest", "Notes", TEXT)
        return {
            g: measure_app(g, base / f"data-{g}", g, frames, lambda: session_pids(session)) for g in grabbers
        }


def run_x11(base: Path, frames: int) -> dict[str, float]:
    with xvfb(W, H) as display, client_env({"DISPLAY": display}, drop=WAYLAND_VARS):
        win = show_window(display, "Notes", TEXT, (0, 0, W // 2, H), font_px=26)
        try:
            xvfb_pid = _xvfb_pid()
            return measure_app("mss", base / "data-mss", None, frames, lambda: [xvfb_pid] if xvfb_pid else [])
        finally:
            win.close()


WAYLAND_VARS = (
    "WAYLAND_DISPLAY",
    "XDG_SESSION_TYPE",
    "SWAYSOCK",
    "XDG_CURRENT_DESKTOP",
    "DBUS_SESSION_BUS_ADDRESS",
)


@contextlib.contextmanager
def client_env(env: dict[str, str], drop: tuple[str, ...] = ()) -> Iterator[None]:
    """This process as a client of that desktop, for the duration."""
    saved = dict(os.environ)
    for key in drop:
        os.environ.pop(key, None)
    os.environ.update({k: v for k, v in env.items() if k != "HOME"})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _xvfb_pid() -> int | None:
    """Our own Xvfb: the child of this process whose program is Xvfb."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            comm, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat.rsplit(")", 1)[1].split()
            if comm == "Xvfb" and int(rest[1]) == os.getpid():
                return int(entry.name)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    headless_keys()  # the store is encrypted: no keyring here, a passphrase of the bench's own
    base = Path(tempfile.mkdtemp(prefix="bench-wayland-"))
    results = run_wayland(base, args.frames, ("portal", "grim"))
    results["mss"] = run_x11(base, args.frames)
    print(f"{W}x{H}, {args.frames} frames each; a pass every {INTERVAL:.0f} s = {60 / INTERVAL:.0f} passes "
          "per captured minute (unchanged screen: no OCR)")  # fmt: skip
    print(f"{'grabber':<22} {'latency median':>15} {'p90':>8} {'pass wall':>10} {'CPU/pass':>9} "
          f"{'CPU s/captured min':>19} {'vs mss':>7}")  # fmt: skip
    base_cpu = results["mss"]["cpu_s_per_captured_minute"]
    labels = {"portal": "portal (sway, wlr)", "grim": "grim (sway)", "mss": "mss (Xvfb)"}
    for key in ("portal", "grim", "mss"):
        r = results[key]
        ratio = r["cpu_s_per_captured_minute"] / base_cpu if base_cpu > 0 else float("nan")
        print(f"{labels[key]:<22} {r['latency_ms_median']:>12.1f} ms {r['latency_ms_p90']:>5.1f} ms "
              f"{r['pass_wall_ms']:>7.1f} ms {r['cpu_ms_per_pass']:>6.1f} ms {r['cpu_s_per_captured_minute']:>19.3f} "
              f"{ratio:>6.1f}x")  # fmt: skip
    helpers = ", ".join(f"{k} {int(results[k]['helper_processes'])}" for k in ("portal", "grim", "mss"))
    print(
        "CPU counts this process and every helper process of the grab (portal, its backend and grim, "
        f"PipeWire, sway; Xvfb for mss): {helpers} helper processes"
    )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
