"""Counterfoil's generate callable versus bare `mlx_lm.stream_generate` on the same prompts.

Counterfoil's side is the whole per-turn path the CLI uses (chat template, prompt-cache
bookkeeping, a progress report per token, action extraction), with cache reuse
off so both sides prefill the same tokens; the bare side applies the chat template and
streams. The random-weight benchmark model, greedy, unconstrained, tokens checked equal, run
in pairs; the headline ratio is the median over pairs. Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import os
import time

from blas import use_openblas
from workload import GOALS, agent_messages, bench_model_dir, median_ratio, sized

MAX_TOKENS = sized(64, 8)
ROUNDS = sized(2, 1)


def main() -> None:
    blas = use_openblas()
    from mlx_lm import stream_generate
    from mlx_lm.sample_utils import make_sampler

    from counterfoil.models import GenerationOptions, ModelProgress, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate

    reports: list[ModelProgress] = []
    generate = load_generate(
        str(bench_model_dir()),
        GenerationOptions(
            max_tokens=MAX_TOKENS,
            constrain=False,
            reuse_prompt_cache=False,
            prompt_lookup=False,  # the same decoding as the bare side; see prompt_lookup.py
        ),
        on_progress=reports.append,
    )
    assert isinstance(generate, MLXGenerate)
    model, tokenizer = generate.loaded.model, generate.loaded.tokenizer
    sampler = make_sampler(temp=0.0)

    def bare(messages: list[dict[str, str]]) -> list[int]:
        prompt = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, enable_thinking=False
        )
        text: list[str] = []
        tokens: list[int] = []
        for response in stream_generate(
            model, tokenizer, prompt, max_tokens=MAX_TOKENS, sampler=sampler
        ):
            text.append(response.text)
            tokens.append(response.token)
        return tokens

    conversations = [agent_messages(goal) for goal in sized(GOALS, GOALS[:2])]
    bare(conversations[0])
    generate(conversations[0])
    rows = []
    identical = True
    for round_index in range(ROUNDS):
        for index, messages in enumerate(conversations):
            started = time.perf_counter()
            bare_tokens = bare(messages)
            bare_seconds = time.perf_counter() - started
            started = time.perf_counter()
            generate(messages)
            counterfoil_seconds = time.perf_counter() - started
            stats = generate.stats[-1]
            identical &= list(stats.token_ids) == bare_tokens
            rows.append(
                (
                    round_index + 1,
                    index + 1,
                    stats.prompt_tokens,
                    len(bare_tokens),
                    bare_seconds,
                    counterfoil_seconds,
                )
            )

    print(f"BLAS: {blas}; load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'round':>5} {'prompt':>6} {'prompt tokens':>13} {'generated':>9} "
        f"{'s bare':>7} {'s counterfoil':>13} {'ratio':>6}"
    )
    for row in rows:
        print(
            f"{row[0]:>5} {row[1]:>6} {row[2]:>13} {row[3]:>9} {row[4]:>7.2f} "
            f"{row[5]:>13.2f} {row[5] / row[4]:>6.3f}"
        )
    total_bare = sum(row[4] for row in rows)
    total_counterfoil = sum(row[5] for row in rows)
    ratio = median_ratio([row[5] for row in rows], [row[4] for row in rows])
    print(
        f"total: bare {total_bare:.2f} s, counterfoil {total_counterfoil:.2f} s "
        f"({total_counterfoil / total_bare:.3f}x); median pair ratio {ratio:.3f}; "
        f"identical tokens: {identical}"
    )
    print(
        json.dumps(
            {
                "benchmark": "loop_overhead",
                "seconds_bare": round(total_bare, 3),
                "seconds_counterfoil": round(total_counterfoil, 3),
                "ratio": round(ratio, 3),
                "total_ratio": round(total_counterfoil / total_bare, 3),
                "pairs": len(rows),
                "identical_tokens": identical,
                "blas": "openblas" if "OpenBLAS" in blas else "default",
            }
        )
    )


if __name__ == "__main__":
    main()
