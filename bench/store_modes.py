"""Benches run on an encrypted store and on a plaintext one, in the same run, to print the ratio.

Headless, a bench has no OS keyring and no one to type a passphrase: unless the caller
set one, it uses a passphrase of its own (the store lives in a temp dir and is deleted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

MODES = ("plaintext", "encrypted")


def headless_keys() -> None:
    if "PERSONA_DESKTOP_PASSPHRASE" not in os.environ:
        os.environ["PERSONA_DESKTOP_PASSPHRASE"] = "bench passphrase"
        os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


def data_dir_for(root: Path, mode: str, extra: dict[str, object] | None = None) -> Path:
    """A fresh data dir whose settings say plaintext or encrypted."""
    data = root / mode
    data.mkdir(parents=True, mode=0o700)
    settings = {"storage.encrypted": mode == "encrypted", **(extra or {})}
    (data / "settings.json").write_text(json.dumps(settings) + "\n")
    return data


def ratio_line(what: str, plain: float, encrypted: float, unit: str) -> str:
    ratio = encrypted / plain if plain else float("nan")
    return (
        f"{what}: plaintext {plain:.3f} {unit}, encrypted {encrypted:.3f} {unit}, "
        f"ratio {ratio:.3f} (overhead {(ratio - 1) * 100:+.1f} %, target <= +15 %)"
    )
