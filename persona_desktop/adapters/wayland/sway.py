"""Window information from sway over its IPC socket (`GET_TREE`, `GET_OUTPUTS`).

The tree is another program's output, and window titles are set by any program: sizes,
depth and values are checked, and a reply that does not parse is an error (the capture
pass is then skipped), never an empty list that would let excluded windows through.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Iterator, Mapping

from persona_desktop.errors import CaptureUnavailableError, PersonaError
from persona_desktop.ports.screen import Box, WindowDesc, as_pid, bounds

MAGIC = b"i3-ipc"
HEADER = struct.Struct("=II")
GET_TREE, GET_OUTPUTS = 4, 3
MAX_REPLY = 64 * 1024 * 1024
TIMEOUT_S = 2.0
MAX_DEPTH = 64
MAX_COORD = 1_000_000
MAX_TITLE = 1000


class WindowListError(PersonaError):
    """The compositor's window list could not be read or made sense of."""


UNPLACED = "a visible window has no usable position, so it could not be masked"


class SwayWindows:
    def __init__(self, socket_path: str | None = None) -> None:
        path = socket_path or os.environ.get("SWAYSOCK") or os.environ.get("I3SOCK")
        if not path:
            raise CaptureUnavailableError("sway's IPC socket is unknown (SWAYSOCK is not set)")
        self.path = path
        try:
            self._request(GET_OUTPUTS)
        except WindowListError as exc:
            raise CaptureUnavailableError(f"sway does not answer on {path}: {exc}") from None

    def windows(self) -> list[WindowDesc]:
        tree = self._request(GET_TREE)
        if not isinstance(tree, dict):
            raise WindowListError("sway's tree is not an object")
        return list(views(tree))

    def layout(self) -> Box | None:
        outputs = self._request(GET_OUTPUTS)
        if not isinstance(outputs, list):
            raise WindowListError("sway's outputs are not a list")
        return bounds(
            b for o in outputs if isinstance(o, dict) and o.get("active") and (b := rect_box(o.get("rect")))
        )

    def close(self) -> None:
        return None

    def _request(self, kind: int) -> object:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(TIMEOUT_S)
                sock.connect(self.path)
                sock.sendall(MAGIC + HEADER.pack(0, kind))
                head = _recv(sock, len(MAGIC) + HEADER.size)
                if head[: len(MAGIC)] != MAGIC:
                    raise WindowListError("not sway's IPC protocol")
                length, _ = HEADER.unpack(head[len(MAGIC) :])
                if length > MAX_REPLY:
                    raise WindowListError(f"sway's reply is too large ({length} bytes)")
                body = _recv(sock, length)
        except OSError as exc:
            raise WindowListError(f"sway IPC: {exc}") from None
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise WindowListError(f"sway's reply is not JSON: {exc}") from None


def _recv(sock: socket.socket, n: int) -> bytes:
    parts = bytearray()
    while len(parts) < n:
        chunk = sock.recv(min(n - len(parts), 1 << 20))
        if not chunk:
            raise WindowListError("sway closed the connection")
        parts += chunk
    return bytes(parts)


def rect_box(rect: object) -> Box | None:
    if not isinstance(rect, Mapping):
        return None
    vals = [rect.get(k) for k in ("x", "y", "width", "height")]
    ints = [v for v in vals if isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_COORD]
    if len(ints) != len(vals):
        return None
    x, y, w, h = ints
    if w <= 0 or h <= 0:
        return None
    return (x, y, x + w, y + h)


def views(tree: Mapping[str, object]) -> Iterator[WindowDesc]:
    """Visible windows bottom to top: per workspace the tiled ones, then the floating ones."""
    stack: list[tuple[Mapping[str, object], int, bool]] = [(tree, 0, False)]
    tiled: list[WindowDesc] = []
    floating: list[WindowDesc] = []
    while stack:
        node, depth, is_floating = stack.pop()
        if depth > MAX_DEPTH:
            raise WindowListError("sway's tree is nested too deeply")
        if node.get("type") == "output" and str(node.get("name", "")).startswith("__"):
            continue  # the scratchpad: hidden windows
        desc = _view(node)
        if desc is not None:
            (floating if is_floating else tiled).append(desc)
        kids = node.get("nodes")
        floats = node.get("floating_nodes")
        for child in reversed(floats if isinstance(floats, list) else []):
            if isinstance(child, Mapping):
                stack.append((child, depth + 1, True))
        for child in reversed(kids if isinstance(kids, list) else []):
            if isinstance(child, Mapping):
                stack.append((child, depth + 1, is_floating))
    yield from tiled
    yield from floating


def _view(node: Mapping[str, object]) -> WindowDesc | None:
    if node.get("type") not in ("con", "floating_con") or node.get("nodes"):
        return None
    if not (node.get("pid") or node.get("app_id") or node.get("window")):
        return None  # an empty container, not a window
    if node.get("visible") is False:
        return None
    box = rect_box(node.get("rect"))
    if box is None:  # an excluded window we cannot place could not be masked: skip the pass
        raise WindowListError(UNPLACED)
    props = node.get("window_properties")
    app = node.get("app_id") or (props.get("class") if isinstance(props, Mapping) else None) or ""
    title = node.get("name") or ""
    wid = node.get("id")
    return WindowDesc(
        title=str(title)[:MAX_TITLE],
        app=str(app)[:MAX_TITLE],
        box=box,
        active=node.get("focused") is True,
        wid=wid if isinstance(wid, int) and not isinstance(wid, bool) else 0,
        pid=as_pid(node.get("pid")),
    )
