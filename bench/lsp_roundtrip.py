"""What the daemon adds to an approval: stdio round trips against the same cycle in-process.

Measures, in one run:
  * server start to the `initialize` result (a fresh `python -m counterfoil.lsp`, median of 3);
  * N approve-edit cycles over stdio: the client gets `counterfoil/confirm`, answers
    `{"approved": true}`, the daemon writes the file and appends the receipt, the client gets
    `counterfoil/receipt` (p50/p99), plus the period between receipts (the whole agent step);
  * the same N cycles in-process: `confirm_proposal` asked, approves, effect done, receipt
    subscriber called (p50/p99);
  * with the tiny random-weight MLX model (skipped without MLX): how long after
    `$/cancelRequest` the daemon reports `counterfoil/runState {state: "cancelled"}` while the
    model is generating (p50, max over --cancels runs, against Stop's 0.5 s target), and the
    tokens a follow-up turn prefills against the same turn run fresh (no prompt cache), through
    `run_agent` and the daemon's MLX generate;
and prints a table, then one final line holding a JSON object of the figures.

    python bench/lsp_roundtrip.py [--cycles 200] [--cancels 10]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.proposals import ToolProposal
from counterfoil.receipts import EffectReceipt

SERVER = [sys.executable, "-m", "counterfoil.lsp", "--log-level", "WARNING"]
TARGET = "counter.txt"
CANCEL_TARGET_MS = 500  # Stop's target: the tests hold only that a stop ends the run at once


class StdioClient:
    """Just enough JSON-RPC over pipes to drive the daemon without a framework in the way."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._in: IO[bytes] = process.stdout
        self._out: IO[bytes] = process.stdin

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self._out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        length = 0
        while True:
            line = self._in.readline()
            if not line:
                raise EOFError("the daemon closed its output")
            if not line.strip():
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self._in.read(length))
        return message

    def answer(self, message: dict[str, Any], result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        """Send a request and answer whatever the daemon asks until its result arrives."""
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                self.answer(message, None)


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def initialize_params(root: Path, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "processId": None,
        "capabilities": {"window": {"workDoneProgress": True}},
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "initializationOptions": options,
    }


def start(root: Path, options: dict[str, Any]) -> tuple[StdioClient, float]:
    """Start a daemon; returns it with the seconds from spawn to the initialize result."""
    started = time.perf_counter()
    process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    client = StdioClient(process)
    reply = client.request(1, "initialize", initialize_params(root, options))
    elapsed = time.perf_counter() - started
    assert "result" in reply, reply
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return client, elapsed


def stop(client: StdioClient) -> None:
    client.request(999_999, "shutdown", None)
    client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
    client.process.wait(timeout=30)


def write_actions(cycles: int) -> list[dict[str, Any]]:
    return [{"tool": "write_file", "path": TARGET, "content": f"{n}\n"} for n in range(cycles)]


def bench_stdio(
    root: Path, cycles: int, startups_measured: int = 3
) -> tuple[list[float], list[float], list[float]]:
    script = root.parent / "script.jsonl"
    responses = [{"tool": "read_file", "path": TARGET}, *write_actions(cycles), {"final": "done"}]
    script.write_text("".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8")
    options = {"model": f"scripted:{script}", "allowWrites": True, "maxSteps": cycles + 2}
    startups: list[float] = []
    for _ in range(startups_measured - 1):
        extra, elapsed = start(root, options)
        startups.append(elapsed)
        stop(extra)
    client, elapsed = start(root, options)
    startups.append(elapsed)

    cycle_times: list[float] = []
    receipt_times: list[float] = []
    asked_at: float | None = None
    client.send(
        {"jsonrpc": "2.0", "id": 2, "method": "counterfoil/run", "params": {"goal": "count"}}
    )
    while True:
        message = client.receive()
        method = message.get("method")
        if method == "counterfoil/confirm":
            asked_at = time.perf_counter()
            client.answer(message, {"approved": True})
        elif method == "counterfoil/receipt":
            now = time.perf_counter()
            assert asked_at is not None
            cycle_times.append(now - asked_at)
            receipt_times.append(now)
            asked_at = None
        elif method is not None and "id" in message:
            client.answer(message, None)
        elif message.get("id") == 2:
            result = message["result"]
            assert result["reason"] == "completed", result
            break
    stop(client)
    periods = [later - earlier for earlier, later in itertools.pairwise(receipt_times)]
    return startups, cycle_times, periods


def bench_in_process(root: Path, cycles: int) -> list[float]:
    store = ReceiptStore(root / ".counterfoil-inprocess.jsonl")
    asked: list[float] = []
    done: list[float] = []

    def approve(proposal: ToolProposal) -> bool:
        asked.append(time.perf_counter())
        return True

    def on_receipt(receipt: EffectReceipt) -> None:
        done.append(time.perf_counter())

    store.subscribe(on_receipt)
    workspace = Workspace(
        ToolPolicy(root=root, allow_writes=True),
        receipt_store=store,
        setup=WorkspaceSetup(confirm_proposal=approve),
    )
    workspace.read_file(TARGET)
    for action in write_actions(cycles):
        arguments = {key: value for key, value in action.items() if key != "tool"}
        result = workspace.execute(ToolAction("write_file", arguments))
        assert result == f"wrote {TARGET}", result
    return [end - begin for begin, end in zip(asked, done, strict=True)]


def bench_cancel(root: Path, model_dir: Path, repeats: int) -> tuple[list[float], dict[str, int]]:
    """Seconds from `$/cancelRequest` to `runState: cancelled`, the model generating each time;
    and how many `counterfoil/modelText` notifications carried how many tokens."""
    options = {"model": str(model_dir), "constrainedDecoding": False, "maxTokens": 200_000}
    client, _ = start(root, options)
    latencies: list[float] = []
    streamed = {"notifications": 0, "tokens": 0}
    for run in range(repeats):
        run_id = 100 + run
        client.send(
            {"jsonrpc": "2.0", "id": run_id, "method": "counterfoil/run", "params": {"goal": "go"}}
        )
        asked_at: float | None = None
        generated = 0
        while True:
            message = client.receive()
            method, params = message.get("method"), message.get("params") or {}
            if method is not None and "id" in message:
                client.answer(message, None)
            elif method == "counterfoil/modelText":
                streamed["notifications"] += 1
            elif (
                method == "counterfoil/modelState"
                and asked_at is None
                and params.get("state") == "generating"
                and params.get("tokens", 0) >= 5
            ):
                client.send(
                    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": run_id}}
                )
                asked_at = time.perf_counter()
            elif method == "counterfoil/runState" and params.get("state") == "cancelled":
                assert asked_at is not None
                latencies.append(time.perf_counter() - asked_at)
            if method == "counterfoil/modelState" and params.get("state") == "generating":
                generated = max(generated, params.get("tokens") or 0)
            elif message.get("id") == run_id:
                assert message["result"]["reason"] == "cancelled", message
                streamed["tokens"] += generated
                break
    stop(client)
    return latencies, streamed


def bench_follow_up_prefill(root: Path, model_dir: Path) -> dict[str, int]:
    """A follow-up turn's prefilled tokens against its whole prompt (what a fresh run prefills)."""
    from counterfoil.loop import AgentLimits, run_agent
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate

    generate = load_generate(str(model_dir), GenerationOptions(max_tokens=16))
    assert isinstance(generate, MLXGenerate)
    workspace = Workspace(ToolPolicy(root=root))
    messages: list[dict[str, str]] = []
    limits = AgentLimits(max_steps=1)
    run_agent(
        "Look around the project and say what it does.",
        generate,
        workspace,
        limits,
        messages=messages,
    )
    run_agent("Now say which file to change first.", generate, workspace, limits, messages=messages)
    follow_up = generate.stats[-1]
    return {"prefilled": follow_up.prefilled_tokens, "fresh": follow_up.prompt_tokens}


def tiny_model(base: Path) -> Path | None:
    try:
        import mlx.core  # noqa: F401
        import mlx_lm  # noqa: F401
    except ImportError:
        return None
    from counterfoil.testing.tiny_model import cached_tiny_model

    return cached_tiny_model(seed=3)


def milliseconds(seconds: float) -> float:
    return round(seconds * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--cancels", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="10 cycles, 2 cancels, 1 start")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.cycles, arguments.cancels = 10, 2
    cycles = arguments.cycles
    base = Path(tempfile.mkdtemp(prefix="counterfoil-bench-"))
    cancels: list[float] = []
    streamed = {"notifications": 0, "tokens": 0}
    prefill: dict[str, int] | None = None
    try:
        stdio_root = base / "stdio"
        local_root = base / "in-process"
        model_root = base / "model-project"
        for root in (stdio_root, local_root, model_root):
            root.mkdir()
            (root / TARGET).write_text("start\n", encoding="utf-8")
        startups, stdio, periods = bench_stdio(stdio_root, cycles, 1 if arguments.quick else 3)
        local = bench_in_process(local_root, cycles)
        model_dir = tiny_model(base)
        if model_dir is not None:
            cancels, streamed = bench_cancel(model_root, model_dir, arguments.cancels)
            prefill = bench_follow_up_prefill(model_root, model_dir)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    figures = {
        "cycles": cycles,
        "startup_to_initialize_ms": milliseconds(statistics.median(startups)),
        "startup_samples_ms": [milliseconds(s) for s in startups],
        "stdio_p50_ms": milliseconds(percentile(stdio, 0.50)),
        "stdio_p99_ms": milliseconds(percentile(stdio, 0.99)),
        "stdio_step_p50_ms": milliseconds(percentile(periods, 0.50)),
        "in_process_p50_ms": milliseconds(percentile(local, 0.50)),
        "in_process_p99_ms": milliseconds(percentile(local, 0.99)),
    }
    figures["ratio_p50"] = round(figures["stdio_p50_ms"] / figures["in_process_p50_ms"], 2)
    figures["ratio_p99"] = round(figures["stdio_p99_ms"] / figures["in_process_p99_ms"], 2)
    if cancels:
        figures["cancel_runs"] = len(cancels)
        figures["cancel_p50_ms"] = milliseconds(percentile(cancels, 0.50))
        figures["cancel_max_ms"] = milliseconds(max(cancels))
        figures["cancel_target_ms"] = CANCEL_TARGET_MS
        figures["cancel_within_target"] = figures["cancel_max_ms"] <= CANCEL_TARGET_MS
        figures["model_text_notifications"] = streamed["notifications"]
        figures["model_text_tokens"] = streamed["tokens"]
    if prefill is not None:
        figures["follow_up_prefilled_tokens"] = prefill["prefilled"]
        figures["fresh_prefilled_tokens"] = prefill["fresh"]
        figures["follow_up_prefill_ratio"] = round(prefill["prefilled"] / prefill["fresh"], 3)

    rows = [
        (
            f"server start -> initialize result (median of {len(startups)})",
            figures["startup_to_initialize_ms"],
            "",
        ),
        ("approve-edit cycle over stdio", figures["stdio_p50_ms"], figures["stdio_p99_ms"]),
        ("whole agent step over stdio (receipt to receipt)", figures["stdio_step_p50_ms"], ""),
        (
            "approve-edit cycle in-process",
            figures["in_process_p50_ms"],
            figures["in_process_p99_ms"],
        ),
        ("stdio / in-process", figures["ratio_p50"], figures["ratio_p99"]),
    ]
    print(f"{cycles} approve-edit cycles (confirm -> effect -> receipt)")
    print(f"{'':50} {'p50 ms':>10} {'p99 ms':>10}")
    for label, p50, p99 in rows:
        print(f"{label:50} {p50:>10} {p99!s:>10}")
    if cancels:
        print(
            f"{'cancel -> cancelled while generating (tiny model)':50} "
            f"{figures['cancel_p50_ms']:>10} {'max ' + str(figures['cancel_max_ms']):>10}"
        )
        met = "met in every run" if figures["cancel_within_target"] else "NOT met"
        print(f"target: cancelled within {CANCEL_TARGET_MS} ms of the request: {met}")
        print(
            f"streamed text: {streamed['notifications']} modelText notifications for "
            f"{streamed['tokens']} generated tokens (batched every 50 ms)"
        )
    else:
        print("cancel latency: skipped (MLX is not installed)")
    if prefill is not None:
        print(
            f"follow-up turn prefills {prefill['prefilled']} tokens; the same turn fresh "
            f"prefills {prefill['fresh']} (ratio {figures['follow_up_prefill_ratio']})"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
