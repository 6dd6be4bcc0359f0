"""The model named in every receipt: its spec, what it resolved to, and its digests."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

pytest.importorskip("mlx.core")
pytest.importorskip("gguf", reason="the gguf package writes the test file")

from tests.support.workspaces import make_workspace

from counterfoil import parse_action
from counterfoil.cli.receipts import describe_receipt
from counterfoil.models import GenerationOptions, load_generate
from counterfoil.models.identity import identity_of
from counterfoil.receipts import ReceiptStore
from counterfoil.testing.tiny_gguf import build_tiny_gguf
from counterfoil.testing.tiny_model import CHAT_TEMPLATE


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("identity")
    return build_tiny_gguf(
        directory / "id.gguf", quantization="Q8_0", vocab_size=600, corpus_bytes=50_000
    )


def test_a_gguf_models_identity_names_the_file_digest_weights_and_template(
    gguf_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    generate = load_generate(str(gguf_file), GenerationOptions(max_tokens=9))
    identity = identity_of(generate, str(gguf_file))
    assert identity.spec == str(gguf_file)
    digest = hashlib.sha256(gguf_file.read_bytes()).hexdigest()
    assert identity.resolved["gguf_sha256"] == digest
    assert identity.weights_sha256 is not None and len(identity.weights_sha256) == 64
    assert identity.chat_template_sha256 == hashlib.sha256(CHAT_TEMPLATE.encode()).hexdigest()
    assert identity.constrained is True
    assert identity.sampling == {"temperature": 0.0, "max_tokens": 9}


def test_each_receipts_approval_names_the_proposing_model(tmp_path: Path) -> None:
    from counterfoil.model_identity import ModelIdentity

    root = tmp_path / "project"
    root.mkdir()
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    workspace = make_workspace(root, store=store, answer=True, allow_writes=True)
    identity = ModelIdentity("smol.gguf", {"gguf_sha256": "ab" * 32}, "cd" * 32, "ef" * 32, True)
    workspace.record_model(identity.as_record())
    action = parse_action('{"tool":"write_file","path":"a.txt","content":"x"}', None)
    workspace.execute(action)
    (receipt,) = store.receipts()
    assert receipt.evidence.approval.model.as_record() == identity.as_record()
    assert "proposed by smol.gguf (gguf_sha256 abab" in describe_receipt(receipt)


def test_the_daemons_receipt_names_its_model_by_spec_short_digest_and_engine(
    tmp_path: Path,
) -> None:
    from counterfoil.lsp.runs.run_messages import receipt_message
    from counterfoil.model_identity import ModelIdentity

    root = tmp_path / "project"
    root.mkdir()
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    workspace = make_workspace(root, store=store, answer=True, allow_writes=True)
    identity = ModelIdentity("qwen3-4b", {"compute": "cpu"}, "918b844f4ec1" + "0" * 52, None, True)
    workspace.record_model(identity.as_record())
    workspace.execute(parse_action('{"tool":"write_file","path":"a.txt","content":"x"}', None))
    (receipt,) = store.receipts()

    assert (
        receipt_message(receipt).proposedBy == "qwen3-4b · weights 918b844f4ec1 · MLX, compute cpu"
    )


def test_the_runs_record_names_its_model_identity(
    gguf_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from counterfoil.cli.main import main
    from counterfoil.sessions.decisions import read_entries
    from counterfoil.sessions.store import SessionStore

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "project"
    root.mkdir()
    output = io.StringIO()
    main(
        ["agent", "look", "--root", str(root), "--model", str(gguf_file)]
        + ["--max-steps", "1", "--max-tokens", "8"],
        stdin=io.StringIO("n\n"),
        stdout=output,
    )
    log = root / ".counterfoil" / "receipts.jsonl"
    (run_id,) = SessionStore(log).run_ids()
    entries = read_entries(log.parent / "sessions" / run_id / "decisions.jsonl")
    identity = entries[0]["model_identity"]
    assert entries[0]["kind"] == "started"
    assert identity["spec"] == str(gguf_file)
    assert identity["resolved"]["gguf_sha256"] == hashlib.sha256(gguf_file.read_bytes()).hexdigest()
    assert "model identity: " in output.getvalue()


@pytest.mark.parametrize(
    ("resolved", "said"),
    [
        (
            {"gguf": "/m/smol.gguf", "engine": "llama.cpp"},
            "smol · weights 918b844f4ec1 · llama.cpp",
        ),
        ({"engine": "mlx", "compute": "cpu"}, "smol · weights 918b844f4ec1 · MLX, compute cpu"),
        ({"compute": "cpu"}, "smol · weights 918b844f4ec1 · MLX, compute cpu"),
        (
            {"endpoint": "http://127.0.0.1:8080/v1"},
            "smol · weights 918b844f4ec1 · model server http://127.0.0.1:8080/v1",
        ),
    ],
)
def test_the_short_identity_names_the_engine_the_record_names(
    resolved: dict[str, str], said: str
) -> None:
    from counterfoil.model_identity import ModelIdentity, identity_short

    identity = ModelIdentity("smol", resolved, "918b844f4ec1" + "0" * 52)

    assert identity_short(identity.as_record()) == said


def test_the_runs_answer_names_its_model_as_its_receipts_do() -> None:
    from counterfoil.loop import AgentRun
    from counterfoil.lsp.runs.run_messages import run_result
    from counterfoil.model_identity import ModelIdentity

    identity = ModelIdentity("smol.gguf", {"engine": "llama.cpp"}, "cc324af070c2" + "0" * 52)
    run = AgentRun(completed=True, reason="final", final="done", events=())

    result = run_result(run, "final", None, identity.as_record())

    assert result.proposedBy == "smol.gguf · weights cc324af070c2 · llama.cpp"
