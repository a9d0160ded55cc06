"""Dates of chat messages: ISO 8601 and Unix times, range-checked.

A date outside MIN_DATE..MAX_DATE (0001-01-01, 9999-12-31, a Unix time in the year
50000) is not a message date: the importer skips that message as unreadable and
names its place, instead of failing on an OverflowError deep in datetime.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

MIN_DATE = datetime(1970, 1, 1, tzinfo=UTC)
MAX_DATE = datetime(2100, 1, 1, tzinfo=UTC)


class Unreadable(ValueError):
    """A value of the expected kind that cannot be a message's: skip the message, say why."""


def parse_iso(value: str) -> datetime:
    """ISO 8601; a time without an offset is taken as the machine's local time."""
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # local wall time -> aware
    return parsed.astimezone(UTC)


def in_range(when: datetime, shown: object) -> datetime:
    if not MIN_DATE <= when < MAX_DATE:
        raise Unreadable(f"date {shown} is outside {MIN_DATE:%Y}-{MAX_DATE:%Y}")
    return when


def iso_date(value: str) -> datetime:
    """An ISO 8601 message date. ValueError when it is not ISO 8601; Unreadable when out of range."""
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))  # ValueError: not ISO 8601
    try:
        when = (parsed if parsed.tzinfo else parsed.astimezone()).astimezone(UTC)
    except (OverflowError, ValueError):  # year 1 or 9999 pushed over the edge by a time zone
        raise Unreadable(f"date {value!r} is outside {MIN_DATE:%Y}-{MAX_DATE:%Y}") from None
    return in_range(when, repr(value))


def unix_date(value: Any) -> datetime:
    """Seconds since 1970 as int, float, Decimal or a string of digits.

    ValueError when it is not a Unix time at all; Unreadable when it is out of range.
    """
    number: int | float | Decimal
    if isinstance(value, bool):
        raise ValueError("not a Unix time")
    if isinstance(value, str) and value.isdigit() and len(value) < 12:
        number = int(value)  # the common case: Telegram's "date_unixtime": "1764400000"
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except ArithmeticError:
            raise ValueError(f"{value!r} is not a Unix time") from None
    elif isinstance(value, int | float | Decimal):
        number = value
    else:
        raise ValueError("not a Unix time")
    try:
        seconds = float(number)  # a signalling NaN refuses even this
    except (ValueError, OverflowError):
        seconds = math.nan
    if not abs(seconds) < 1e12:  # NaN, infinities and the year 33658
        raise Unreadable(f"Unix time {value} is outside {MIN_DATE:%Y}-{MAX_DATE:%Y}")
    return in_range(datetime.fromtimestamp(seconds, UTC), value)
