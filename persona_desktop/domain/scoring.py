"""The six-signal candidate score of the sleep cycle (DESIGN.md, phase 3)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

SIGNALS = ("relevance", "frequency", "diversity", "recency", "consolidation", "richness")

DEFAULT_WEIGHTS: dict[str, float] = {
    "relevance": 0.30,
    "frequency": 0.24,
    "diversity": 0.15,
    "recency": 0.15,
    "consolidation": 0.10,
    "richness": 0.06,
}


def normalize_weights(weights: dict[str, float]) -> dict[str, float]:
    """Renormalize to sum 1; unknown keys are an error, missing ones count as 0."""
    unknown = set(weights) - set(SIGNALS)
    if unknown:
        raise ValueError(f"unknown score weights: {', '.join(sorted(unknown))}")
    if any(w < 0 for w in weights.values()):
        raise ValueError("score weights must not be negative")
    total = sum(weights.get(s, 0.0) for s in SIGNALS)
    if total <= 0:
        raise ValueError("score weights must not all be zero")
    return {s: weights.get(s, 0.0) / total for s in SIGNALS}


@dataclass(frozen=True, slots=True)
class EvidenceStats:
    """Counters over a candidate's *independent* evidence.

    Independent means: distinct fragments, assistant-authored ones excluded,
    and the same text said twice by the same author counted once.
    """

    independent: int
    sessions: int
    newest: datetime | None
    documents: int
    confidence: float | None
    statement_words: int


def _clamp(x: float) -> float:
    return 0.0 if x < 0 else 1.0 if x > 1 else x


def signals_for(stats: EvidenceStats, now: datetime, period_days: int) -> dict[str, float]:
    relevance = _clamp(stats.confidence) if stats.confidence is not None else 0.7
    frequency = _clamp(stats.independent / 2)
    diversity = _clamp(stats.sessions / 3)
    if stats.newest is None:
        recency = 0.0
    else:
        age_days = max(0.0, (now - stats.newest).total_seconds() / 86400)
        # Half-life of one period: today's evidence 1.0, a period old 0.5.
        recency = _clamp(math.pow(0.5, age_days / max(period_days, 1)))
    consolidation = _clamp(stats.documents / 2)
    richness = _clamp(stats.statement_words / 8)
    return {
        "relevance": round(relevance, 4),
        "frequency": round(frequency, 4),
        "diversity": round(diversity, 4),
        "recency": round(recency, 4),
        "consolidation": round(consolidation, 4),
        "richness": round(richness, 4),
    }


def score(signals: dict[str, float], weights: dict[str, float]) -> float:
    w = normalize_weights(weights)
    return round(sum(w[s] * _clamp(signals.get(s, 0.0)) for s in SIGNALS), 4)
