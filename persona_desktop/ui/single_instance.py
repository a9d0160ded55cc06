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

    def listen(self) -> bool:
        if self._server.listen(self.name):
            return True
        # A stale socket file from a crashed instance: nobody answers on it, take it over.
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def close(self) -> None:
        self._server.close()

    def _on_new_connection(self) -> None:
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            sock.readyRead.connect(lambda s=sock: self._on_ready_read(s))
            sock.disconnected.connect(sock.deleteLater)

    def _on_ready_read(self, sock: QLocalSocket) -> None:
        data = bytes(sock.readAll().data())
        if _MESSAGE.strip() in data:
            self.activated.emit()
