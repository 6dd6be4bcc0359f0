"""Two branches from one checkpoint: sharing the prefilled KV prefix versus each prefilling its own.

Both sides run `KvPrefixGenerator` greedily on the random-weight benchmark model (built
offline by `counterfoil.testing.tiny_model`): the shared side prefills the checkpoint once and
forks it twice; the separate side builds a generator per branch, so each prefills the whole
prefix again. The responses must be identical token for token. A third row is the product's
path (`counterfoil fork`): the CLI's model (`load_generate`, its own mlx-lm prompt cache)
continues the checkpoint once per branch, one after another, and its counters say what each
branch did not prefill. Prints a table (tokens prefilled and seconds per side, then the
prefill avoided per branch), then one JSON line.
"""

from __future__ import annotations

import json
import time

from blas import use_openblas
from workload import SYSTEM, bench_model_dir, sized

MAX_TOKENS = sized(16, 4)
ROUNDS = 1  # each side takes about a minute on a 2-core machine
STEERS = ("validate without another edit", "try changing the answer again")


def checkpoint_messages() -> list[dict[str, str]]:
    """A checkpoint after one observation: a file of about a thousand tokens was read."""
    body = "".join(
        f"def handler_{n}(request):\n    return respond(request, {n})\n\n"
        for n in range(sized(60, 6))
    )
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "set answer = 2 in app.py and validate"},
        {"role": "assistant", "content": '{"tool":"read_file","path":"app.py"}'},
        {"role": "user", "content": "Tool result:\n" + body},
    ]


def main() -> None:
    blas = use_openblas()
    from mlx_lm import load

    from counterfoil.models.mlx.kv_prefix import KvPrefixGenerator

    model, tokenizer = load(str(bench_model_dir()))
    messages = checkpoint_messages()
    steered = [
        [*messages, {"role": "user", "content": f"Operator steering:\n{text}"}] for text in STEERS
    ]

    per_branch: list[int] = []

    def shared() -> tuple[list[str], int, int]:
        generator = KvPrefixGenerator(model, tokenizer, MAX_TOKENS)
        checkpoint = generator.save_checkpoint(messages)
        prefilled = len(checkpoint.cached_token_ids)
        avoided = 0
        outputs = []
        per_branch.clear()
        for prompt in steered:
            branch = generator.fork()
            branch.restore_checkpoint(checkpoint)
            outputs.append(branch(prompt))
            avoided += branch.reuse.avoided_prefill_tokens
            per_branch.append(branch.reuse.avoided_prefill_tokens)
            prefilled += (
                len(
                    tokenizer.encode(
                        tokenizer.apply_chat_template(
                            prompt, tokenize=False, add_generation_prompt=True
                        )
                    )
                )
                - branch.reuse.reused_tokens
            )
        return outputs, prefilled, avoided - len(checkpoint.cached_token_ids)

    def separate() -> tuple[list[str], int, int]:
        outputs = []
        prefilled = 0
        for prompt in steered:
            generator = KvPrefixGenerator(model, tokenizer, MAX_TOKENS)
            checkpoint = generator.save_checkpoint(messages)
            branch = generator.fork()
            branch.restore_checkpoint(checkpoint)
            outputs.append(branch(prompt))
            prefilled += len(
                tokenizer.encode(
                    tokenizer.apply_chat_template(
                        prompt, tokenize=False, add_generation_prompt=True
                    )
                )
            )
        return outputs, prefilled, 0

    shared()  # warm up
    timings: dict[str, list[float]] = {"shared": [], "separate": []}
    results = {}
    for _ in range(ROUNDS):
        for name, side in (("shared", shared), ("separate", separate)):
            started = time.perf_counter()
            results[name] = side()
            timings[name].append(time.perf_counter() - started)
    identical = results["shared"][0] == results["separate"][0]
    fork_rows, fork_seconds = product_fork(messages, steered)
    rows = {
        name: {
            "prefilled_tokens": results[name][1],
            "seconds": round(min(timings[name]), 4),
        }
        for name in ("shared", "separate")
    }
    prefix_tokens = rows["separate"]["prefilled_tokens"] - rows["shared"]["prefilled_tokens"]
    print(f"two branches, {MAX_TOKENS} tokens each ({blas})")
    print(f"{'side':<10} {'prefilled':>10} {'seconds':>9}")
    for name, row in rows.items():
        print(f"{name:<10} {row['prefilled_tokens']:>10} {row['seconds']:>8.3f}s")
    speedup = rows["separate"]["seconds"] / rows["shared"]["seconds"]
    print(
        f"shared prefix avoids {prefix_tokens} prefilled tokens, {speedup:.2f}x faster; identical: {identical}"
    )
    print(f"counterfoil fork's model, branches in turn ({fork_seconds:.3f}s):")
    for row in fork_rows:
        print(
            f"  {row['steer']!r}: prompt {row['prompt_tokens']}, prefilled "
            f"{row['prefilled_tokens']}, prefill avoided {row['avoided_prefill_tokens']}"
        )
    print(
        json.dumps(
            {
                "bench": "branches",
                "branches": len(STEERS),
                "max_tokens": MAX_TOKENS,
                "shared": rows["shared"],
                "separate": rows["separate"],
                "avoided_prefill_tokens": prefix_tokens,
                "avoided_prefill_tokens_per_branch": per_branch,
                "fork": {"per_branch": fork_rows, "seconds": round(fork_seconds, 4)},
                "speedup": round(speedup, 3),
                "identical": identical,
                "blas": blas,
            }
        )
    )


def product_fork(
    messages: list[dict[str, str]], steered: list[list[dict[str, str]]]
) -> tuple[list[dict[str, object]], float]:
    """The checkpoint's last turn, then each branch's first response, through the model
    `counterfoil fork` loads: what each branch prefilled and what its cache reused."""
    from counterfoil.models import GenerationOptions, load_generate

    options = GenerationOptions(max_tokens=MAX_TOKENS, constrain=False)
    generate = load_generate(str(bench_model_dir()), options)
    generate(messages[:-1])  # the parent run's last call: the cache now holds the checkpoint
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    for text, prompt in zip(STEERS, steered, strict=True):
        generate(prompt)
        stats = generate.stats[-1]
        rows.append(
            {
                "steer": text,
                "prompt_tokens": stats.prompt_tokens,
                "prefilled_tokens": stats.prefilled_tokens,
                "avoided_prefill_tokens": stats.reused_tokens,
            }
        )
    return rows, time.perf_counter() - started


if __name__ == "__main__":
    main()
