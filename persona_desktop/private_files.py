"""Private folders and files (0700 / 0600) from their very first byte, whatever the umask.

Everything Persona Desktop keeps is about its owner: the data dir, the store, the
settings file and the log are created private, not created and then tightened. A
folder that belongs to someone else, or that cannot be written, is refused with a
message naming the path, instead of a traceback halfway through a write.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from persona_desktop.errors import PersonaError

PRIVATE_UMASK = 0o077


def _owner_name(uid: int) -> str:
    try:
        import pwd  # POSIX only

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _explain(path: Path, exc: OSError, what: str) -> PersonaError:
    if exc.errno == errno.EROFS:
        return PersonaError(f"{what} {path} is on a read-only file system: choose a writable --data-dir")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return PersonaError(f"{what} {path} cannot be written by you (permission denied): {fix_hint(path)}")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return PersonaError(f"the disk holding {path} is full: free some space and try again")
    if exc.errno == errno.ENOTDIR:
        return PersonaError(f"{what} {path} is not a folder (a file of that name is in the way)")
    return PersonaError(f"{what} {path} cannot be used: {exc.strerror or exc}")


def fix_hint(path: Path) -> str:
    return f"fix its permissions (chmod u+rwx {path}) or choose another --data-dir"


def ensure_private_dir(path: Path, what: str = "the data dir") -> Path:
    """Create `path` (and missing parents) as 0700; an existing one must be ours and writable."""
    missing: list[Path] = []
    probe = path
    try:
        while not probe.exists():
            missing.append(probe)
            if probe.parent == probe:
                break
            probe = probe.parent
        for folder in reversed(missing):
            os.mkdir(folder, 0o700)  # the umask can only remove bits from 0700
            os.chmod(folder, 0o700)  # ... and a umask of 0777 removes them all
        info = path.stat()
    except FileExistsError:
        return ensure_private_dir(path, what)  # another process made it meanwhile
    except OSError as exc:
        raise _explain(path, exc, what) from None
    if not path.is_dir():
        raise PersonaError(f"{what} {path} is not a folder (a file of that name is in the way)")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise PersonaError(
            f"{what} {path} belongs to {_owner_name(info.st_uid)}, not to you: "
            "choose your own --data-dir (a shared folder would show your memory to its owner)"
        )
    try:
        if info.st_mode & 0o777 != 0o700:
            os.chmod(path, 0o700)
    except OSError as exc:
        raise _explain(path, exc, what) from None
    if not os.access(path, os.W_OK | os.X_OK):
        if _read_only_fs(path):
            raise PersonaError(f"{what} {path} is on a read-only file system: choose a writable --data-dir")
        raise PersonaError(f"{what} {path} cannot be written by you: {fix_hint(path)}")
    return path


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def ensure_private_file(path: Path, what: str = "the file") -> None:
    """Create `path` as 0600 if missing; an existing one is made 0600 and must be writable."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if os.fstat(fd).st_mode & 0o777 != 0o600:
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PersonaError(
                f"{what} {path} is a symbolic link; Persona Desktop does not follow it"
            ) from None
        raise _explain(path, exc, what) from None
