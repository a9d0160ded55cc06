"""Secrets are replaced before storage: cards (Luhn), IBANs (mod 97), keys, password lines."""

from __future__ import annotations

import pytest

from persona_desktop.capture.screen_redact import find_secrets, iban_ok, luhn_ok, redact_line, redact_text
from persona_desktop.ports.screen import OcrLine, OcrWord


@pytest.mark.parametrize(
    ("text", "label", "secret"),
    [
        ("Card 4111 1111 1111 1111 exp 12/29", "card", "4111 1111"),
        ("card no 5500-0000-0000-0004", "card", "0004"),
        # printed like a card but one digit misread by OCR (Luhn fails): still redacted
        ("Card 4111 1111 1111 1112 exp 12/27", "card", "1112"),
        ("pay to DE89 3704 0044 0532 0130 00 today", "iban", "0532"),
        ("GB82WEST12345698765432", "iban", "GB82WEST"),
        ("export OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "key", "Ab3dEf6"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "key", "ghp_"),
        ("aws AKIAIOSFODNN7EXAMPLE here", "key", "AKIA"),
        ("Authorization: Bearer abcDEF123456ghiJKL789", "key", "abcDEF"),
        (
            "id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "key",
            "eyJ",
        ),
        ("password: hunter2", "secret", "hunter2"),
        ("Пароль: qwerty123", "secret", "qwerty123"),
        ("blob 9fQ2xL7pZ3kW8vB1nM4cR6tY0uE5sA2dG7hJ", "token", "9fQ2"),
    ],
)
def test_secrets_are_found_and_replaced(text: str, label: str, secret: str) -> None:
    redacted, labels = redact_text(text)
    assert labels[0] == label
    assert f"[REDACTED:{label}]" in redacted
    assert secret not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "Ref 41111111111111112 fails Luhn",  # an unformatted long number that is no card
        "Call 555 1234 or 555 9876",
        "Order 2024-11-29 shipped, 3 items",
        "DE89 3704 0044 0532 0130 07 is not a valid IBAN",
        "The password field is empty",
        "https://example.com/docs/getting-started/installation-guide",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == (text, [])


def test_checksums() -> None:
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")
    assert iban_ok("DE89 3704 0044 0532 0130 00")
    assert not iban_ok("DE89 3704 0044 0532 0130 07")


def test_redacting_a_line_blacks_out_the_secret_words_only() -> None:
    words = ("Card", "4111", "1111", "1111", "1111", "expires")
    boxes = [(i * 60, 10, i * 60 + 50, 30) for i in range(len(words))]
    line = OcrLine(
        " ".join(words),
        90.0,
        (0, 10, 350, 30),
        1,
        1,
        1,
        tuple(OcrWord(w, 90.0, b) for w, b in zip(words, boxes, strict=True)),
    )
    red = redact_line(line)
    assert red.line.text == "Card [REDACTED:card] expires"
    assert red.labels == ("card",)
    assert red.boxes == tuple(boxes[1:5])
    assert red.line.words[0].text == "Card"
    assert "4111" not in str(red.line)


def test_spans_merge() -> None:
    spans = find_secrets("password: 4111 1111 1111 1111")
    assert len(spans) == 1
