"""What the action grammar built from the workspace costs each turn.

A copy of a real package (this project's `gate/`, two dozen modules) as the workspace, one
module of it read whole and one listed folder: the view and the schema built from it
(`workspace_view` + `action_schema`, the core's part), then llguidance's compile of that schema
for a Qwen tokenizer (the grammar MLX decodes under, up to its first mask), each against the
schema of the tools alone. With `--model FILE.gguf` (default: Qwen2.5-Coder-1.5B where it is
installed) the same turn on llama.cpp, alternating the tools-only schema and the workspace's:
the first token's delay and the whole step, medians over pairs, and the share of a step the
grammar adds (build + first-token delta). `--edit-form diff`: the same with `patch_file`'s hunk
pattern in place of `edit_file`'s old-text runs. `--quick` (the test suite's) runs the core and
llguidance parts on the small test model's tokenizer, and no llama.cpp. Prints a table, then
one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from workload import QUICK, bench_model_dir, sized

REPEATS = sized(15, 2)
PAIRS = sized(4, 0)
WAIT_SECONDS = 1200.0  # the most one request may take here, the warm-up's prefill included
PROJECT = Path(__file__).resolve().parents[1] / "server" / "counterfoil" / "gate"
READ = "overview.py"
TASK = "Make Workspace.list_files refuse a path that is a file with the folder's name."


def median_ms(run: Any, repeats: int = REPEATS) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds) * 1000


def staged(folder: Path, edit_form: str = "replace") -> tuple[Any, Any, list[Any]]:
    """The workspace on a copy of the package, the overview, and the steps: a read, a listing
    (part of a file edited in `edit_form`)."""
    from counterfoil.actions import ToolAction
    from counterfoil.gate.policy import ToolPolicy
    from counterfoil.gate.workspace import Workspace

    shutil.copytree(PROJECT, folder / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    workspace = Workspace(ToolPolicy(folder, allow_writes=True, edit_form=edit_form))
    steps = []
    for action in (
        ToolAction("list_files", {"path": "gate"}),
        ToolAction("read_file", {"path": f"gate/{READ}"}),
    ):
        steps.append((action, workspace.execute_step(action)))
    return workspace, workspace.overview(), steps


def llama_cpp_turns(spec: str, workspace: Any, tree: Any, steps: list[Any]) -> dict[str, Any]:
    """Pairs of the same turn on llama.cpp, schema of the tools alone then the workspace's."""
    from counterfoil.context.prompt import build_system_prompt
    from counterfoil.context.shown_view import workspace_view
    from counterfoil.models import GenerationOptions, close_model, load_generate
    from counterfoil.models.options import LlamaCppOptions

    tools = workspace.available_tools
    options = GenerationOptions(
        max_tokens=160,
        available_tools=tools,
        llama_cpp=LlamaCppOptions(context_tokens=8192),
    )
    try:
        generate = load_generate(spec, options)
    except Exception as error:  # noqa: BLE001 - a bench reports what it could not run
        return {"error": str(error).splitlines()[0]}
    # The warm-up prefills a few thousand tokens: on a busy 2-core machine that took past the
    # engine's default limit (280 s) twice. The bench waits longer; the pairs are what it times.
    generate.timeout_seconds = max(generate.timeout_seconds, WAIT_SECONDS)
    messages = [
        {"role": "system", "content": build_system_prompt(workspace)},
        {"role": "user", "content": TASK},
    ]
    for action, step in steps:
        messages += [
            {"role": "assistant", "content": json.dumps({"tool": action.tool, **action.arguments})},
            {"role": "user", "content": "Tool result:\n" + step.observation},
        ]
    view = workspace_view(workspace, tree, steps)
    rows: dict[str, list[tuple[float, float, str]]] = {"tools": [], "workspace": []}
    try:
        generate.configure_tools(tools, ())
        generate(messages)  # warm-up: the prompt's prefill, cached for the pairs
    except Exception as error:  # noqa: BLE001 - a loaded machine may not answer in time
        close_model(generate)
        return {"error": str(error).splitlines()[0]}
    try:
        for _ in range(PAIRS):
            for name, shown in (("tools", None), ("workspace", view)):
                generate.configure_tools(tools, (), view=shown)
                text = generate(messages)
                stats = generate.stats[-1]
                rows[name].append((stats.first_token_seconds or 0.0, stats.seconds, text))
    finally:
        close_model(generate)
    first = {name: statistics.median(row[0] for row in rows[name]) for name in rows}
    step = {name: statistics.median(row[1] for row in rows[name]) for name in rows}
    return {
        "first_token_seconds": {name: round(value, 3) for name, value in first.items()},
        "step_seconds": {name: round(value, 3) for name, value in step.items()},
        "first_token_delta_seconds": round(first["workspace"] - first["tools"], 3),
        "actions": {name: rows[name][-1][2] for name in rows},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF file for the llama.cpp turns")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--edit-form", default="replace", choices=("replace", "diff"), help="editForm"
    )
    arguments = parser.parse_args()
    from counterfoil.context.shown_view import workspace_view
    from counterfoil.tools import action_schema

    with tempfile.TemporaryDirectory() as scratch:
        workspace, tree, steps = staged(Path(scratch), arguments.edit_form)
        tools = workspace.available_tools
        view = workspace_view(workspace, tree, steps)
        schema = action_schema(tools, (), view=view)
        build_ms = median_ms(
            lambda: action_schema(tools, (), view=workspace_view(workspace, tree, steps))
        )
        plain_ms = median_ms(lambda: action_schema(tools, ()))
        runs = sum(
            len(branch["properties"]["old"].get("enum", ()))
            for branch in schema["anyOf"]
            if branch["properties"].get("tool") == {"const": "edit_file"}
        )
        hunk_bytes = sum(
            len(branch["properties"]["diff"].get("pattern", ""))
            for branch in schema["anyOf"]
            if branch["properties"].get("tool") == {"const": "patch_file"}
        )

        from mlx_lm.utils import load_tokenizer

        from counterfoil.models.mlx.constrained import ActionGrammar, llguidance_tokenizer

        model_dir = bench_model_dir()
        tokenizer = load_tokenizer(model_dir)
        vocab = int(json.loads((model_dir / "config.json").read_text())["vocab_size"])
        ll_tokenizer = llguidance_tokenizer(tokenizer, vocab)

        def compile_ms(shown: Any) -> float:
            from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

            def compile_once() -> None:
                grammar = ActionGrammar(
                    tokenizer, vocab, tools, (), ll_tokenizer=ll_tokenizer, view=shown
                )
                fill_next_token_bitmask(
                    grammar.processor(160)._matcher, allocate_token_bitmask(1, vocab)
                )

            return median_ms(compile_once, max(REPEATS // 3, 1))

        grammar_ms = {"tools": compile_ms(None), "workspace": compile_ms(view)}
        spec = arguments.model
        if spec is None and not QUICK:
            from counterfoil.testing.coder_model import default_location

            installed = default_location()
            spec = str(installed) if installed.exists() else None
        served = llama_cpp_turns(spec, workspace, tree, steps) if spec and PAIRS else None

    schema_bytes = len(json.dumps(schema))
    print(f"workspace: a copy of gate/ ({len(view.files)} names shown), {READ} read whole")
    print(
        f"schema ({arguments.edit_form}): {schema_bytes:,} bytes, {runs} old-text runs,"
        f" {hunk_bytes:,} bytes of hunk pattern"
    )
    print(f"build (view + schema): {build_ms:.2f} ms; tools alone {plain_ms:.2f} ms")
    print(
        f"llguidance compile to first mask ({vocab:,} tokens): workspace {grammar_ms['workspace']:.1f}"
        f" ms; tools alone {grammar_ms['tools']:.1f} ms"
    )
    figures: dict[str, Any] = {
        "bench": "workspace_grammar",
        "schema_bytes": schema_bytes,
        "edit_form": arguments.edit_form,
        "old_runs": runs,
        "hunk_pattern_bytes": hunk_bytes,
        "build_ms": round(build_ms, 3),
        "tools_only_build_ms": round(plain_ms, 3),
        "llguidance_compile_ms": {name: round(value, 2) for name, value in grammar_ms.items()},
        "vocab_size": vocab,
    }
    if served is not None:
        figures["llama_cpp"] = {"model": spec, **served}
        if "error" in served:
            print(f"llama.cpp: not run: {served['error']}")
        else:
            step = served["step_seconds"]["tools"]
            cost = build_ms / 1000 + served["first_token_delta_seconds"]
            figures["share_of_step"] = round(cost / step, 4)
            print(
                f"llama.cpp first token: tools {served['first_token_seconds']['tools']:.3f} s,"
                f" workspace {served['first_token_seconds']['workspace']:.3f} s; step"
                f" {step:.2f} s (workspace {served['step_seconds']['workspace']:.2f} s);"
                f" grammar's share of a step {cost / step:.1%}"
            )
            for name, text in served["actions"].items():
                print(f"  {name}: {text}", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
