"""One line on what a run's model responses cost: prompt tokens, how many of them a cache
reused, and tokens generated, from the model's own counters (mlx-lm's or a server's `usage`)."""

from __future__ import annotations

from collections.abc import Sequence


def reused_tokens(stats: object) -> int | None:
    """Prompt tokens a cache served for one response: a server's `cached_tokens`, or the
    local prompt less what was prefilled; None where neither was reported."""
    cached = getattr(stats, "cached_tokens", None)
    if isinstance(cached, int):
        return cached
    prompt, prefilled = (
        getattr(stats, "prompt_tokens", None),
        getattr(stats, "prefilled_tokens", None),
    )
    if isinstance(prompt, int) and isinstance(prefilled, int):
        return prompt - prefilled
    return None


def usage_line(stats: Sequence[object]) -> str | None:
    """`4 responses, 3,261 prompt tokens (2,906 from the cache), 52 generated`; None without
    counters (a scripted model)."""
    if not stats:
        return None
    prompts = [getattr(item, "prompt_tokens", None) for item in stats]
    generated = sum(int(getattr(item, "generated_tokens", 0) or 0) for item in stats)
    parts = [f"{len(stats)} response{'s' if len(stats) != 1 else ''}"]
    if all(isinstance(tokens, int) for tokens in prompts):
        prompt = f"{sum(tokens for tokens in prompts if isinstance(tokens, int)):,} prompt tokens"
        reused = [reused_tokens(item) for item in stats]
        if all(tokens is not None for tokens in reused):
            prompt += (
                f" ({sum(tokens for tokens in reused if tokens is not None):,} from the cache)"
            )
        parts.append(prompt)
    parts.append(f"{generated:,} generated")
    return ", ".join(parts)
