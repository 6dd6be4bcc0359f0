"""Approval rules in the terminal: read from the configuration folder or `--rules FILE`, a rule
approves the test command with one line said, the person approves the edit, and the receipts,
the verdict and `receipts verify` say who decided each."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from tests.conftest import FIXTURES
from tests.support.terminal import run_cli

from counterfoil import ReceiptStore
from counterfoil.attestation.statement import effect_entry, run_entry
from counterfoil.sessions.decisions import DECISIONS_FILE, LINK_KEY, entry_link, read_entries
from counterfoil.sessions.store import SessionStore

VALIDATION = ["python", "-m", "pytest", "tests/test_math.py", "-q"]
RULE = {"decision": "allow", "argv": VALIDATION}
LOG = ".counterfoil/receipts.jsonl"
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    return folder


def agent_args(project: Path, *extra: str, sandbox: str = "confine") -> list[str]:
    return [
        "agent",
        "fix app.py",
        "--root",
        str(project),
        "--allow-writes",
        "--allow-command",
        " ".join(VALIDATION),
        "--sandbox",
        sandbox,
        "--model",
        f"scripted:{FIXTURES / 'responses' / 'fix-app.jsonl'}",
        *extra,
    ]


def rules_file(folder: Path, rules: object, name: str = "approval-rules.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(rules), encoding="utf-8")
    return path


@needs_bubblewrap
def test_a_rule_approves_the_test_and_the_person_approves_the_edit(
    demo_project: Path, config: Path
) -> None:
    rules_file(config, [RULE])

    status, output = run_cli(agent_args(demo_project), "y\n")

    assert status == 0
    assert output.count("[y/N]") == 1  # the edit's question; the test was not asked about
    assert (
        "[rule] run python -m pytest tests/test_math.py -q: approved by your rule 1 (allow the"
        " command python -m pytest tests/test_math.py -q) (Ctrl-C stops the run)\n" in output
    )
    assert "effects:    2 approved (1 by rule), 0 rejected" in output
    assert "return value * 2" in (demo_project / "app.py").read_text()


@needs_bubblewrap
def test_the_receipts_say_who_decided_each_effect(demo_project: Path, config: Path) -> None:
    rules_file(config, [RULE])
    run_cli(agent_args(demo_project), "y\n")

    status, shown = run_cli(["receipts", "show", str(demo_project / LOG)])

    assert status == 0
    edit, command = shown.split("\ncall-")[0], shown.split("\ncall-")[1]
    assert " via cli" in edit and "approved by rule" not in edit
    assert "approved by rule 1 of " in command
    assert f"  rule {json.dumps(RULE, sort_keys=True, separators=(',', ':'))}" in command


@needs_bubblewrap
def test_verify_checks_the_named_rule_in_the_recorded_set(demo_project: Path, config: Path) -> None:
    rules_file(config, [RULE])
    run_cli(agent_args(demo_project), "y\n")

    assert run_cli(["receipts", "verify", str(demo_project / LOG)]) == (
        0,
        f"ok: 2 receipts verified in {demo_project / LOG}\n",
    )


@needs_bubblewrap
def test_a_tampered_rule_set_fails_verify(demo_project: Path, config: Path) -> None:
    rules_file(config, [RULE])
    run_cli(agent_args(demo_project), "y\n")
    [record] = (demo_project / ".counterfoil").rglob(DECISIONS_FILE)
    entries = read_entries(record)
    entries[0]["approval_rules"]["rules"][0]["argv"] = ["python", "-m", "pytest"]
    relinked, previous = [], ""  # linked again, as someone without the signing key could
    for entry in entries:
        entry.pop("signature", None)
        entry.pop("public_key", None)
        entry[LINK_KEY] = entry_link(previous, entry)
        previous = entry[LINK_KEY]
        relinked.append(json.dumps(entry))
    record.write_text("\n".join(relinked) + "\n", encoding="utf-8")
    (record.parent / "decisions.head").unlink(missing_ok=True)

    status, output = run_cli(["receipts", "verify", str(demo_project / LOG)])

    assert status == 1
    assert "the rule set its run recorded no longer has the digest" in output


def test_a_command_under_sandbox_off_is_asked_though_a_rule_allows_it(
    demo_project: Path, config: Path
) -> None:
    rules_file(config, [RULE])

    status, output = run_cli(agent_args(demo_project, sandbox="off"), "y\ny\n")

    assert status == 0
    assert output.count("[y/N]") == 2
    assert "[rule]" not in output
    assert "effects:    2 approved, 0 rejected" in output


@needs_bubblewrap
def test_the_rules_flag_names_a_file_used_instead_of_the_configuration_folders(
    demo_project: Path, config: Path, tmp_path: Path
) -> None:
    rules_file(config, [{"decision": "deny", "argv": VALIDATION}])
    flag = rules_file(tmp_path, [RULE], "mine.json")

    status, output = run_cli(agent_args(demo_project, "--rules", str(flag)), "y\n")

    assert status == 0
    assert "approved by your rule 1" in output


def test_a_bad_rule_refuses_to_start_with_one_sentence(
    demo_project: Path, config: Path, tmp_path: Path
) -> None:
    flag = rules_file(tmp_path, [RULE, {"decision": "always", "argv": ["ls"]}], "bad.json")

    status, output = run_cli(agent_args(demo_project, "--rules", str(flag)), "y\n")

    assert status == 2
    assert output == f"error: --rules {flag}: rule 2: decision must be allow, ask or deny\n"
    assert "return value * 1" in (demo_project / "app.py").read_text()


@needs_bubblewrap
def test_the_exported_statement_says_which_rule_decided(demo_project: Path, config: Path) -> None:
    rules_file(config, [RULE])
    run_cli(agent_args(demo_project), "y\n")
    store = ReceiptStore(demo_project / LOG, signer=None)
    edit, command = store.receipts()
    sessions = SessionStore(demo_project / LOG)

    run = run_entry(sessions, str(command.evidence.run_id))
    decided = effect_entry(command)["approval"]

    assert run["approval_rules"]["rules"] == [RULE]
    assert decided["via"] == "approvalRules"
    assert decided["rule_index"] == 1
    assert decided["rules_sha256"] == run["approval_rules"]["sha256"]
    assert "rule" not in effect_entry(edit)["approval"]
