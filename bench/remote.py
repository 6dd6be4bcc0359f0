"""Counterfoil's remote generate versus a bare streaming client on the same local server.

One `mlx_lm.server` on 127.0.0.1 serves the offline tiny model (seed 3). A 12-turn agent
conversation (Counterfoil's real system prompt, 40 generated tokens and a 520-character tool
result a turn) is sent turn by turn to both clients with identical request bodies (schema
included); each turn runs each client REPEATS times, interleaved and alternating which goes
first, and keeps the fastest of each (the run least disturbed by other load on the machine).
The bare client is httpx streaming the same request and joining the content deltas, nothing
else; Counterfoil adds its callbacks, progress reports, stats and the schema check. Greedy
responses must be identical. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import os
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from workload import sized

TURNS = sized(12, 2)
REPEATS = sized(5, 1)
GENERATED_TOKENS = sized(40, 8)
TOOL_RESULT_CHARS = 520


def tool_results() -> list[str]:
    source = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"
    text = source.read_text(encoding="utf-8")
    return [text[i * TOOL_RESULT_CHARS : (i + 1) * TOOL_RESULT_CHARS] for i in range(TURNS)]


def system_prompt() -> tuple[str, frozenset[str]]:
    from counterfoil import ToolPolicy, Workspace, build_system_prompt

    with tempfile.TemporaryDirectory() as root:
        workspace = Workspace(ToolPolicy(Path(root)))
        return build_system_prompt(workspace), workspace.available_tools


def bare_generate(client: Any, url: str, body: dict[str, Any]) -> tuple[str, float, float]:
    """(text, seconds, seconds to the first content) with nothing but httpx and json."""
    started = time.perf_counter()
    first = None
    pieces: list[str] = []
    with client.stream("POST", f"{url}/chat/completions", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            for choice in json.loads(data).get("choices") or ():
                content = (choice.get("delta") or {}).get("content")
                if content:
                    if first is None:
                        first = time.perf_counter()
                    pieces.append(content)
    end = time.perf_counter()
    return "".join(pieces).strip(), end - started, (first or end) - started


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    import httpx

    from counterfoil.models.server.remote import RemoteGenerate
    from counterfoil.testing.local_mlx_server import serving_mlx_model
    from counterfoil.testing.tiny_model import cached_tiny_model

    model_dir = cached_tiny_model(seed=3)
    with serving_mlx_model(model_dir) as url:
        system, tools = system_prompt()
        tokens: list[str] = []
        counterfoil = RemoteGenerate(
            url,
            str(model_dir),
            max_tokens=GENERATED_TOKENS,
            available_tools=tools,
            on_progress=lambda progress: tokens.append(progress.text),
        )
        bare = httpx.Client(timeout=120)
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": "Change the greeting to Welcome and validate."},
        ]
        counterfoil(messages)  # warm both paths and the server once
        bare_generate(bare, url, counterfoil.request_body(messages))
        rows = []
        for turn, result in enumerate(tool_results(), start=1):
            body = counterfoil.request_body(messages)
            ours: list[tuple[float, float]] = []
            theirs: list[tuple[float, float]] = []
            for repeat in range(REPEATS):
                order = ("bare", "ours") if (turn + repeat) % 2 else ("ours", "bare")
                for name in order:
                    if name == "bare":
                        text, seconds, first = bare_generate(bare, url, body)
                        theirs.append((seconds, first))
                    else:
                        started = time.perf_counter()
                        response = counterfoil(messages)
                        seconds = time.perf_counter() - started
                        ours.append((seconds, counterfoil.stats[-1].first_token_seconds or 0.0))
                if response != text:
                    raise SystemExit(f"turn {turn}: responses differ: {response!r} vs {text!r}")
            stats = counterfoil.stats[-1]
            rows.append(
                {
                    "turn": turn,
                    "prompt_tokens": stats.prompt_tokens,
                    "cached_tokens": stats.cached_tokens,
                    "bare_seconds": min(s for s, _ in theirs),
                    "counterfoil_seconds": min(s for s, _ in ours),
                    "bare_first_token_seconds": min(f for _, f in theirs),
                    "counterfoil_first_token_seconds": min(f for _, f in ours),
                }
            )
            messages = [
                *messages,
                {"role": "assistant", "content": response},
                {"role": "user", "content": "Tool result:\n" + result},
            ]

    print(
        f"server: mlx_lm.server at {url}, model {model_dir.name}; {TURNS} turns x "
        f"{REPEATS} repeats, {GENERATED_TOKENS} tokens a turn, fastest of the repeats per turn"
    )
    print(
        f"{'turn':>4} {'prompt':>7} {'cached':>7} {'bare s':>8} {'ours s':>8} {'ratio':>6} "
        f"{'bare ttft':>10} {'ours ttft':>10}"
    )
    for row in rows:
        ratio = row["counterfoil_seconds"] / row["bare_seconds"]
        print(
            f"{row['turn']:>4} {row['prompt_tokens']:>7} {row['cached_tokens']:>7} "
            f"{row['bare_seconds']:>8.4f} {row['counterfoil_seconds']:>8.4f} {ratio:>6.3f} "
            f"{row['bare_first_token_seconds']:>10.4f} "
            f"{row['counterfoil_first_token_seconds']:>10.4f}"
        )
    ratios = [row["counterfoil_seconds"] / row["bare_seconds"] for row in rows]
    figures = {
        "turns": TURNS,
        "repeats": REPEATS,
        "generated_tokens": GENERATED_TOKENS,
        "median_ratio_per_turn": round(statistics.median(ratios), 4),
        "max_ratio_per_turn": round(max(ratios), 4),
        "total_ratio": round(
            sum(r["counterfoil_seconds"] for r in rows) / sum(r["bare_seconds"] for r in rows), 4
        ),
        "median_bare_seconds": round(statistics.median(r["bare_seconds"] for r in rows), 4),
        "median_counterfoil_seconds": round(
            statistics.median(r["counterfoil_seconds"] for r in rows), 4
        ),
        "median_bare_first_token_seconds": round(
            statistics.median(r["bare_first_token_seconds"] for r in rows), 4
        ),
        "median_counterfoil_first_token_seconds": round(
            statistics.median(r["counterfoil_first_token_seconds"] for r in rows), 4
        ),
        "cached_tokens_last_turn": rows[-1]["cached_tokens"],
        "prompt_tokens_last_turn": rows[-1]["prompt_tokens"],
    }
    print(
        f"median ratio per turn {figures['median_ratio_per_turn']:.3f} "
        f"(target <= 1.05), total {figures['total_ratio']:.3f}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
