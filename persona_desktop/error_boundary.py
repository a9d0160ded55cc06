"""The one error boundary: the owner reads one line, the traceback goes to a private log.

Qt-free, shared by the CLI (`cli.main`) and the app (`crash_hook.install`). Three
kinds of failure, after qutebrowser's split of user errors and bugs:

- a `PersonaError`: the input's or the environment's fault, already one line;
- an environment failure Python raised as-is (disk full, permission denied, a
  read-only file system, SQLite's own errors): turned into one line naming the path;
- anything else is a bug: "internal error (TypeError)", the log file's path, and a
  request to report it. Never the exception's text, which may quote the owner's
  messages; the traceback goes to the log, 0600 in the data dir, without it either
  (the log is plain text beside an encrypted store: `private_log.py` says what it keeps).
"""

from __future__ import annotations

import errno
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from types import TracebackType

from persona_desktop.errors import PersonaError
from persona_desktop.private_files import ensure_private_dir, ensure_private_file
from persona_desktop.private_log import PrivateFormatter

LOG_DIR = "logs"
LOG_FILE = "persona-desktop.log"
_HANDLER_NAME = "persona-desktop-file"

log = logging.getLogger("persona_desktop")


class _QuietFileHandler(logging.handlers.RotatingFileHandler):
    """A log that cannot be written (disk full) says nothing: never a traceback on stderr."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _fallback_log_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("persona-desktop", appauthor=False)) / LOG_DIR


def open_log(data_dir: Path | None) -> Path | None:
    """Attach a private rotating log file (in the data dir, else the user state dir); its path."""
    root = logging.getLogger()
    ours = [h for h in root.handlers if getattr(h, "name", None) == _HANDLER_NAME]
    candidates = [data_dir / LOG_DIR] if data_dir is not None else []
    candidates.append(_fallback_log_dir())
    for folder in candidates:
        path = folder / LOG_FILE
        for handler in ours:
            if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == path.absolute():
                return path
        try:
            ensure_private_dir(folder, "the log folder")
            ensure_private_file(path, "the log file")
            handler = _QuietFileHandler(
                path, maxBytes=1_000_000, backupCount=3, encoding="utf-8", errors="backslashreplace"
            )
        except (PersonaError, OSError):
            continue
        for old in ours:  # one log per process: the data dir's, when it changed
            root.removeHandler(old)
            old.close()
        handler.name = _HANDLER_NAME
        handler.setLevel(logging.WARNING)
        handler.setFormatter(PrivateFormatter())
        root.addHandler(handler)
        return path
    return None


def environment_failure(exc: BaseException, db_path: Path | None = None) -> str | None:
    """One line for a failure of the machine rather than of the code, else None."""
    from persona_desktop.adapters.store.cipher import DriverError
    from persona_desktop.adapters.store.failures import disk_full, store_failure

    if isinstance(exc, DriverError) or type(exc).__module__.startswith("sqlalchemy"):
        failure = store_failure(exc, db_path or Path("persona.sqlite3"))
        return None if failure is None else str(failure)
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else None
        path = f" {where}" if where is not None else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            folder = Path(str(where)).parent if where is not None else Path.cwd()
            return str(disk_full(folder))
        if exc.errno == errno.EROFS:
            return f"cannot write{path}: the file system is read-only"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"cannot use{path}: permission denied (check who owns it and its permissions)"
        if exc.errno == errno.ENOENT:
            return f"no such file or folder:{path or ' (unnamed)'}"
        if exc.errno == errno.EISDIR:
            return f"{path.strip() or 'the path'} is a folder, not a file"
        if exc.errno == errno.ENOTDIR:
            return f"{path.strip() or 'a path'}: a part of it is a file, not a folder"
        if exc.errno == errno.EIO:
            return f"a disk I/O error on{path or ' the disk'}: the disk may be failing or was unplugged"
        if exc.errno == errno.ENAMETOOLONG:
            return "a file name is too long"
    if isinstance(exc, ValueError) and "null byte" in str(exc):
        return "a file or folder name contains a NUL byte; give a real path"
    if isinstance(exc, OverflowError):
        return "a date or number in the input is outside what can be stored (years 1 to 9999)"
    if isinstance(exc, MemoryError):
        return "out of memory: close other programs, or import the file in smaller parts"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    return None


def record(
    exc: BaseException, data_dir: Path | None, context: str = "", tb: TracebackType | None = None
) -> Path | None:
    """Write the traceback to the log; its path, or None when no log could be written."""
    path = open_log(data_dir)
    if tb is not None and exc.__traceback__ is None:
        exc = exc.with_traceback(tb)
    log.error(context or "failure", exc_info=exc)  # frames and types only: see private_log.py
    return path


def one_line(exc: BaseException, data_dir: Path | None, db_path: Path | None = None) -> str:
    """What the owner reads for `exc` (after it was logged when it is a bug)."""
    if isinstance(exc, PersonaError):
        return " ".join(str(exc).split())
    known = environment_failure(exc, db_path)
    if known is not None:
        record(exc, data_dir, "environment failure")
        return known
    where = record(exc, data_dir, "internal error")
    details = f"the details are in {where}" if where is not None else "no log file could be written"
    return (
        f"internal error ({type(exc).__name__}); nothing already stored was lost; {details}; please report it"
    )


def private_umask() -> int:
    """Files and folders created from now on are private, even under `umask 000`; the old umask."""
    return os.umask(0o077)


def quiet_broken_pipe() -> None:
    """stdout closed early (`persona-desktop fragments | head`): stop without a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
