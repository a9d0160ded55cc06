"""A session-bus connection for the capture thread: jeepney, blocking, a timeout on every call.

Replies from other processes are input like any other: their types are checked before use
(`expect`), and a bus that does not answer in time is an error, never a hang.
"""

from __future__ import annotations

import os

from jeepney import DBusAddress, HeaderFields, Message, MessageType, new_method_call
from jeepney.bus import get_bus
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, DBusConnectionBase, prep_socket
from jeepney.io.common import MessageFilters

from persona_desktop.errors import CaptureUnavailableError, PersonaError

CALL_TIMEOUT_S = 5.0
PROPERTIES = "org.freedesktop.DBus.Properties"


class DBusCallError(PersonaError):
    """A D-Bus call failed: an error reply (`name` says which), or no reply in time."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name


class DBusReplyError(PersonaError):
    """A reply whose content is not what the interface promises."""


def _connect(sock: object, hello_timeout: float) -> DBusConnection:
    """jeepney's blocking connection, set up as its own __init__ does, but its Hello has a
    deadline too: a bus that accepts the connection and then never answers must not hang
    the capture thread."""
    conn: DBusConnection = DBusConnection.__new__(DBusConnection)
    DBusConnectionBase.__init__(conn, sock)
    conn._filters = MessageFilters()
    reply = conn.send_and_get_reply(message_bus.Hello(), timeout=hello_timeout)
    (name,) = body_of(reply, "Hello")
    conn.unique_name = expect_str(name, "Hello")
    return conn


class SessionBus:
    """One connection to the D-Bus session bus; not thread-safe: use it from one thread."""

    def __init__(self, address: str | None = None, timeout: float = CALL_TIMEOUT_S) -> None:
        address = address or os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
        if not address:
            raise CaptureUnavailableError("no D-Bus session bus here (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            sock = prep_socket(get_bus(address), False, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise CaptureUnavailableError(f"the D-Bus session bus cannot be reached: {exc}") from None
        try:
            self.conn: DBusConnection = _connect(sock, timeout)
        except (OSError, TimeoutError, PersonaError) as exc:
            sock.close()
            raise CaptureUnavailableError(
                f"the D-Bus session bus did not answer within {timeout:g} s ({str(exc) or 'no reply'})"
            ) from None

    @property
    def unique_name(self) -> str:
        return str(self.conn.unique_name)

    def call(
        self,
        where: DBusAddress,
        method: str,
        signature: str | None = None,
        body: tuple[object, ...] = (),
        timeout: float = CALL_TIMEOUT_S,
    ) -> tuple[object, ...]:
        """The reply's body; DBusCallError on an error reply or when none came within `timeout`."""
        msg = new_method_call(where, method, signature, body)
        try:
            reply = self.conn.send_and_get_reply(msg, timeout=timeout)
        except TimeoutError:
            raise DBusCallError(
                f"{where.bus_name} did not answer {method} within {timeout:g} s", "timeout"
            ) from None
        except OSError as exc:
            raise DBusCallError(f"the D-Bus connection broke during {method}: {exc}", "io") from None
        return body_of(reply, method)

    def get_property(
        self, where: DBusAddress, interface: str, name: str, timeout: float = CALL_TIMEOUT_S
    ) -> object:
        props = DBusAddress(where.object_path, where.bus_name, PROPERTIES)
        (variant,) = expect_tuple(
            self.call(props, "Get", "ss", (interface, name), timeout), 1, f"{name} property"
        )
        _sig, value = expect_tuple(variant, 2, f"{name} property")
        return value

    def close(self) -> None:
        self.conn.close()


def body_of(reply: Message, what: str) -> tuple[object, ...]:
    if reply.header.message_type is MessageType.error:
        name = str(reply.header.fields.get(HeaderFields.error_name, "error"))
        detail = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
        raise DBusCallError(f"{what}: {name}{': ' + detail[:300] if detail else ''}", name)
    return tuple(reply.body)


def expect_tuple(value: object, size: int, what: str) -> tuple[object, ...]:
    if not isinstance(value, tuple) or len(value) != size:
        raise DBusReplyError(f"unexpected reply for {what}: {str(value)[:200]}")
    return value


def expect_str(value: object, what: str, limit: int = 100_000) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise DBusReplyError(f"unexpected reply for {what}: not a string")
    return value


def expect_int(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DBusReplyError(f"unexpected reply for {what}: not a number")
    return value


def vardict(value: object, what: str) -> dict[str, object]:
    """An a{sv} from jeepney ({key: (signature, value)}) as {key: value}."""
    if not isinstance(value, dict):
        raise DBusReplyError(f"unexpected reply for {what}: not a dictionary")
    out: dict[str, object] = {}
    for key, item in value.items():
        if isinstance(key, str) and isinstance(item, tuple) and len(item) == 2:
            out[key] = item[1]
    return out
