from __future__ import annotations

from datetime import UTC, datetime


def parse_iso(value: str) -> datetime:
    """ISO 8601; a time without an offset is taken as the machine's local time."""
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # local wall time -> aware
    return parsed.astimezone(UTC)
