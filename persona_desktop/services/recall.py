"""Recall: which applied facts go into this turn's system prompt, within a token budget.

The facts that matter for the turn come first: BM25 over each fact's statement and the
text of its evidence (the owner's own words, which often say it the way the question
will), optionally fused with embedding similarity when the owner turned it on. The rest
of the budget goes to the newest facts, so a small memory is carried whole, as before.
Only applied facts are ever recalled: a reverted, superseded or forgotten fact is out of
the index's join and loses its stored vector (database triggers).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from persona_desktop.domain.model import Fact, FactStatus
from persona_desktop.domain.search_query import recall_query
from persona_desktop.errors import LLMError
from persona_desktop.ports import Embedder, UnitOfWorkFactory

log = logging.getLogger(__name__)

DEFAULT_BUDGET = 1500
RANKED = 300  # candidates taken from each ranking before the budget cuts
EMBED_BATCH = 64
EMBED_PER_TURN = 256  # facts embedded at most per turn (the rest on the next turns)
_RRF_K = 60


@dataclass(frozen=True, slots=True)
class RecallConfig:
    budget_tokens: int = DEFAULT_BUDGET
    embeddings: bool = False
    embedding_model: str = "nomic-embed-text"


DEFAULT_RECALL = RecallConfig()


@dataclass(frozen=True, slots=True)
class RecalledFact:
    fact: Fact
    score: float
    reason: str  # "words" (BM25), "meaning" (embeddings), "both", or "newest"

    @property
    def relevant(self) -> bool:
        return self.reason != "newest"


@dataclass(frozen=True, slots=True)
class Recall:
    facts: list[RecalledFact]  # in prompt order: relevant first, then newest
    tokens: int
    warnings: list[str] = field(default_factory=list)

    @property
    def relevant(self) -> list[RecalledFact]:
        return [r for r in self.facts if r.relevant]


def estimate_tokens(text: str) -> int:
    """About four characters a token (English, Llama-style tokenizers); never zero."""
    return max(1, math.ceil(len(text) / 4))


def fact_line(fact: Fact) -> str:
    return f"{fact.id}. {fact.statement}" + (f" ({fact.category})" if fact.category else "")


def _fuse(rankings: Sequence[Sequence[tuple[int, float]]]) -> dict[int, float]:
    """Reciprocal rank fusion: robust to the two scores' different scales."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (fid, _score) in enumerate(ranking):
            fused[fid] = fused.get(fid, 0.0) + 1.0 / (_RRF_K + rank + 1)
    return fused


def embed_missing(uow_factory: UnitOfWorkFactory, embedder: Embedder, limit: int = EMBED_PER_TURN) -> int:
    """Embed applied facts that have no current vector for the model; returns how many."""
    with uow_factory.read() as uow:
        todo = uow.embeddings.missing(embedder.model, limit)
    done = 0
    for i in range(0, len(todo), EMBED_BATCH):
        batch = todo[i : i + EMBED_BATCH]
        vectors = embedder.embed([statement for _, statement in batch])
        with uow_factory() as uow:
            for (fid, statement), vector in zip(batch, vectors, strict=True):
                uow.embeddings.put(fid, embedder.model, statement, vector)
            uow.commit()
        done += len(batch)
    return done


def _by_meaning(
    uow_factory: UnitOfWorkFactory, embedder: Embedder, text: str, warnings: list[str]
) -> list[tuple[int, float]]:
    try:
        embed_missing(uow_factory, embedder)
        [vector] = embedder.embed([text])
    except LLMError as exc:
        warnings.append(f"recall by meaning is off for this turn: {exc}")
        log.warning("embedding recall failed: %s", exc)
        return []
    with uow_factory.read() as uow:
        return uow.embeddings.nearest(embedder.model, vector, RANKED)


def recall(
    uow_factory: UnitOfWorkFactory,
    text: str,
    config: RecallConfig = DEFAULT_RECALL,
    embedder: Callable[[], Embedder] | None = None,
) -> Recall:
    """The applied facts for a turn about `text`, best first, within `config.budget_tokens`."""
    warnings: list[str] = []
    query = recall_query(text)
    with uow_factory.read() as uow:
        by_words = uow.search.rank_facts(query, RANKED)
        applied = {f.id: f for f in uow.facts.all(FactStatus.APPLIED)}
    by_meaning: list[tuple[int, float]] = []
    if config.embeddings and embedder is not None and text.strip() and applied:
        by_meaning = _by_meaning(uow_factory, embedder(), text, warnings)
    words_ids = {fid for fid, _ in by_words}
    meaning_ids = {fid for fid, _ in by_meaning}
    scores = _fuse([by_words, by_meaning]) if by_meaning else dict(by_words)
    ranked = sorted((fid for fid in scores if fid in applied), key=lambda fid: -scores[fid])
    picked: list[RecalledFact] = []
    used = 0
    budget = max(0, config.budget_tokens)
    for fid in ranked:
        reason = (
            "both" if fid in words_ids and fid in meaning_ids else "words" if fid in words_ids else "meaning"
        )
        cost = estimate_tokens(fact_line(applied[fid])) + 1
        if used + cost <= budget:
            picked.append(RecalledFact(applied[fid], scores[fid], reason))
            used += cost
    chosen = {r.fact.id for r in picked}
    for fact in sorted(applied.values(), key=lambda f: f.id, reverse=True):
        if fact.id in chosen:
            continue
        cost = estimate_tokens(fact_line(fact)) + 1
        if used + cost > budget:
            break
        picked.append(RecalledFact(fact, 0.0, "newest"))
        used += cost
    return Recall(picked, used, warnings)
