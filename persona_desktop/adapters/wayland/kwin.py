"""Window information from KWin (KDE Plasma) through a KWin script loaded over D-Bus.

KWin tells scripts, not other apps, which windows are open. So each read loads a tiny script
(`org.kde.kwin.Scripting.loadScript`), runs it, and the script calls back into this
connection (`callDBus`) with caption, class and frame geometry of every window on the
current virtual desktop, in stacking order; then the script is unloaded. Only a report that
comes from KWin's own bus name is believed: any program on the bus could call us.

Written for Plasma 6 (`workspace.stackingOrder`, `activeWindow`, `desktops`) with Plasma 5
fallbacks (`clientList`, `activeClient`, `desktop`); not run here (no KWin on this machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from jeepney import DBusAddress, HeaderFields, MatchRule, Message, message_bus, new_method_return

from persona_desktop.adapters.wayland.dbus import (
    DBusCallError,
    DBusReplyError,
    SessionBus,
    expect_int,
    expect_str,
)
from persona_desktop.adapters.wayland.sway import MAX_COORD, MAX_TITLE, UNPLACED, WindowListError
from persona_desktop.errors import CaptureUnavailableError
from persona_desktop.ports.screen import Box, WindowDesc, as_pid

KWIN = "org.kde.KWin"
SCRIPTING = DBusAddress("/Scripting", KWIN, "org.kde.kwin.Scripting")
REPORT_PATH = "/org/personadesktop/KWinWindows"
REPORT_IFACE = "org.personadesktop.KWinWindows"
REPORT_TIMEOUT_S = 2.0

SCRIPT = """(function () {
  var ws = workspace;
  var list = ws.stackingOrder || (ws.windowList ? ws.windowList() : ws.clientList());
  var active = ws.activeWindow || ws.activeClient || null;
  var cur = ws.currentDesktop;
  var out = [];
  for (var i = 0; i < list.length; i++) {
    var w = list[i];
    if (!w || w.desktopWindow || w.minimized || w.hidden || w.deleted) continue;
    var on = !!w.onAllDesktops;
    if (!on && w.desktops && w.desktops.length !== undefined) {
      for (var j = 0; j < w.desktops.length; j++) {
        var d = w.desktops[j];
        if (d === cur || (d && cur && d.id !== undefined && d.id === cur.id)) on = true;
      }
    } else if (!on && w.desktop !== undefined) {
      on = (w.desktop === cur || w.desktop === -1);
    }
    if (!on) continue;
    var g = w.frameGeometry || w.geometry;
    out.push({title: String(w.caption || ""), app: String(w.resourceClass || ""), pid: w.pid,
              x: g.x, y: g.y, width: g.width, height: g.height, active: w === active});
  }
  var s = ws.virtualScreenGeometry;
  callDBus(%(service)s, %(path)s, %(iface)s, "report", JSON.stringify({
    windows: out, screen: s ? {x: s.x, y: s.y, width: s.width, height: s.height} : null}));
})();
"""


class KWinWindows:
    def __init__(self, bus: SessionBus | None = None) -> None:
        self._bus = bus or SessionBus()
        self._plugin = f"persona-desktop-windows-{os.getpid()}"
        self._rule = MatchRule(type="method_call", interface=REPORT_IFACE, member="report", path=REPORT_PATH)
        try:
            (owner,) = self._bus.call(message_bus, "GetNameOwner", "s", (KWIN,))
            self._kwin = expect_str(owner, "KWin's bus name")
            self._script = self._write_script()
            self._last = self._report()
        except (DBusCallError, DBusReplyError, WindowListError, OSError) as exc:
            self._bus.close()
            raise CaptureUnavailableError(f"KWin's window list cannot be read: {exc}") from None

    def _write_script(self) -> Path:
        base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / "persona-desktop"
        base.mkdir(mode=0o700, exist_ok=True)
        path = base / f"{self._plugin}.js"
        text = SCRIPT % {k: json.dumps(v) for k, v in
                         (("service", self._bus.unique_name), ("path", REPORT_PATH), ("iface", REPORT_IFACE))}  # fmt: skip
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def windows(self) -> list[WindowDesc]:
        self._last = self._report()
        return parse_windows(self._last)

    def layout(self) -> Box | None:
        screen = self._last.get("screen") if isinstance(self._last, dict) else None
        return _box(screen)

    def close(self) -> None:
        self._script.unlink(missing_ok=True)
        self._bus.close()

    def _report(self) -> dict[str, object]:
        self._unload()
        (sid,) = self._bus.call(SCRIPTING, "loadScript", "ss", (str(self._script), self._plugin))
        script_id = expect_int(sid, "loadScript")
        if script_id < 0:
            raise WindowListError("KWin refused to load the window script")
        try:
            with self._bus.conn.filter(self._rule, bufsize=4) as reports:
                self._run(script_id)
                msg = self._wait(reports)
        finally:
            self._unload()
        body = msg.body[0] if msg.body else None
        try:
            data = json.loads(expect_str(body, "KWin window report", 4_000_000))
        except (ValueError, RecursionError) as exc:
            raise WindowListError(f"KWin's report is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise WindowListError("KWin's report is not an object")
        return data

    def _run(self, script_id: int) -> None:
        for path in (f"/Scripting/Script{script_id}", f"/{script_id}"):  # Plasma 6, Plasma 5
            try:
                self._bus.call(DBusAddress(path, KWIN, "org.kde.kwin.Script"), "run")
                return
            except DBusCallError:
                continue
        raise WindowListError("KWin did not run the window script")

    def _wait(self, reports: object) -> Message:
        conn = self._bus.conn
        while True:
            try:
                msg = conn.recv_until_filtered(reports, timeout=REPORT_TIMEOUT_S)
            except TimeoutError:
                raise WindowListError("KWin's window script did not report in time") from None
            conn.send(new_method_return(msg))
            if msg.header.fields.get(HeaderFields.sender) == self._kwin:
                return msg
            # someone else calling our report method: answered, ignored

    def _unload(self) -> None:
        with contextlib.suppress(DBusCallError):
            self._bus.call(SCRIPTING, "unloadScript", "s", (self._plugin,))


def _num(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > MAX_COORD:
        return None
    return round(value)


def _box(g: object) -> Box | None:
    if not isinstance(g, dict):
        return None
    x, y, w, h = (_num(g.get(k)) for k in ("x", "y", "width", "height"))
    if x is None or y is None or not w or not h or w <= 0 or h <= 0:
        return None
    return (x, y, x + w, y + h)


def parse_windows(report: dict[str, object]) -> list[WindowDesc]:
    items = report.get("windows")
    if not isinstance(items, list):
        raise WindowListError("KWin's report has no window list")
    out: list[WindowDesc] = []
    for n, w in enumerate(items, start=1):
        if not isinstance(w, dict):
            raise WindowListError("KWin's report lists a window that is not an object")
        box = _box(w)
        if box is None:
            raise WindowListError(UNPLACED)
        out.append(WindowDesc(str(w.get("title", ""))[:MAX_TITLE], str(w.get("app", ""))[:MAX_TITLE],
                              box, w.get("active") is True, n, as_pid(w.get("pid"))))  # fmt: skip
    return out
