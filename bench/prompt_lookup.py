"""Decode speed with prompt lookup versus without, on an agent's edit, rewrite and prose turns.

The conversation is a real one: the agent loop runs over a temporary project holding a real
module (the first lines of the standard library's `textwrap.py`), a scripted first turn reads
it, and the messages the model is given next are kept. On them the model decodes, from the
opening of the action onwards, an edit (`{"tool":"edit_file","path":…,"old":"class …`, the
`old` text begun at the module's class line), a rewrite (`{"tool":"write_file","path":…,
"content":"` and the module's first line), and, in a conversation with nothing to copy, a
prose answer (`{"final":"`). Each is decoded greedily under the action grammar, as the MLX loop
decodes, once with `mlx_lm.stream_generate` and once with prompt lookup, in pairs, alternating
which goes first; the speedup is the median of the pairs' decode-rate ratios (prefill
excluded: the rate counts from the first token). `--model` takes a model folder (default: the
random-weight benchmark model, which copies nothing, so only its prose figure and the identity
mean much); `--quick` runs the small test model briefly. Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from blas import use_openblas
from workload import bench_model_dir, median_ratio

MODULE = "textwrap_head.py"
GOAL_EDIT = f"Read {MODULE}, then improve its docstrings."
GOAL_PROSE = "In a paragraph, tell me why small, reviewed changes are safer than large ones."


def openings(text: str) -> dict[str, str]:
    """Each action's opening: an edit starts its `old` text with the module's class line and
    the two after it (the docstring it is asked to improve), a rewrite its `content` at the
    module's first line (as the model has chosen them, the rest is its to write); a prose
    answer just opens."""
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith("class ")), len(lines) // 2)
    target = "".join(lines[at : at + 3])
    return {
        "edit": f'{{"tool":"edit_file","path":"{MODULE}","old":"{json.dumps(target)[1:-1]}',
        "rewrite": f'{{"tool":"write_file","path":"{MODULE}","content":"'
        + json.dumps(lines[0])[1:-1],
        "prose": '{"final":"',
    }


def module_text(lines: int) -> str:
    source = Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py"
    return "".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


def conversation(goal: str, text: str, reads: bool) -> list[dict[str, str]]:
    """The messages the loop gives the model for `goal`: after reading the module, or first."""
    from counterfoil import ToolPolicy, Workspace, run_agent
    from counterfoil.gate.workspace_setup import WorkspaceSetup

    script = [json.dumps({"tool": "read_file", "path": MODULE})] if reads else []
    script.append('{"final":"done"}')
    seen: list[list[dict[str, str]]] = []

    def model(messages: list[dict[str, str]]) -> str:
        seen.append([dict(message) for message in messages])
        return script[len(seen) - 1]

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / MODULE).write_text(text, encoding="utf-8")
        workspace = Workspace(
            ToolPolicy(root, allow_writes=True),
            setup=WorkspaceSetup(confirm_proposal=lambda _: True),
        )
        run_agent(goal, model, workspace)
    return seen[-1]


class Decoder:
    """Greedy, constrained decoding of one action's continuation, with or without lookup."""

    def __init__(self, spec: str) -> None:
        from counterfoil.models.mlx.mlx import load_model

        self.loaded = load_model(spec)
        self.grammar = self.loaded.action_grammar(None, ())

    def prompt(self, messages: list[dict[str, str]], opening: str) -> tuple[list[int], int]:
        """The prompt with the action's opening after it, and where the opening starts."""
        tokenizer = self.loaded.tokenizer
        tokens = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, enable_thinking=False
        )
        tokens = [int(token) for token in tokens]
        return tokens + tokenizer.encode(opening, add_special_tokens=False), len(tokens)

    def text(self, tokens: list[int]) -> str:
        return str(self.loaded.tokenizer.decode(tokens))

    def sources(self, messages: list[dict[str, str]]) -> list[list[int]]:
        """The messages as tokens inside a JSON string, as the MLX loop gives lookup them."""
        from counterfoil.models.mlx.prompt_lookup import json_string_sources

        tokenizer = self.loaded.tokenizer
        return json_string_sources(
            lambda text: list(tokenizer.encode(text, add_special_tokens=False)),
            [message["content"] for message in messages],
        )

    def verify_cost(self, prompt: list[int], drafted: int) -> float:
        """One forward pass over the last token and `drafted` more, over one decode step
        (medians, after `prompt`): what verifying a draft costs in decode steps."""
        import mlx.core as mx
        from mlx_lm.models.cache import make_prompt_cache, trim_prompt_cache

        model = self.loaded.model
        cache = make_prompt_cache(model)
        mx.eval(model(mx.array(prompt[:-1], dtype=mx.uint32)[None], cache=cache))
        seconds: dict[int, list[float]] = {1: [], drafted + 1: []}
        for _ in range(5):
            for width, times in seconds.items():
                started = time.perf_counter()
                mx.eval(model(mx.array(prompt[-width:], dtype=mx.uint32)[None], cache=cache))
                times.append(time.perf_counter() - started)
                trim_prompt_cache(cache, width)
        return statistics.median(seconds[drafted + 1]) / statistics.median(seconds[1])

    def decode(
        self,
        prompt: list[int],
        opening_at: int,
        max_tokens: int,
        lookup: bool,
        sources: list[list[int]],
    ) -> tuple[list[int], float, Any]:
        """The tokens, the decode rate (tokens/s after the first) and lookup's counts."""
        import mlx.core as mx
        from mlx_lm import stream_generate
        from mlx_lm.models.cache import make_prompt_cache
        from mlx_lm.sample_utils import make_sampler

        from counterfoil.models.mlx.prompt_lookup import LookupStats, stream_generate_with_lookup

        loaded = self.loaded
        constraint = self.grammar.processor(len(prompt) - opening_at + max_tokens)
        # Its first call fixes the prompt's length: the opening is then fed to the grammar as
        # already generated, so decoding continues inside the action.
        constraint(mx.array(prompt[:opening_at]), mx.zeros((1, self.grammar.vocab_size)))
        stats = LookupStats()
        generate = (
            stream_generate_with_lookup(prompt, stats, sources=sources)
            if lookup
            else stream_generate
        )
        tokens: list[int] = []
        first = 0.0
        for response in generate(
            loaded.model,
            loaded.tokenizer,
            mx.array(prompt),
            max_tokens=max_tokens,
            sampler=make_sampler(temp=0.0),
            logits_processors=[constraint],
            prompt_cache=make_prompt_cache(loaded.model),
        ):
            if not tokens:
                first = time.perf_counter()
            tokens.append(int(response.token))
        rate = (len(tokens) - 1) / max(time.perf_counter() - first, 1e-9)
        return tokens, rate, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model folder (default: the benchmark model)")
    parser.add_argument("--quick", action="store_true", help="the small test model, briefly")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=None)
    arguments = parser.parse_args()
    blas = use_openblas()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from counterfoil.testing.tiny_model import cached_tiny_model

    if arguments.model:
        spec = arguments.model
    elif arguments.quick:
        spec = str(cached_tiny_model(seed=3))
    else:
        spec = str(bench_model_dir())
    rounds = arguments.rounds or (1 if arguments.quick else 3)
    max_tokens = arguments.max_tokens or (24 if arguments.quick else 200)
    lines = 12 if arguments.quick else 60

    decoder = Decoder(spec)
    text = module_text(lines)
    after_read = conversation(GOAL_EDIT, text, reads=True)
    opening = openings(text)
    first = conversation(GOAL_PROSE, text, reads=False)
    cases = {
        "edit": (*decoder.prompt(after_read, opening["edit"]), decoder.sources(after_read)),
        "rewrite": (*decoder.prompt(after_read, opening["rewrite"]), decoder.sources(after_read)),
        "prose": (*decoder.prompt(first, opening["prose"]), decoder.sources(first)),
    }
    print(
        f"model {Path(spec).name}; {blas}; {rounds} rounds of {max_tokens} tokens; load "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'case':<8} {'prompt':>6} {'tokens':>6} {'plain tok/s':>11} {'lookup tok/s':>12} "
        f"{'speedup':>7} {'accepted':>8} {'identical':>9}"
    )
    figures: dict[str, Any] = {"model": Path(spec).name, "blas": blas, "max_tokens": max_tokens}
    identical = True
    drafted = accepted = 0
    for name, (prompt, opening_at, sources) in cases.items():
        plain_rates: list[float] = []
        lookup_rates: list[float] = []
        same = True
        count = 0
        plain_tokens: list[int] = []
        case_drafted = case_accepted = passes = plain_steps = 0
        for round_number in range(rounds):
            order = (False, True) if round_number % 2 == 0 else (True, False)
            results = {
                lookup: decoder.decode(prompt, opening_at, max_tokens, lookup, sources)
                for lookup in order
            }
            (plain, plain_rate, _), (ours, our_rate, stats) = results[False], results[True]
            same = same and plain == ours
            count, plain_tokens = len(plain), plain
            plain_rates.append(plain_rate)
            lookup_rates.append(our_rate)
            case_drafted += stats.drafted
            case_accepted += stats.accepted
            passes, plain_steps = stats.verify_passes, stats.plain_steps
        speedup = median_ratio(lookup_rates, plain_rates)
        acceptance = case_accepted / case_drafted if case_drafted else 0.0
        identical = identical and same
        drafted += case_drafted
        accepted += case_accepted
        print(
            f"{name:<8} {len(prompt):>6} {count:>6} {statistics.median(plain_rates):>11.1f} "
            f"{statistics.median(lookup_rates):>12.1f} {speedup:>6.2f}x {acceptance:>8.2f} "
            f"{str(same).lower():>9}"
        )
        print(f"         {decoder.text(plain_tokens)[:100]!r}")
        figures.update(
            {
                f"{name}_speedup": round(speedup, 2),
                f"{name}_plain_tokens_per_second": round(statistics.median(plain_rates), 1),
                f"{name}_lookup_tokens_per_second": round(statistics.median(lookup_rates), 1),
                f"{name}_acceptance": round(acceptance, 3),
                f"{name}_tokens": count,
                f"{name}_verify_passes": passes,
                f"{name}_plain_steps": plain_steps,
            }
        )
    figures["acceptance"] = round(accepted / drafted, 3) if drafted else 0.0
    figures["verify_8_drafted_in_decode_steps"] = round(decoder.verify_cost(cases["edit"][0], 8), 2)
    print(
        "one verify pass over 8 drafted tokens costs "
        f"{figures['verify_8_drafted_in_decode_steps']} decode steps"
    )
    figures["identical"] = identical
    print(json.dumps(figures))
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
