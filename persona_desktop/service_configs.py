"""Each service's config from the owner's typed settings: where settings and services meet.

Services never read settings (an import-linter contract): they take the few values they
need, as the plain config objects below, built here from `Settings.values` by the CLI, the
tray app and the MCP server alike.
"""

from __future__ import annotations

from persona_desktop.domain.scoring import normalize_weights
from persona_desktop.services.mcp_memory import SCOPES, McpPolicy
from persona_desktop.services.recall import RecallConfig
from persona_desktop.services.review_setup import ReviewConfig, ReviewKind
from persona_desktop.services.sleep_cycle import SleepConfig
from persona_desktop.setting_values import ReviewSettings, SettingValues


def sleep_config(v: SettingValues) -> SleepConfig:
    sleep, ollama = v.sleep, v.ollama
    return SleepConfig(
        enabled=sleep.enabled,
        quiet_minutes=sleep.quiet_minutes,
        period_days=sleep.period_days,
        max_documents=sleep.max_documents,
        threshold=sleep.threshold,
        review_floor=sleep.review_floor,
        weights=normalize_weights(sleep.weights.as_dict()),
        lease_seconds=sleep.lease_seconds,
        retries=ollama.retries,
        backoff_s=ollama.retry_backoff_seconds,
        llm_timeout_s=ollama.timeout_seconds,
        auto_apply_per_document=sleep.auto_apply_per_document,
        auto_apply_per_run=sleep.auto_apply_per_run,
    )


def review_config(v: SettingValues) -> ReviewConfig:
    review = v.review
    return ReviewConfig(
        enabled=review.enabled,
        memory_interval=review.memory_interval,
        skill_interval=review.skill_interval,
        allowed_toolsets=tuple(t.strip() for t in review.allowed_toolsets),
        max_iterations=review.max_iterations,
        timeout_s=review.timeout_seconds,
        prompt_paths={kind.value: _prompt_path(review, kind) for kind in ReviewKind},
    )


def _prompt_path(review: ReviewSettings, kind: ReviewKind) -> str:
    """`review.<kind>_prompt_path`; mypy fails here when a kind has no setting."""
    match kind:
        case ReviewKind.MEMORY:
            return review.memory_prompt_path
        case ReviewKind.SKILL:
            return review.skill_prompt_path
        case ReviewKind.COMBINED:
            return review.combined_prompt_path


def recall_config(v: SettingValues) -> RecallConfig:
    return RecallConfig(
        budget_tokens=v.recall.budget_tokens,
        embeddings=v.recall.embeddings,
        embedding_model=v.recall.embedding_model,
    )


def mcp_policy(v: SettingValues) -> McpPolicy:
    """What MCP clients may read (`mcp.read_scopes`) and propose, under the one policy."""
    scopes = frozenset(s for s in v.mcp.read_scopes if s in SCOPES)
    return McpPolicy(scopes, v.mcp.allow_proposals, sleep_config(v).selection())
