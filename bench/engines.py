"""MLX's CPU path against llama.cpp (`--engine llama.cpp`) on the same GGUF and the same prompts:
prefill and decode tokens/s side by side, medians over the prompts.

Both engines run as a run does (`load_generate`): MLX with the path the device rule picks and
its chunked prefill, no prompt cache or prompt lookup; llama.cpp on the server Counterfoil
starts, whose prompt cache serves only the shared chat-template prefix (its cached tokens are
left out of the prefill count). Prefill is timed to the first token, decode over the rest.
Unconstrained, temperature 0. An engine that cannot load the file is reported with its reason.

`--model FILE.gguf` (default: SmolLM2 from the test tier's cache); `--quick` (the test suite's:
it only checks that the script runs) uses SmolLM2, one short prompt and four decoded tokens.
Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

from blas import use_openblas
from workload import QUICK, sized

DECODE_TOKENS = sized(48, 4)
PROMPT_LINES = sized((20, 40, 80), (4,))


def prompts() -> list[list[dict[str, str]]]:
    """Code-like prompts of growing length, the same for both engines."""
    made = []
    for lines in PROMPT_LINES:
        code = "\n".join(f"def step_{i}(x):\n    return x * {i} + {i % 7}" for i in range(lines))
        made.append(
            [
                {"role": "system", "content": "You are a coding assistant."},
                {"role": "user", "content": f"{code}\n\nExplain what step_3 does, at length."},
            ]
        )
    return made


def measure(spec: str, engine: str) -> dict[str, Any]:
    from counterfoil.models import GenerationOptions, close_model, load_generate
    from counterfoil.models.options import LlamaCppOptions

    options = GenerationOptions(
        max_tokens=DECODE_TOKENS,
        constrain=False,
        reuse_prompt_cache=False,
        prompt_lookup=False,
        llama_cpp=LlamaCppOptions(context_tokens=8192) if engine == "llama.cpp" else None,
    )
    try:
        generate = load_generate(spec, options)
    except Exception as error:  # noqa: BLE001 - a bench reports what it could not run
        return {"engine": engine, "error": str(error).splitlines()[0]}
    prefill, decode, prompt_tokens = [], [], []
    try:
        generate(prompts()[0])  # warm-up: first-call costs (graph build, page-in)
        for messages in prompts():
            generate(messages)
            stats = generate.stats[-1]
            first = stats.prefill_seconds or stats.first_token_seconds or 1e-9
            counted = (stats.prompt_tokens or 0) - (stats.cached_tokens or 0)
            if stats.prefilled_tokens is not None:
                counted = stats.prefilled_tokens
            prefill.append(counted / first)
            decode.append(max(stats.generated_tokens - 1, 1) / max(stats.seconds - first, 1e-9))
            prompt_tokens.append(stats.prompt_tokens or 0)
        compute = getattr(getattr(generate, "loaded", None), "compute", None)
    finally:
        close_model(generate)
    return {
        "engine": engine,
        "path": compute.describe() if compute is not None else engine,
        "prompt_tokens": prompt_tokens,
        "prefill_tokens_per_second": round(statistics.median(prefill), 1),
        "decode_tokens_per_second": round(statistics.median(decode), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF file (default: SmolLM2)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--engine", action="append", choices=("mlx", "llama.cpp"), help="default: both"
    )
    arguments = parser.parse_args()
    blas = use_openblas()
    from counterfoil.testing.smollm2 import smollm2_gguf

    spec = str(smollm2_gguf()) if QUICK or not arguments.model else arguments.model
    engines = arguments.engine or ["mlx", "llama.cpp"]
    rows = []
    for engine in engines:
        rows.append(measure(spec, engine))
        print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    print(f"model: {spec}\nBLAS: {blas}; decode {DECODE_TOKENS} tokens per prompt")
    print(f"{'engine':<10} {'prefill tok/s':>14} {'decode tok/s':>13}  path")
    for row in rows:
        if "error" in row:
            print(f"{row['engine']:<10} {'-':>14} {'-':>13}  not run: {row['error']}")
            continue
        print(
            f"{row['engine']:<10} {row['prefill_tokens_per_second']:>14.1f} "
            f"{row['decode_tokens_per_second']:>13.1f}  {row['path']}"
        )
    ran = {row["engine"]: row for row in rows if "error" not in row}
    ratios = {}
    if {"mlx", "llama.cpp"} <= ran.keys():
        for figure in ("prefill_tokens_per_second", "decode_tokens_per_second"):
            ratios[figure] = round(ran["llama.cpp"][figure] / ran["mlx"][figure], 2)
        print(
            f"llama.cpp / MLX: prefill {ratios['prefill_tokens_per_second']}x, "
            f"decode {ratios['decode_tokens_per_second']}x"
        )
    print(json.dumps({"bench": "engines", "model": spec, "engines": rows, "ratios": ratios}))


if __name__ == "__main__":
    main()
