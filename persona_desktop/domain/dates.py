"""Times at the edges of the calendar, handled without OverflowError.

Imported data can carry any date: 0001-01-01, 9999-12-31, a time zone that pushes
either past what `datetime` holds. These helpers never raise: a time that cannot be
shown in UTC is pinned to the nearest representable instant, and a capture time in
the future is pinned to the moment it was imported (a message dated 2999 must not
look like the owner's latest activity forever).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)
FUTURE_TOLERANCE = timedelta(minutes=5)  # clock skew between a phone, a server and this machine


def as_utc(value: datetime) -> datetime:
    """The same instant in UTC; naive times are taken as UTC; the calendar's ends clamp."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        offset = value.utcoffset()
        return EARLIEST if offset is not None and offset > timedelta(0) else LATEST


def clamp_future(captured_at: datetime, at: datetime) -> tuple[datetime, bool]:
    """`captured_at`, unless it lies after `at` (plus a little skew): then `at`, and True."""
    when = as_utc(captured_at)
    limit = as_utc(at)
    if when - limit > FUTURE_TOLERANCE:  # a difference of two UTC times never overflows
        return limit, True
    return when, False


def day_bounds(day: date) -> tuple[datetime, datetime | None]:
    """[start, end) of a UTC day; end is None for the calendar's last day."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    if day == date.max:
        return start, None
    return start, start + timedelta(days=1)


def minus_days(now: datetime, days: float) -> datetime:
    """`now - days`, or the calendar's start when that would fall before it."""
    try:
        return now - timedelta(days=days)
    except OverflowError:
        return EARLIEST


def local_day_bounds(day: date) -> tuple[datetime, datetime]:
    """[start, end) of a calendar day in the machine's local time, clamped at the calendar's ends."""

    def local_midnight(d: date, fallback: datetime) -> datetime:
        try:
            return datetime(d.year, d.month, d.day).astimezone()
        except (OverflowError, ValueError):  # year 1 east of UTC, year 9999 west of it
            return fallback

    start = local_midnight(day, EARLIEST)
    if day == date.max:
        return start, LATEST
    return start, local_midnight(day + timedelta(days=1), LATEST)


def as_local(value: datetime) -> datetime:
    """The same instant in the machine's time zone, or in UTC where that would leave the calendar."""
    try:
        return value.astimezone()
    except (OverflowError, ValueError):
        return as_utc(value)
