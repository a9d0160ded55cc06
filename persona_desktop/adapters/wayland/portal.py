"""Screenshots through the desktop portal (`org.freedesktop.portal.Screenshot`, non-interactive).

One request: subscribe to the Request's `Response` signal from the portal's own unique bus
name (any program on the session bus can send a signal with that path, naming any file as
the picture), call `Screenshot("", {handle_token, interactive: false})`, wait for the answer
with a deadline (xdg-desktop-portal 1.16 may never answer when its own dialog fails), then
load the returned file and delete it. Answer codes:
0 done, 1 cancelled, 2 refused or failed (the desktop does not say which). Before the first
call the app registers its id with the portal (`org.freedesktop.host.portal.Registry`,
xdg-desktop-portal 1.19 and newer) so the permission the owner gives is Persona Desktop's
own and not the entry that every unregistered app shares.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import time

from jeepney import DBusAddress, HeaderFields, MatchRule, message_bus
from jeepney.io.blocking import DBusConnection

from persona_desktop.adapters.wayland.dbus import (
    DBusCallError,
    DBusReplyError,
    SessionBus,
    expect_int,
    expect_str,
    expect_tuple,
    vardict,
)
from persona_desktop.adapters.wayland.shot_file import ShotFileError, decode_rgb, take_file
from persona_desktop.errors import CapturePermissionError, CaptureUnavailableError, PersonaError
from persona_desktop.ports.screen import Pixels

log = logging.getLogger(__name__)

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"
REGISTRY = "org.freedesktop.host.portal.Registry"
APP_ID = "persona-desktop"  # the basename of the installed .desktop file
SHOT_TIMEOUT_S = 10.0

REFUSED = (
    "the desktop refused Persona Desktop's screenshot (answer 2: refused, or its screenshot "
    "service failed). To allow it again: Settings > Capture > 'Ask the desktop again', then "
    "turn screen capture on from the window that opens"
)


class PortalMissingError(CaptureUnavailableError):
    """The desktop portal is not running, or offers no Screenshot interface."""


class PortalTimeoutError(CaptureUnavailableError):
    """The portal did not answer a screenshot request in time."""


class PortalShooter:
    """Whole-desktop screenshots from the portal; create and use it on one thread."""

    name = "portal"

    def __init__(self, bus: SessionBus | None = None, timeout_s: float = SHOT_TIMEOUT_S,
                 app_id: str | None = APP_ID) -> None:  # fmt: skip
        self._bus = bus or SessionBus()
        self.timeout_s = timeout_s
        self._portal = DBusAddress(PORTAL_PATH, PORTAL, SCREENSHOT)
        self._tokens = itertools.count(1)
        self._prefix = f"persona_{os.getpid()}_{secrets.token_hex(3)}"
        self.registered = app_id is not None and self._register(app_id)
        try:
            self.version = expect_int(self._bus.get_property(self._portal, SCREENSHOT, "version"), "version")
        except (DBusCallError, DBusReplyError) as exc:
            self._bus.close()
            raise PortalMissingError(f"the desktop portal offers no screenshots here ({exc})") from None
        self._owner = ""
        self._rule: MatchRule | None = None

    def _register(self, app_id: str) -> bool:
        """Best effort: portals before 1.19 have no Registry; the shared "" entry is used then."""
        try:
            self._bus.call(DBusAddress(PORTAL_PATH, PORTAL, REGISTRY), "Register", "sa{sv}", (app_id, {}))
        except DBusCallError as exc:
            log.debug("portal registry: %s", exc)
            return False
        return True

    @property
    def _conn(self) -> DBusConnection:
        return self._bus.conn

    def take(self, timeout_s: float | None = None) -> Pixels:
        """One screenshot of the whole desktop as RGB pixels; the portal's file is deleted."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        token = f"{self._prefix}_{next(self._tokens)}"
        options = {"handle_token": ("s", token), "interactive": ("b", False)}
        requested_at = time.time()
        deadline = time.monotonic() + timeout
        rule = self._answers_from(self._portal_owner())
        with self._conn.filter(rule, bufsize=16) as answers:
            try:
                (handle,) = self._bus.call(self._portal, "Screenshot", "sa{sv}", ("", options), timeout)
            except DBusCallError as exc:
                if exc.name == "timeout":
                    raise PortalTimeoutError(self._late(timeout)) from None
                raise CaptureUnavailableError(
                    f"the desktop portal refused the screenshot call: {exc}"
                ) from None
            handle = expect_str(handle, "Screenshot handle")
            code, results = self._wait(answers, handle, deadline, timeout)
        if code == 1:
            raise CapturePermissionError(
                "the screenshot was cancelled at the desktop's prompt; screen capture is off"
            )
        if code != 0:
            raise CapturePermissionError(REFUSED)
        uri = expect_str(vardict(results, "Screenshot results").get("uri"), "the screenshot's uri", 8192)
        try:
            return decode_rgb(take_file(uri, requested_at), "the portal's screenshot")
        except ShotFileError as exc:  # it would happen again next time: say so once, stop
            raise CaptureUnavailableError(f"the portal's screenshot was not used: {exc}") from None

    def _portal_owner(self) -> str:
        """The portal's unique bus name now (it changes when the portal restarts)."""
        try:
            (owner,) = self._bus.call(message_bus, "GetNameOwner", "s", (PORTAL,))
        except DBusCallError:  # not running (it starts on demand): start it, then ask again
            try:
                self._bus.call(message_bus, "StartServiceByName", "su", (PORTAL, 0))
                (owner,) = self._bus.call(message_bus, "GetNameOwner", "s", (PORTAL,))
            except DBusCallError as exc:
                raise PortalMissingError(f"the desktop portal is not running ({exc})") from None
        return expect_str(owner, "the portal's bus name", 255)

    def _answers_from(self, owner: str) -> MatchRule:
        """Response signals sent by `owner` only, on the bus and here: any program on the
        session bus can send a signal with a request's path, naming any file as the picture."""
        if owner != self._owner or self._rule is None:
            rule = MatchRule(type="signal", sender=owner, interface=REQUEST, member="Response",
                             path_namespace=f"{PORTAL_PATH}/request")  # fmt: skip
            self._bus.call(message_bus, "AddMatch", "s", (rule.serialise(),))
            if self._rule is not None:
                with contextlib.suppress(DBusCallError):
                    self._bus.call(message_bus, "RemoveMatch", "s", (self._rule.serialise(),))
            self._owner, self._rule = owner, rule
        return self._rule

    def _wait(self, answers: object, handle: str, deadline: float, timeout: float) -> tuple[int, object]:
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                msg = self._conn.recv_until_filtered(answers, timeout=left)
            except TimeoutError:
                self._close_request(handle)
                raise PortalTimeoutError(self._late(timeout)) from None
            except OSError as exc:
                raise CaptureUnavailableError(f"the D-Bus connection broke: {exc}") from None
            if msg.header.fields.get(HeaderFields.sender) != self._owner:
                log.warning("ignored a screenshot answer that did not come from the desktop portal")
                continue  # sent to us directly (no match rule applies to that): forged
            if msg.header.fields.get(HeaderFields.path) != handle:
                continue  # another request's late answer
            code, results = expect_tuple(tuple(msg.body), 2, "Response")
            return expect_int(code, "Response code"), results

    def _close_request(self, handle: str) -> None:
        try:
            self._bus.call(DBusAddress(handle, PORTAL, REQUEST), "Close", timeout=1.0)
        except PersonaError:
            log.debug("closing the portal request failed", exc_info=True)

    @staticmethod
    def _late(timeout: float) -> str:
        return (
            f"the desktop's screenshot service did not answer within {timeout:g} s "
            "(its permission dialog may have failed); screen capture is off"
        )

    def close(self) -> None:
        self._bus.close()
