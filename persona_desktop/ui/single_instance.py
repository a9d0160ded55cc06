"""One app per data dir: a second launch asks the first to show its review window."""

from __future__ import annotations

import getpass
import hashlib
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

_MESSAGE = b"show-review\n"


def server_name(data_dir: Path) -> str:
    digest = hashlib.sha1(str(data_dir.resolve()).encode()).hexdigest()[:12]
    return f"persona-desktop-{getpass.getuser()}-{digest}"


def notify_running(name: str, timeout_ms: int = 1000) -> bool:
    """True when another instance listens on `name` and got our message."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write(_MESSAGE)
    sock.flush()
    sock.waitForBytesWritten(timeout_ms)
    sock.disconnectFromServer()
    if sock.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        sock.waitForDisconnected(timeout_ms)
    return True


class SingleInstance(QObject):
    """Listens for later launches; `activated` fires on the GUI thread when one knocks."""

    activated = Signal()

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        self._sockets: list[QLocalSocket] = []

    def listen(self) -> bool:
        if self._server.listen(self.name):
            return True
        # A stale socket file from a crashed instance: nobody answers on it, take it over.
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def close(self) -> None:
        for sock in self._sockets:
            sock.abort()
        self._sockets.clear()
        self._server.close()

    def _on_new_connection(self) -> None:
        # The server owns its sockets; they are few (one per later launch) and go with it.
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            self._sockets.append(sock)
            sock.readyRead.connect(self._on_ready_read)

    def _on_ready_read(self) -> None:
        for sock in self._sockets:
            if sock.bytesAvailable() and _MESSAGE.strip() in bytes(sock.readAll().data()):
                self.activated.emit()
