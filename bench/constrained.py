"""Per-token decode time with the llguidance action constraint versus without it.

The random-weight Qwen3 benchmark model (hidden 512, 8 layers, float32, 32k vocabulary),
short agent prompts, bare `mlx_lm.stream_generate` with and without Counterfoil's logits
processor, run in pairs. Prefill is excluded (mlx-lm's generation rate counts from the first
token). The headline ratio is the median over pairs, so a pair slowed by other work on the
machine does not decide it. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import os
import statistics
import time

from blas import use_openblas
from workload import GOALS, agent_messages, bench_model_dir, median_ratio, sized

MAX_TOKENS = sized(128, 16)
ROUNDS = sized(3, 1)


def main() -> None:
    blas = use_openblas()
    from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask
    from mlx_lm import stream_generate
    from mlx_lm.sample_utils import make_sampler

    from counterfoil.models.mlx.mlx import load_model

    loaded = load_model(str(bench_model_dir()))
    grammar = loaded.action_grammar(None, [("python", "validate.py")])
    tokenizer = loaded.tokenizer
    sampler = make_sampler(temp=0.0)
    prompts = [
        tokenizer.apply_chat_template(
            agent_messages(goal), add_generation_prompt=True, enable_thinking=False
        )
        for goal in sized(GOALS[:4], GOALS[:2])
    ]

    def decode(prompt: list[int], constrained: bool) -> tuple[int, float, float]:
        """Tokens generated, wall ms per token (prefill excluded), CPU ms per token."""
        processors = [grammar.processor(MAX_TOKENS)] if constrained else None
        last = None
        cpu = time.process_time()
        for last in stream_generate(
            loaded.model,
            tokenizer,
            prompt,
            max_tokens=MAX_TOKENS,
            sampler=sampler,
            logits_processors=processors,
        ):
            pass
        cpu = time.process_time() - cpu
        assert last is not None
        tokens = last.generation_tokens
        return tokens, 1000 / last.generation_tps, cpu / tokens * 1000

    decode(prompts[0], True)
    decode(prompts[0], False)
    rows = []
    for round_index in range(ROUNDS):
        for index, prompt in enumerate(prompts):
            free = decode(prompt, False)
            bound = decode(prompt, True)
            rows.append((round_index + 1, index + 1, free, bound))

    # The processor's own cost per token, apart from the model: replay one constrained
    # response through a fresh processor with fixed logits, evaluating each masked result.
    import mlx.core as mx

    replayed = [
        response.token
        for response in stream_generate(
            loaded.model,
            tokenizer,
            prompts[0],
            max_tokens=MAX_TOKENS,
            sampler=sampler,
            logits_processors=[grammar.processor(MAX_TOKENS)],
        )
    ]
    logits = mx.random.normal((1, grammar.vocab_size))
    mx.eval(logits)
    processor = grammar.processor(MAX_TOKENS)
    history = list(prompts[0])
    processor_seconds = []
    for token in replayed:
        tokens = mx.array(history)
        mx.eval(tokens)
        started = time.perf_counter()
        mx.eval(processor(tokens, logits))
        processor_seconds.append(time.perf_counter() - started)
        history.append(token)

    # llguidance alone: one mask per token along a constrained write_file response.
    matcher = grammar.processor(MAX_TOKENS)._matcher
    bitmask = allocate_token_bitmask(1, grammar.vocab_size)
    text = '{"tool":"write_file","path":"NOTES.md","content":"' + "Greeting is Welcome. " * 8
    mask_seconds = []
    for token in grammar.ll_tokenizer.tokenize_str(text):
        started = time.perf_counter()
        fill_next_token_bitmask(matcher, bitmask)
        mask_seconds.append(time.perf_counter() - started)
        matcher.consume_token(token)

    print(f"BLAS: {blas}; load average {os.getloadavg()[0]:.1f}; vocabulary {grammar.vocab_size}")
    print(
        f"{'round':>5} {'prompt':>6} {'tokens':>6} {'ms/token free':>13} "
        f"{'tokens':>6} {'ms/token constrained':>20} {'ratio':>6}"
    )
    for round_number, prompt_number, free, bound in rows:
        print(
            f"{round_number:>5} {prompt_number:>6} {free[0]:>6} {free[1]:>13.2f} "
            f"{bound[0]:>6} {bound[1]:>20.2f} {bound[1] / free[1]:>6.3f}"
        )
    free_ms = [row[2][1] for row in rows]
    bound_ms = [row[3][1] for row in rows]
    ratio = median_ratio(bound_ms, free_ms)
    cpu_ratio = median_ratio([row[3][2] for row in rows], [row[2][2] for row in rows])
    mask_ms = statistics.median(mask_seconds) * 1000
    processor_ms = statistics.mean(processor_seconds) * 1000
    free_median = statistics.median(free_ms)
    print(
        f"per token (median): free {statistics.median(free_ms):.2f} ms, constrained "
        f"{statistics.median(bound_ms):.2f} ms; median pair ratio {ratio:.3f} "
        f"(CPU time {cpu_ratio:.3f})"
    )
    print(
        f"processor alone: {processor_ms:.3f} ms a token (mean over {len(processor_seconds)}), "
        f"{processor_ms / free_median:.1%} of a free decode step; "
        f"llguidance mask median {mask_ms:.3f} ms"
    )
    print(
        json.dumps(
            {
                "benchmark": "constrained",
                "ms_per_token_free": round(statistics.median(free_ms), 3),
                "ms_per_token_constrained": round(statistics.median(bound_ms), 3),
                "ratio": round(ratio, 3),
                "cpu_time_ratio": round(cpu_ratio, 3),
                "pairs": len(rows),
                "processor_ms_per_token": round(processor_ms, 4),
                "processor_share_of_decode": round(processor_ms / free_median, 4),
                "llguidance_mask_ms_median": round(mask_ms, 4),
                "vocab_size": grammar.vocab_size,
                "blas": "openblas" if "OpenBLAS" in blas else "default",
            }
        )
    )


if __name__ == "__main__":
    main()
