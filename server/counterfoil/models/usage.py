"""One line on what a run's model responses cost: prompt tokens, how many of them a cache
reused, and tokens generated, from the model's own counters (mlx-lm's or a server's `usage`)."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import ResponseStats


def usage_line(stats: Sequence[ResponseStats]) -> str | None:
    """`4 responses, 3,261 prompt tokens (2,906 from the cache), 52 generated`; None without
    counters (a scripted model)."""
    if not stats:
        return None
    prompts = [item.prompt_tokens for item in stats]
    generated = sum(item.generated_tokens for item in stats)
    parts = [f"{len(stats)} response{'s' if len(stats) != 1 else ''}"]
    if all(tokens is not None for tokens in prompts):
        prompt = f"{sum(tokens for tokens in prompts if tokens is not None):,} prompt tokens"
        reused = [item.reused_tokens for item in stats]
        if all(tokens is not None for tokens in reused):
            prompt += (
                f" ({sum(tokens for tokens in reused if tokens is not None):,} from the cache)"
            )
        parts.append(prompt)
    parts.append(f"{generated:,} generated")
    return ", ".join(parts)


def reused_tokens(stats: object) -> int | None:
    """Prompt tokens a cache served for one response; None for what is not a `ResponseStats`."""
    return stats.reused_tokens if isinstance(stats, ResponseStats) else None
