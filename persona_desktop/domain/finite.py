"""Non-finite numbers (NaN, Infinity) never pass: not from the model, the settings, or to output.

`json.loads` accepts `NaN` and `Infinity` and `json.dumps` writes them back, which is
not JSON. Model replies are parsed with `loads_finite` (a non-finite number becomes
`NON_FINITE`, so the field is dropped and journaled by name); what is written out
goes through `json_safe` first (a non-finite number becomes null).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final


class _NonFinite:
    """Stands for a NaN or an infinity read from untrusted JSON; it is no number."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


NON_FINITE: Final = _NonFinite


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)  # "1e999" is an infinity too


def loads_finite(text: str) -> Any:
    """`json.loads`, with every NaN / Infinity / overflowing number as a `_NonFinite`."""
    return json.loads(text, parse_constant=_NonFinite, parse_float=_parse_float)


def is_non_finite(value: object) -> bool:
    return isinstance(value, _NonFinite) or (isinstance(value, float) and not math.isfinite(value))


def finite_number(value: object) -> float | None:
    """A finite int or float as a float; None for anything else (bools, NaN, strings)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return number if math.isfinite(number) else None


def json_safe(value: Any) -> Any:
    """A copy fit for strict JSON: non-finite numbers become None, keys become strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, _NonFinite):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
