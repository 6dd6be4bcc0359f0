"""`--engine llama.cpp` on SmolLM2's GGUF: a llama.cpp server started, asked, stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from counterfoil.actions import FinalAction, ToolAction, parse_action
from counterfoil.models import GenerationOptions, ModelLoadError, ModelProgress, load_generate
from counterfoil.models.errors import GenerationCancelled
from counterfoil.models.identity import identity_of
from counterfoil.models.llamacpp.llamacpp import LlamaCppGenerate
from counterfoil.models.options import LlamaCppOptions
from counterfoil.testing.smollm2 import require_smollm2

from .test_smollm2 import WRITE_GOAL

ENGINE = LlamaCppOptions(context_tokens=2048, threads=1)  # kind to a shared machine
TOOLS = frozenset({"read_file", "list_files"})
ASK = [
    {"role": "system", "content": "You are a coding agent. Reply with one JSON action."},
    {"role": "user", "content": "Say hello in plain words. Do not write JSON."},
]


@pytest.fixture(scope="module")
def gguf() -> str:
    return require_smollm2(modules=("xllamacpp", "httpx"))


@pytest.fixture(scope="module")
def engine(gguf: str) -> Iterator[tuple[LlamaCppGenerate, list[ModelProgress]]]:
    reports: list[ModelProgress] = []
    options = GenerationOptions(max_tokens=48, llama_cpp=ENGINE)
    generate = load_generate(gguf, options, on_progress=reports.append)
    assert isinstance(generate, LlamaCppGenerate)
    generate.configure_tools(TOOLS, ())
    yield generate, reports
    generate.close()


def test_an_answer_is_one_action_of_the_enabled_tools_even_when_asked_for_prose(
    engine: tuple[LlamaCppGenerate, list[ModelProgress]],
) -> None:
    generate, _ = engine
    action = parse_action(generate(ASK), TOOLS)
    assert isinstance(action, ToolAction | FinalAction)
    assert generate.stats[-1].finish_reason == "stop"


def test_the_prompt_cache_serves_a_repeated_prefix(
    engine: tuple[LlamaCppGenerate, list[ModelProgress]],
) -> None:
    generate, _ = engine
    generate(ASK)
    generate([*ASK, {"role": "assistant", "content": "{}"}, {"role": "user", "content": "Go."}])
    cached = generate.stats[-1].cached_tokens
    assert cached is not None and cached > 0


def test_loading_and_prefill_are_reported(
    engine: tuple[LlamaCppGenerate, list[ModelProgress]],
) -> None:
    generate, reports = engine
    generate([{"role": "user", "content": "List the files. " * 30}])
    assert any(report.state == "loading" for report in reports)
    prefill = [report for report in reports if report.prefill_total is not None]
    assert prefill and prefill[-1].prompt_tokens == prefill[-1].prefill_total


def test_the_identity_names_the_file_digest_and_the_engine(
    engine: tuple[LlamaCppGenerate, list[ModelProgress]], gguf: str
) -> None:
    from counterfoil.models.file_digest import file_sha256

    record = identity_of(engine[0], gguf).as_record()
    assert record["resolved"]["engine"] == "llama.cpp"
    assert record["resolved"]["gguf_sha256"] == file_sha256(gguf)
    assert record["chat_template_sha256"] and record["constrained"] is True


def test_a_stop_ends_the_response_at_once(gguf: str) -> None:
    # Before its 400 tokens; Stop's 0.5 s target is measured by the benches.
    tokens: list[int] = []

    def on_progress(report: ModelProgress) -> None:
        tokens.append(report.tokens)

    generate = load_generate(
        gguf,
        GenerationOptions(max_tokens=400, constrain=False, llama_cpp=ENGINE),
        on_progress=on_progress,
        should_stop=lambda: max(tokens, default=0) >= 2,
    )
    try:
        with pytest.raises(GenerationCancelled):
            generate([{"role": "user", "content": "Write a long story about a lighthouse."}])
        assert 2 <= max(tokens) < 400
        assert generate.stats == []
    finally:
        generate.close()


def test_closing_the_model_ends_the_server_process(gguf: str) -> None:
    generate = load_generate(gguf, GenerationOptions(llama_cpp=ENGINE))
    assert isinstance(generate, LlamaCppGenerate)
    process = generate.server.process
    assert process is not None and process.poll() is None
    generate.close()
    assert process.poll() is not None


def test_the_server_ends_when_counterfoil_is_killed(gguf: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import sys, time\n"
        "from counterfoil.models import GenerationOptions, load_generate\n"
        "from counterfoil.models.options import LlamaCppOptions\n"
        f"g = load_generate({gguf!r}, GenerationOptions(llama_cpp=LlamaCppOptions(2048, 1)))\n"
        f"open({str(pid_file)!r}, 'w').write(str(g.server.process.pid))\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        child = int(pid_file.read_text())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    stat = Path(f"/proc/{child}/stat")
    assert not stat.exists() or stat.read_text().split()[2] == "Z"


def test_a_file_llama_cpp_cannot_load_is_refused_in_one_line(gguf: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(Path(gguf).read_bytes()[:5000])
    with pytest.raises(ModelLoadError) as refused:
        load_generate(str(broken), GenerationOptions(llama_cpp=ENGINE))
    message = str(refused.value)
    assert message.startswith(f"llama.cpp could not load {broken}: ")
    assert "\n" not in message and "key-value" in message


def llamacpp_children() -> list[int]:
    """This process's child processes that run llama.cpp's server."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"llamacpp_child" in command:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc")
def test_an_agent_run_on_the_engine_records_it_and_leaves_no_server_behind(
    gguf: str, tmp_path: Path
) -> None:
    import io

    from counterfoil.cli.main import main
    from counterfoil.receipts.store import ReceiptStore

    servers_before = llamacpp_children()  # the module's own engine may be running
    output = io.StringIO()
    main(
        ["agent", WRITE_GOAL, "--root", str(tmp_path), "--model", gguf]
        + ["--engine", "llama.cpp", "--context-tokens", "4096", "--allow-writes"]
        + ["--max-steps", "2", "--max-tokens", "40"],
        stdin=io.StringIO("y\ny\n"),
        stdout=output,
    )
    text = output.getvalue()
    assert "Traceback" not in text
    assert "engine llama.cpp" in text.split("model identity: ", 1)[1].splitlines()[0]
    assert llamacpp_children() == servers_before
    (receipt, *_) = ReceiptStore(tmp_path / ".counterfoil" / "receipts.jsonl").receipts()
    assert receipt.evidence.approval.model.resolved["engine"] == "llama.cpp"


def test_the_sweep_after_a_command_leaves_the_server_running(
    engine: tuple[LlamaCppGenerate, list[ModelProgress]],
) -> None:
    from counterfoil.commands.orphans import end_orphans

    generate, _ = engine
    end_orphans()  # what the gate runs after every command
    assert generate.server.running
    parse_action(generate(ASK), TOOLS)
