"""Secrets never reach the store: card numbers (Luhn), IBANs (mod 97), API keys and tokens,
and `password: ...` style values are replaced in the OCR text, and the words they came from
are listed so that a kept image can be blacked out at the same boxes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from persona_desktop.ports.screen import Box, OcrLine, OcrWord

Span = tuple[int, int, str]

_CARD = re.compile(r"(?<![\dA-Za-z])\d(?:[ \-]?\d){12,18}(?![\dA-Za-z])")
# Printed card layout (4 x 4 digits): redacted even when Luhn fails, because one
# digit misread by OCR would otherwise let a real card number through.
_CARD_SHAPE = re.compile(
    r"(?<![\dA-Za-z])(?<!\d[ \-])\d{4}([ \-])\d{4}\1\d{4}\1\d{4}(?![ \-]?\d)(?![A-Za-z])"
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_KEYS = [
    re.compile(p)
    for p in (
        r"\b(?:sk|pk|rk)-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_\-]{16,}",
        r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bAIza[0-9A-Za-z_\-]{35}\b",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    )
]
_GENERIC_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-+/=])[A-Za-z0-9_\-+/=]{32,}(?![A-Za-z0-9_\-+/=])")
_ASSIGNMENT = re.compile(
    r"(?i)\b(?:password|passwd|pwd|passphrase|passcode|pin|secret|token|api[ _\-]?key|"
    r"access[ _\-]?key|client[ _\-]?secret|private[ _\-]?key|пароль|токен)\b\s*[:=]\s*(\S.*)"
)


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(raw: str) -> bool:
    iban = raw.replace(" ", "")
    if not 15 <= len(iban) <= 34:
        return False
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    has_digit = any(c.isdigit() for c in token)
    has_alpha = any(c.isalpha() for c in token)
    return has_digit and has_alpha and _entropy(token) >= 3.5


def find_secrets(text: str) -> list[Span]:
    """Character spans of secrets in `text`, each with a label, merged and sorted."""
    spans: list[Span] = []
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            spans.append((m.start(), m.end(), "card"))
    spans.extend((m.start(), m.end(), "card") for m in _CARD_SHAPE.finditer(text))
    for m in _IBAN.finditer(text):
        if iban_ok(m.group()):
            spans.append((m.start(), m.end(), "iban"))
    for pattern in _KEYS:
        spans.extend((m.start(), m.end(), "key") for m in pattern.finditer(text))
    for m in _GENERIC_TOKEN.finditer(text):
        if _looks_random(m.group()):
            spans.append((m.start(), m.end(), "token"))
    for m in _ASSIGNMENT.finditer(text):
        spans.append((m.start(1), len(text.rstrip()), "secret"))
    return _merge(spans)


_SPECIFIC = {"card": 0, "iban": 1, "key": 2, "secret": 3, "token": 4}


def _merge(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end, label in sorted(spans):
        if out and start <= out[-1][1]:
            prev = out[-1]
            best = min(prev[2], label, key=_SPECIFIC.__getitem__)
            out[-1] = (prev[0], max(prev[1], end), best)
        else:
            out.append((start, end, label))
    return out


def redact_text(text: str) -> tuple[str, list[str]]:
    """The text with each secret replaced by `[REDACTED:<label>]`, and the labels found."""
    spans = find_secrets(text)
    return _apply(text, spans), [label for _, _, label in spans]


def _apply(text: str, spans: list[Span]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end, label in spans:
        parts.append(text[pos:start])
        parts.append(f"[REDACTED:{label}]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class RedactedLine:
    line: OcrLine  # text and words already redacted
    labels: tuple[str, ...]
    boxes: tuple[Box, ...]  # where the secrets were, to black out in a kept image


def _word_spans(words: tuple[OcrWord, ...]) -> Iterator[tuple[int, int, OcrWord]]:
    pos = 0
    for w in words:
        yield pos, pos + len(w.text), w
        pos += len(w.text) + 1


def redact_line(line: OcrLine) -> RedactedLine:
    text = " ".join(w.text for w in line.words) if line.words else line.text
    spans = find_secrets(text)
    if not spans:
        return RedactedLine(line, (), ())
    boxes: list[Box] = []
    words: list[OcrWord] = []
    for start, end, word in _word_spans(line.words):
        hit = next((label for s, e, label in spans if start < e and s < end), None)
        if hit is None:
            words.append(word)
        else:
            boxes.append(word.box)
            words.append(OcrWord(f"[REDACTED:{hit}]", word.conf, word.box))
    redacted = OcrLine(
        _apply(text, spans), line.conf, line.box, line.block, line.par, line.line, tuple(words)
    )
    return RedactedLine(redacted, tuple(label for _, _, label in spans), tuple(boxes))
