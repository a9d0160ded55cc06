"""The desktop's stored answer to "Allow applications to take screenshots?".

xdg-desktop-portal keeps it in the permission store (table `screenshot`, id `screenshot`),
per app id: Persona Desktop's own id when it could register, else "" (shared by every app
without one). After a refusal the portal answers 2 at once, without asking; forgetting the
entry makes it ask again on the next screenshot taken from a focused window.
"""

from __future__ import annotations

from jeepney import DBusAddress

from persona_desktop.adapters.wayland.dbus import DBusCallError, SessionBus
from persona_desktop.adapters.wayland.portal import APP_ID
from persona_desktop.errors import CaptureUnavailableError

STORE = DBusAddress("/org/freedesktop/impl/portal/PermissionStore", "org.freedesktop.impl.portal.PermissionStore",
                    "org.freedesktop.impl.portal.PermissionStore")  # fmt: skip
TABLE = ID = "screenshot"


def screenshot_answers(bus: SessionBus) -> dict[str, list[str]]:
    """The stored answers per app id ({} when none is stored)."""
    try:
        perms, _data = bus.call(STORE, "Lookup", "ss", (TABLE, ID))
    except DBusCallError as exc:
        if exc.name.endswith("NotFound"):
            return {}
        raise
    if not isinstance(perms, dict):
        return {}
    return {str(k): [str(x) for x in v] for k, v in perms.items() if isinstance(v, list)}


def forget_screenshot_answer(
    bus: SessionBus | None = None, app_ids: tuple[str, ...] = (APP_ID, "")
) -> list[str]:
    """Delete the stored answer of these app ids; returns the ids that had one."""
    own = bus is None
    bus = bus or SessionBus()
    try:
        stored = screenshot_answers(bus)
        forgotten = []
        for app in app_ids:
            if app in stored:
                bus.call(STORE, "DeletePermission", "sss", (TABLE, ID, app))
                forgotten.append(app)
        return forgotten
    except DBusCallError as exc:
        raise CaptureUnavailableError(f"the desktop's permission store cannot be changed: {exc}") from None
    finally:
        if own:
            bus.close()
