"""SmolLM2-135M-Instruct (the real model of the test tier) on this machine: prefill rates of
the quantized weights and of the same weights dequantized to float32 and to float16, side by
side through the chunked prefill a run uses (repeated, medians); decode rates on the quantized
and the fast path; how soon a Stop lands at points spread over a ~2,000-token prefill on the
path a run takes here; time to the first token resumed from a saved KV cache versus fresh on a
long conversation; the prompt cache over a 10-turn conversation.

`--quick` (the test suite's: it only checks that the script runs) uses a prompt of about 100
tokens, four decoded tokens per rate, one Stop trial and three turns. Needs the GGUF
(`scripts/install.sh`). Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
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
    from counterfoil.models.mlx.mlx import MLXGenerate, load_model

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


def prefill_side_by_side(spec: str, tokens: list[int], repeats: int) -> dict[str, float]:
    """Median prefill tokens/s of each weight form over the same tokens, interleaved, through
    `prefill_in_chunks` (the chunk rule a run uses). Only ratios mean much on a shared machine."""
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.models.cache import make_prompt_cache

    from counterfoil.models.gguf.gguf_import import import_gguf
    from counterfoil.models.mlx.cpu_path import dequantize_to
    from counterfoil.models.mlx.prefill import prefill_in_chunks

    mx.set_default_device(mx.cpu)
    folder = str(import_gguf(spec).folder)
    models: dict[str, Any] = {}
    for form in ("quantized", "float32", "float16"):
        model = load(folder)[0]
        if form != "quantized":
            dequantize_to(model, form)
        models[form] = model
    found: dict[str, list[float]] = {form: [] for form in models}
    for _ in range(repeats):
        for form, model in models.items():
            _, seconds = prefill_in_chunks(model, make_prompt_cache(model), tokens)
            found[form].append((len(tokens) - 1) / seconds)
    return {form: statistics.median(values) for form, values in found.items()}


class Stop(Exception):
    pass


def stop_latencies(
    spec: str, messages: list[dict[str, str]], prefill_seconds: float, trials: int
) -> list[dict[str, float]]:
    """Seconds from a stop request to the call's end, asked at `trials` points spread evenly
    over a prefill that takes about `prefill_seconds`, on the path `load_model` takes here."""
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx.mlx import MLXGenerate, load_model

    loaded = load_model(spec, device="cpu")
    found: list[dict[str, float]] = []
    for trial in range(trials):
        asked = threading.Event()
        done = [0]

        def on_progress(
            progress: Any, asked: threading.Event = asked, done: list[int] = done
        ) -> None:
            if progress.prefill_total:
                done[0] = progress.prompt_tokens or 0
            if asked.is_set():
                raise Stop

        generate = MLXGenerate(
            loaded, GenerationOptions(max_tokens=4, constrain=False), on_progress=on_progress
        )
        generate.prompt_cache.reset()
        delay = prefill_seconds * (trial + 0.5) / trials
        timer = threading.Timer(delay, asked.set)
        started = time.perf_counter()
        timer.start()
        try:
            generate(messages)
        except Stop:
            found.append({"latency_s": time.perf_counter() - started - delay, "at_token": done[0]})
        timer.cancel()
    return found


def resume_vs_fresh(spec: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    from counterfoil.models import GenerationOptions
    from counterfoil.models.mlx.mlx import MLXGenerate, load_model

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
    from counterfoil.models.mlx.mlx import MLXGenerate, load_model

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


def openblas_threads() -> int | None:
    """The threads OpenBLAS uses in this process, when it is loaded."""
    import ctypes

    from counterfoil.models.mlx.cpu_path import OPENBLAS, blas_in_use

    if blas_in_use() != "OpenBLAS":
        return None
    return int(ctypes.CDLL(str(OPENBLAS)).openblas_get_num_threads())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    arguments = parser.parse_args()
    blas = use_openblas()
    import os

    from counterfoil.models.mlx.cpu_path import blas_in_use
    from counterfoil.models.mlx.prefill import CHUNK_SECONDS
    from counterfoil.testing.smollm2 import smollm2_gguf

    spec = str(smollm2_gguf())
    if not Path(spec).is_file():
        raise SystemExit(f"error: SmolLM2 is not installed at {spec}: run scripts/install.sh")
    words = 8 if arguments.quick else 160  # about 100 / 2,000 tokens
    trials = 1 if arguments.quick else 9
    decode = 4 if arguments.quick else DECODE_TOKENS
    messages = long_messages(words)
    load_before = os.getloadavg()[0]
    side_tokens = list(range(100, 100 + (64 if arguments.quick else 512)))
    side = prefill_side_by_side(spec, side_tokens, 1 if arguments.quick else 3)
    quantized = rates(spec, False, long_messages(max(words // 4, 4)), decode)
    fast = rates(spec, True, messages, decode)
    full_prefill = fast["prompt_tokens"] / fast["prefill_tokens_per_second"]
    stops = stop_latencies(spec, messages, full_prefill, trials)
    latencies = [stop["latency_s"] for stop in stops]
    resume = resume_vs_fresh(spec, messages)
    turns = conversation_turns(spec, 3 if arguments.quick else 10)
    figures = {
        "blas": blas,
        "blas_in_use": blas_in_use(),
        "openblas_threads": openblas_threads(),
        "load_average": [load_before, os.getloadavg()[0]],
        "chunk_seconds": CHUNK_SECONDS,
        "side_by_side_prefill_tokens": len(side_tokens),
        "side_by_side_prefill_tokens_per_second": side,
        "prefill_speedup": side["float32"] / side["quantized"],
        "float16_vs_float32": side["float16"] / side["float32"],
        "quantized": quantized,
        "fast": fast,
        "stop_prefill_tokens": fast["prompt_tokens"],
        "stops": stops,
        "stop_latency_p50_s": statistics.median(latencies) if latencies else None,
        "stop_latency_max_s": max(latencies) if latencies else None,
        "stop_trials": len(stops),
        "resume": resume,
        "ten_turns": turns,
    }
    print(
        f"SmolLM2-135M-Instruct Q4_1 on the CPU ({blas_in_use()}, "
        f"{figures['openblas_threads']} OpenBLAS threads; load {load_before:.1f})"
    )
    print(f"prefill of {len(side_tokens)} tokens side by side (chunks of ~{CHUNK_SECONDS} s):")
    print(f"{'weights':<28}{'prefill tok/s':>15}")
    for form, rate in side.items():
        print(f"{form:<28}{rate:>15.1f}")
    print(
        f"float32 vs quantized: {figures['prefill_speedup']:.1f}x; "
        f"float16 vs float32: {figures['float16_vs_float32']:.2f}x"
    )
    print(f"{'path (one generation)':<28}{'prefill tok/s':>15}{'decode tok/s':>14}")
    for name, row in (("quantized (Q4_1)", quantized), (f"fast ({fast['weights']})", fast)):
        print(
            f"{name[:27]:<28}{row['prefill_tokens_per_second']:>15.1f}"
            f"{row['decode_tokens_per_second']:>14.1f}"
        )
    if latencies:
        print(
            f"Stop during a {fast['prompt_tokens']}-token prefill, asked at tokens "
            f"{', '.join(str(int(stop['at_token'])) for stop in stops)}: p50 "
            f"{figures['stop_latency_p50_s']:.3f} s, max {figures['stop_latency_max_s']:.3f} s"
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
