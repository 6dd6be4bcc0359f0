"""A whole approved run through a real `mlx_lm.server` whose model answers a script.

A random model never writes a valid action, so the cycle (read, an approved edit, an approved
validation command, a verdict, receipts) through a model server is shown with a model whose
weights are set to answer the demo's script (`counterfoil.testing.scripted_weights`). The server
loads, tokenizes, samples and streams it like any model.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import FIXTURES

from counterfoil.cli.main import main
from counterfoil.models.server.remote import NOT_ENFORCED
from counterfoil.receipts import ReceiptStore
from counterfoil.testing.local_mlx_server import serving_mlx_model

pytest.importorskip("httpx")

SCRIPT = (FIXTURES / "responses" / "fix-app.jsonl").read_text(encoding="utf-8").splitlines()
PROSE = "I will read app.py first."
ANSWERS = [PROSE, *SCRIPT]
VALIDATION = "python -m pytest tests/test_math.py -q"


@pytest.fixture(scope="module")
def scripted_weights_dir(mlx_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from counterfoil.testing.scripted_weights import build_scripted_weights_model

    return build_scripted_weights_model(tmp_path_factory.mktemp("models") / "scripted", ANSWERS)


@pytest.fixture(scope="module")
def server_url(
    scripted_weights_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("mlx-server") / "server.log"
    with serving_mlx_model(scripted_weights_dir, log) as url:
        yield url


def test_the_model_answers_its_script_turn_by_turn(scripted_weights_dir: Path) -> None:
    from mlx_lm import generate, load

    model, tokenizer = load(str(scripted_weights_dir))
    messages = [{"role": "system", "content": "system"}, {"role": "user", "content": "goal"}]
    answers = []
    for _ in range(len(ANSWERS) + 1):
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        answer = generate(model, tokenizer, prompt, max_tokens=8)
        answers.append(answer)
        messages += [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": "observation"},
        ]

    # Past the script's end it repeats its last answer.
    assert answers == [*ANSWERS, ANSWERS[-1]]


def test_an_approved_cli_run_through_the_server_ends_validated(
    server_url: str, scripted_weights_dir: Path, tmp_path: Path
) -> None:
    project = tmp_path / "demo-project"
    shutil.copytree(FIXTURES / "demo-project", project)
    output = io.StringIO()

    status = main(
        [
            "agent",
            "make tests/test_math.py pass",
            "--root",
            str(project),
            "--endpoint",
            server_url,
            "--model",
            str(scripted_weights_dir),
            "--allow-writes",
            "--allow-command",
            VALIDATION,
        ],
        stdin=io.StringIO("y\ny\n"),
        stdout=output,
    )

    text = output.getvalue()
    assert status == 0, text
    assert NOT_ENFORCED in text  # the prose answer got through: the server ignores the schema
    assert "error: " in text.split("== step 2 ==")[0]
    assert "validation: passed" in text
    assert f"model usage: {len(ANSWERS)} responses, " in text and "from the cache)" in text
    assert "value * 2" in (project / "app.py").read_text(encoding="utf-8")
    receipts = ReceiptStore(project / ".counterfoil" / "receipts.jsonl").receipts()
    assert [(receipt.tool, receipt.exit_state) for receipt in receipts] == [
        ("edit_file", "ok"),
        ("run_command", "ok"),
    ]
