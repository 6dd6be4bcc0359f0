"""Where the wait before the first streamed token goes on the llama.cpp engine.

Counterfoil's client timed a 12 s stall before the first token on prompts that llama.cpp's
own log prefilled at 85 tokens/s. This sends the same kind of request the agent sends (its
system prompt and a task, streamed, `cache_prompt`, `return_progress`) to the engine's server
and times, at the client: the request's first byte back, the first prefill-progress event,
the first content token; and reads llama.cpp's own `timings` (prompt tokens and milliseconds,
tokens served from the cache) from the last chunk. Each request is sent with the action schema
(`response_format`, compiled by llama.cpp to a grammar) and without, on a cold prompt and on
the same prompt again (the cache warm). The stall is the time to the first token less
llama.cpp's prompt time. Prints a table, then one JSON line.

`--model FILE.gguf` (default: the coder model's file, `python -m counterfoil.testing.coder_model`);
`--quick` sends a short prompt once each way to the test suite's tiny GGUF.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from counterfoil.models import GenerationOptions, close_model, load_generate
from counterfoil.models.options import LlamaCppOptions
from workload import QUICK, sized

REPEATS = sized(2, 1)
PACKAGE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "evals" / "tuning" / "pages-round-up"
)


def agent_messages(folder: Path, padding: int) -> list[dict[str, str]]:
    """A run's first turn on the tuning package `pages-round-up`: the agent's own system
    prompt for its staged workspace (with `padding` more files in it, for a longer prompt)."""
    from counterfoil.context.prompt import build_system_prompt
    from counterfoil.evals.package import load_package, stage_workspace
    from counterfoil.evals.runner import package_workspace
    from counterfoil.receipts import ReceiptStore

    package = load_package(PACKAGE)
    folder.mkdir()
    root = folder / "workspace"
    stage_workspace(package, root)
    for number in range(padding):
        (root / f"module_{number:03}.py").write_text(f"VALUE_{number} = {number}\n")
    workspace = package_workspace(package, root, ReceiptStore(folder / "receipts.jsonl"))
    return [
        {"role": "system", "content": build_system_prompt(workspace)},
        {"role": "user", "content": package.prompt},
    ]


def timed_request(generate: Any, body: dict[str, Any]) -> dict[str, Any]:
    """One streamed request: client times (seconds from sending) and llama.cpp's own timings."""
    import httpx

    url = f"{generate.server.url}/chat/completions"
    headers = {"Authorization": f"Bearer {generate.server.key}"}
    times: dict[str, Any] = {"first_byte": None, "first_progress": None, "first_token": None}
    timings: dict[str, Any] = {}
    started = time.perf_counter()
    with (
        httpx.Client(timeout=None) as client,
        client.stream("POST", url, json=body, headers=headers) as response,
    ):
        for line in response.iter_lines():
            now = time.perf_counter() - started
            if times["first_byte"] is None:
                times["first_byte"] = now
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[len("data: ") :])
            if "prompt_progress" in chunk and times["first_progress"] is None:
                times["first_progress"] = now
            for choice in chunk.get("choices") or []:
                if (choice.get("delta") or {}).get("content") and times["first_token"] is None:
                    times["first_token"] = now
            timings = chunk.get("timings") or timings
    times["total"] = time.perf_counter() - started
    times["prompt_tokens"] = timings.get("prompt_n")
    times["cached_tokens"] = timings.get("cache_n")
    times["prompt_seconds"] = (timings.get("prompt_ms") or 0) / 1000
    times["decode_seconds"] = (timings.get("predicted_ms") or 0) / 1000
    times["decoded_tokens"] = timings.get("predicted_n")
    first = times["first_token"] or times["total"]
    times["stall"] = round(first - times["prompt_seconds"], 3)
    return {
        key: round(value, 3) if isinstance(value, float) else value for key, value in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp's threads")
    parser.add_argument("--padding", type=int, default=40, help="files added to the overview")
    arguments = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()
    if arguments.model:
        spec = arguments.model
    elif QUICK:
        from counterfoil.testing.tiny_gguf import build_tiny_gguf

        spec = str(
            build_tiny_gguf(Path(scratch.name) / "tiny.gguf", vocab_size=600, corpus_bytes=50_000)
        )
    else:
        from counterfoil.testing.coder_model import default_location

        spec = str(default_location())
    options = GenerationOptions(
        max_tokens=sized(48, 8),
        llama_cpp=LlamaCppOptions(context_tokens=4096, threads=arguments.threads),
    )
    generate: Any = load_generate(spec, options)
    rows = []
    try:
        generate.configure_tools(
            {"read_file", "edit_file", "run_command"}, [["python3", "test_paging.py"]]
        )
        for padding in (arguments.padding if not QUICK else 2,):
            for schema in (True, False):
                messages = agent_messages(Path(scratch.name) / str(schema), padding)
                marker = f"[{'schema' if schema else 'free'}]\n"  # a cold prompt each way
                messages[0]["content"] = marker + messages[0]["content"]
                body = generate.request_body(messages)
                if not schema:
                    body.pop("response_format", None)
                for attempt in range(REPEATS):
                    row = timed_request(generate, body)
                    row.update(schema=schema, cache="warm" if attempt else "cold")
                    rows.append(row)
    finally:
        close_model(generate)
        scratch.cleanup()
    print(
        f"{'schema':<7} {'cache':<5} {'prompt':>6} {'cached':>6} {'byte':>6} {'progress':>8} "
        f"{'token':>6} {'prefill':>8} {'stall':>6}"
    )
    for row in rows:
        print(
            f"{row['schema']!s:<7} {row['cache']:<5} {row['prompt_tokens'] or 0:>6} "
            f"{row['cached_tokens'] or 0:>6} {row['first_byte'] or 0:>6.2f} "
            f"{row['first_progress'] or 0:>8.2f} {row['first_token'] or 0:>6.2f} "
            f"{row['prompt_seconds']:>8.2f} {row['stall']:>6.2f}"
        )
    print(
        json.dumps(
            {
                "bench": "first_token",
                "model": spec,
                "rows": rows,
                "median_stall": statistics.median(row["stall"] for row in rows),
            }
        )
    )


if __name__ == "__main__":
    main()
