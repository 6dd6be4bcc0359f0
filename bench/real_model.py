"""SmolLM2-135M-Instruct (the real model of the test tier) on this machine: prefill and decode
rates on the quantized path and the CPU's fast path (float32 weights, OpenBLAS when installed),
how soon a Stop lands during a long prefill, time to the first token resumed from a saved KV
cache versus fresh on a long conversation, and the prompt cache over a 10-turn conversation.

`--quick` (the test suite's: it only checks that the script runs) uses a prompt of about 100
tokens, four decoded tokens per rate, one Stop trial and three turns. Needs the GGUF
(`scripts/install.sh`). Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from blas import use_openblas

DECODE_TOKENS = 24  # per rate measured; --quick decodes 4


def long_messages(words: int) -> list[dict[str, str]]:
    text = " ".join(f"line {index}: value = compute(x{index}, y{index})" for index in range(words))
    return [
        {"role": "system", "content": "You are a coding assistant."},
        {"role": "user", "content": text},
    ]


def rates(
    spec: str, fast: bool, messages: list[dict[str, str]], decode_tokens: int = DECODE_TOKENS
) -> dict[str, Any]:
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx import MLXGenerate, load_model

    loaded = load_model(spec, device="cpu", fast_cpu=fast)
    generate = MLXGenerate(loaded, GenerationOptions(max_tokens=decode_tokens, constrain=False))
    generate(messages)
    stats = generate.stats[0]
    prefill_seconds = stats.prefill_seconds or 1e-9
    decode_seconds = stats.seconds - prefill_seconds
    return {
        "prefill_tokens_per_second": (stats.prefilled_tokens or 0) / prefill_seconds,
        "decode_tokens_per_second": max(stats.generated_tokens - 1, 1) / max(decode_seconds, 1e-9),
        "prompt_tokens": stats.prompt_tokens,
        "weights": loaded.compute.weights if loaded.compute else "?",
    }


class Stop(Exception):
    pass


def stop_latencies(
    spec: str, messages: list[dict[str, str]], trials: int, latest: float
) -> list[float]:
    """Seconds from a stop request, at a random point of the prefill (up to `latest` seconds
    in), to the call's end; a trial whose prefill ended before its request counts none."""
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx import MLXGenerate, load_model

    loaded = load_model(spec, device="cpu")
    found: list[float] = []
    rng = random.Random(0)
    for _ in range(trials):
        asked = threading.Event()

        def on_progress(progress: Any, asked: threading.Event = asked) -> None:
            if asked.is_set():
                raise Stop

        generate = MLXGenerate(
            loaded, GenerationOptions(max_tokens=4, constrain=False), on_progress=on_progress
        )
        generate.prompt_cache.reset()
        delay = rng.uniform(latest / 10, latest)
        timer = threading.Timer(delay, asked.set)
        started = time.perf_counter()
        timer.start()
        try:
            generate(messages)
        except Stop:
            found.append(time.perf_counter() - started - delay)
        timer.cancel()
    return found


def resume_vs_fresh(spec: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx import MLXGenerate, load_model

    loaded = load_model(spec, device="cpu")
    options = GenerationOptions(max_tokens=8, constrain=False)
    first = MLXGenerate(loaded, options)
    answer = first(messages)
    conversation = [*messages, {"role": "assistant", "content": answer}]
    conversation.append({"role": "user", "content": "Summarise it in one line."})
    state = first.save_checkpoint(conversation)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "cache.safetensors")
        first.write_prompt_cache(path)
        resumed = MLXGenerate(loaded, options)
        started = time.perf_counter()
        resumed.read_prompt_cache(path, state.cached_token_ids)
        resumed(conversation)
        resumed_ttft = (
            time.perf_counter()
            - started
            - (resumed.stats[0].seconds - (resumed.stats[0].prefill_seconds or 0.0))
        )
    fresh = MLXGenerate(loaded, options)
    fresh(conversation)
    return {
        "conversation_tokens": fresh.stats[0].prompt_tokens,
        "ttft_resumed_s": resumed_ttft,
        "ttft_fresh_s": fresh.stats[0].prefill_seconds or 0.0,
        "identical_tokens": resumed.stats[0].token_ids == fresh.stats[0].token_ids,
    }


def conversation_turns(spec: str, turns: int) -> dict[str, int]:
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx import MLXGenerate, load_model

    generate = MLXGenerate(
        load_model(spec, device="cpu"), GenerationOptions(max_tokens=12, constrain=False)
    )
    messages = [{"role": "system", "content": "You are a coding assistant."}]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Step {turn}: what does line {turn} do?"})
        messages.append({"role": "assistant", "content": generate(list(messages))})
    return {
        "turns": turns,
        "prompt_tokens": sum(stats.prompt_tokens or 0 for stats in generate.stats),
        "prefilled_tokens": sum(stats.prefilled_tokens or 0 for stats in generate.stats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    arguments = parser.parse_args()
    blas = use_openblas()
    from counterfoil.testing.smollm2 import smollm2_gguf

    spec = str(smollm2_gguf())
    if not Path(spec).is_file():
        raise SystemExit(f"error: SmolLM2 is not installed at {spec}: run scripts/install.sh")
    words = 8 if arguments.quick else 160  # about 100 / 2,000 tokens
    trials = 1 if arguments.quick else 10
    latest = 0.3 if arguments.quick else 2.0  # a Stop lands at most this far into the prefill
    messages = long_messages(words)
    decode = 4 if arguments.quick else DECODE_TOKENS
    quantized = rates(spec, False, long_messages(words // 4), decode)
    fast = rates(spec, True, messages, decode)
    stops = stop_latencies(spec, messages, trials, latest)
    resume = resume_vs_fresh(spec, messages)
    turns = conversation_turns(spec, 3 if arguments.quick else 10)
    figures = {
        "blas": blas,
        "quantized": quantized,
        "fast": fast,
        "prefill_speedup": fast["prefill_tokens_per_second"]
        / quantized["prefill_tokens_per_second"],
        "stop_latency_p50_s": statistics.median(stops) if stops else None,
        "stop_latency_max_s": max(stops) if stops else None,
        "stop_trials": len(stops),
        "resume": resume,
        "ten_turns": turns,
    }
    print(f"SmolLM2-135M-Instruct Q4_1 on the CPU ({blas})")
    print(f"{'path':<28}{'prefill tok/s':>15}{'decode tok/s':>14}")
    for name, side in (("quantized (Q4_1)", quantized), ("fast (float32)", fast)):
        print(
            f"{name:<28}{side['prefill_tokens_per_second']:>15.1f}"
            f"{side['decode_tokens_per_second']:>14.1f}"
        )
    print(f"prefill speed-up: {figures['prefill_speedup']:.1f}x")
    if stops:
        print(
            f"Stop during a {fast['prompt_tokens']}-token prefill: p50 "
            f"{figures['stop_latency_p50_s']:.3f} s, max {figures['stop_latency_max_s']:.3f} s "
            f"({len(stops)} trials)"
        )
    else:
        print(f"Stop during a {fast['prompt_tokens']}-token prefill: every prefill ended first")
    print(
        f"time to first token on {resume['conversation_tokens']} tokens: resumed "
        f"{resume['ttft_resumed_s']:.2f} s, fresh {resume['ttft_fresh_s']:.2f} s "
        f"(same tokens: {resume['identical_tokens']})"
    )
    print(
        f"{turns['turns']} turns: {turns['prefilled_tokens']} of {turns['prompt_tokens']} prompt tokens prefilled"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
