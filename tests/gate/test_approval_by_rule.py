"""The gate's approval point under the person's rules: an `allow` approves without asking and
the receipt names the rule, a `deny` refuses, and what no rule may allow is asked."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.gate.rules import RuleSet, parse_rules
from counterfoil.gate.workspace_setup import RuleApproved, WorkspaceSetup
from counterfoil.proposals import ToolProposal
from counterfoil.verdict import EffectOutcome, compute_verdict

PYTHON = sys.executable
TEST = (PYTHON, "-c", "print('tests pass')")
needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)


class Person:
    """Answers each question with `answer` and remembers what it was asked."""

    def __init__(self, answer: object = True) -> None:
        self.answer = answer
        self.asked: list[ToolProposal] = []

    def __call__(self, proposal: ToolProposal) -> object:
        self.asked.append(proposal)
        return self.answer


def rules(*entries: object) -> RuleSet:
    return parse_rules(list(entries), "test")


def project(
    root: Path,
    person: Person,
    ruleset: RuleSet,
    on_rule_approved: RuleApproved | None = None,
    **policy: Any,
) -> Workspace:
    (root / "docs").mkdir(exist_ok=True)
    (root / ".counterfoil").mkdir(exist_ok=True)
    policy.setdefault("allow_writes", True)
    policy.setdefault("allowed_commands", (TEST,))
    space = make_workspace(
        ToolPolicy(root, **policy),
        store=ReceiptStore(root / ".counterfoil" / "receipts.jsonl", signer=None),
        confirm_proposal=person,
        setup=WorkspaceSetup(approval_rules=ruleset, on_rule_approved=on_rule_approved),
    )
    return space


def run_test(space: Workspace) -> Any:
    return space.execute_step(ToolAction("run_command", {"argv": list(TEST)}))


def write_doc(space: Workspace, path: str = "docs/guide.md") -> Any:
    return space.execute_step(ToolAction("write_file", {"path": path, "content": "hello\n"}))


@needs_bubblewrap
def test_an_allowed_command_runs_without_asking(tmp_path: Path) -> None:
    person = Person()
    space = project(
        tmp_path,
        person,
        rules({"decision": "allow", "argv": list(TEST)}),
        command_sandbox="confine",
    )

    step = run_test(space)

    assert step.state == "approved"
    assert "tests pass" in step.observation
    assert person.asked == []


@needs_bubblewrap
def test_a_rule_approved_receipt_names_the_rule_and_the_set(tmp_path: Path) -> None:
    ruleset = rules(
        {"decision": "deny", "argv": ["rm"]}, {"decision": "allow", "argvPrefix": [PYTHON, "-c"]}
    )
    space = project(tmp_path, Person(), ruleset, command_sandbox="confine")

    run_test(space)

    approval = space.receipt_store.receipts()[-1].evidence.approval
    assert approval is not None
    assert (approval.decision, approval.via, approval.asked) == ("approved", "approvalRules", False)
    assert approval.rule == ruleset.rules[1].text
    assert approval.rule_index == 2
    assert approval.rules_sha256 == ruleset.sha256


def test_a_rule_approved_edit_is_receipted_as_the_rules(tmp_path: Path) -> None:
    person = Person()
    space = project(tmp_path, person, rules({"decision": "allow", "path": "docs/**"}))

    step = write_doc(space)

    assert (step.state, person.asked) == ("approved", [])
    assert (tmp_path / "docs" / "guide.md").read_text() == "hello\n"
    approval = space.receipt_store.receipts()[-1].evidence.approval
    assert approval is not None and approval.rule == '{"decision":"allow","path":"docs/**"}'


def test_a_write_no_rule_matches_is_asked(tmp_path: Path) -> None:
    person = Person()
    space = project(tmp_path, person, rules({"decision": "allow", "path": "docs/**"}))

    step = write_doc(space, "notes.md")

    assert step.state == "approved"
    assert [proposal.action.tool for proposal in person.asked] == ["write_file"]
    approval = space.receipt_store.receipts()[-1].evidence.approval
    assert approval is not None and (approval.via, approval.rule) == ("cli", None)


def test_an_ask_rule_asks_before_a_later_allow(tmp_path: Path) -> None:
    person = Person()
    ruleset = rules(
        {"decision": "ask", "path": "docs/api.md"}, {"decision": "allow", "path": "docs/*"}
    )
    space = project(tmp_path, person, ruleset)

    write_doc(space, "docs/api.md")

    assert len(person.asked) == 1


def test_a_denied_effect_is_refused_by_the_rule_not_rejected_by_the_person(
    tmp_path: Path,
) -> None:
    person = Person()
    space = project(tmp_path, person, rules({"decision": "deny", "path": "docs/**"}))

    step = write_doc(space)

    assert step.state == "refused"
    assert step.observation == (
        "error: refused by the person's approval rule 1 (deny writes to docs/**)"
    )
    assert person.asked == []
    assert not (tmp_path / "docs" / "guide.md").exists()
    assert space.receipt_store.receipts() == ()


def test_a_command_under_sandbox_off_is_asked_though_a_rule_allows_it(tmp_path: Path) -> None:
    person = Person()
    space = project(
        tmp_path, person, rules({"decision": "allow", "argv": list(TEST)}), command_sandbox="off"
    )

    step = run_test(space)

    assert step.state == "approved"
    assert len(person.asked) == 1
    approval = space.receipt_store.receipts()[-1].evidence.approval
    assert approval is not None and approval.rule is None


def test_a_write_to_a_protected_pattern_is_never_approved_by_a_rule(tmp_path: Path) -> None:
    person = Person()
    space = project(
        tmp_path, person, rules({"decision": "allow", "path": "**"}), protected_patterns=("*.md",)
    )

    step = write_doc(space)

    assert step.state == "refused"
    assert person.asked == []
    assert not (tmp_path / "docs" / "guide.md").exists()


def test_an_effect_the_person_rejected_is_asked_again_though_a_rule_now_allows_it(
    tmp_path: Path,
) -> None:
    person = Person(False)
    space = project(tmp_path, person, RuleSet())
    assert write_doc(space).state == "rejected"

    # The run goes on with the rule set (a resume's workspace, its earlier outcomes restored).
    earlier = space.effect_outcomes
    space = project(tmp_path, person, rules({"decision": "allow", "path": "docs/**"}))
    space.record.restore_outcomes(earlier)
    person.answer = True
    step = write_doc(space)

    assert step.state == "approved"
    assert len(person.asked) == 2


def test_a_resumed_run_asks_again_about_an_effect_rejected_in_its_earlier_part(
    tmp_path: Path,
) -> None:
    person = Person()
    space = project(tmp_path, person, rules({"decision": "allow", "path": "docs/**"}))
    space.record.restore_outcomes(
        [EffectOutcome("call-1", "write_file", "rejected", path="docs/guide.md")]
    )

    write_doc(space)

    assert len(person.asked) == 1


def test_the_verdict_counts_rule_approved_effects_apart(tmp_path: Path) -> None:
    person = Person()
    space = project(tmp_path, person, rules({"decision": "allow", "path": "docs/**"}))

    write_doc(space)
    write_doc(space, "notes.md")
    verdict = compute_verdict(space.effect_outcomes)

    assert len(verdict.approved) == 2
    assert len(verdict.approved_by_rule) == 1
    assert verdict.counts().startswith("2 approved (1 by rule), 0 rejected")


def test_the_front_end_is_told_as_a_rule_approves(tmp_path: Path) -> None:
    told: list[str] = []
    space = project(
        tmp_path,
        Person(),
        rules({"decision": "allow", "path": "docs/**"}),
        on_rule_approved=lambda proposal, decided: told.append(
            f"{proposal.tool_call_id} {decided.index}"
        ),
    )

    step = write_doc(space)

    assert told == [f"{step.call_id} 1"]
