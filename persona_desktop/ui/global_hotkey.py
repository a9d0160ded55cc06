"""A desktop-wide key for the search window: a held key grab, watched by a worker.

Off unless the owner names a key (`search.global_shortcut`): a grab takes that key away
from every other program, so it is never taken by default. The grab itself is an adapter
(`KeyGrab`, X11 today) made by the composition root; here the app's one worker
(worker.py) drains its presses, and each reaches the GUI thread as `pressed`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from persona_desktop.ports import KeyGrab
from persona_desktop.ui.worker import Worker, create_worker


class GlobalHotkey(QObject):
    pressed = Signal()

    def __init__(self, grab: KeyGrab, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._grab: KeyGrab | None = grab
        self._watcher: Worker | None = create_worker(
            grab.presses, self, "the search shortcut", on_yielded=lambda _press: self.pressed.emit()
        )

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.abandon()  # a press still on its way finds the shortcut gone
            self._watcher.wait(2000)
            self._watcher = None
        if self._grab is not None:
            self._grab.release()
            self._grab = None
