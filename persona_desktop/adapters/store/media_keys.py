"""The media keys, kept inside the (encrypted) store, in `key_values` under `media.keys`.

A JSON object {"<id>": "<64 hex>"}; the highest id seals new files. Read and written
on a raw connection, so they never pass through SQLAlchemy's statement logging.
"""

from __future__ import annotations

import json
import os
from typing import Any

MEDIA_KEYS_KV = "media.keys"


def load(conn: Any) -> dict[int, bytes]:
    row = conn.execute("SELECT value FROM key_values WHERE key = ?", (MEDIA_KEYS_KV,)).fetchone()
    if row is None:
        return {}
    try:
        raw = json.loads(row[0])
        keys = {int(k): bytes.fromhex(v) for k, v in raw.items()}
    except (AttributeError, TypeError, ValueError):
        return {}
    return {k: v for k, v in keys.items() if len(v) == 32 and k >= 1}


def add(conn: Any) -> int:
    """A new media key (the one new files use from now on); its id."""
    keys = load(conn)
    new_id = max(keys, default=0) + 1
    keys[new_id] = os.urandom(32)
    _store(conn, keys)
    return new_id


def clear(conn: Any) -> None:
    conn.execute("DELETE FROM key_values WHERE key = ?", (MEDIA_KEYS_KV,))


def _store(conn: Any, keys: dict[int, bytes]) -> None:
    value = json.dumps({str(k): v.hex() for k, v in sorted(keys.items())})
    conn.execute(
        "INSERT INTO key_values (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (MEDIA_KEYS_KV, value),
    )
