"""`receipts verify` for effects a rule approved: each such receipt names a rule and the digest
of the rule set in force; the run's record must keep a set with that digest (recomputed from
the rules it holds), the named rule must be in it at the named place, and the set must decide
that very effect with that rule. A rule set edited after the run, a rule moved, or a receipt
that names a rule which would not have approved its effect is a finding."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from ..gate.rules import RuleEffect, RuleError, parse_rules
from ..receipts.record import EffectReceipt
from .decisions import DECISIONS_FILE, RULES_KEY, read_entries
from .store import SessionStore


def rule_problems(log_path: Path, receipts: Iterable[EffectReceipt]) -> list[str]:
    """One line per rule-approved receipt its run's record does not bear out."""
    sessions = SessionStore(log_path)
    recorded: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    runs = set(sessions.run_ids())
    for receipt in receipts:
        approval = receipt.evidence.approval
        if approval is None or (approval.rule is None and approval.rules_sha256 is None):
            continue
        run_id = receipt.evidence.run_id
        if not isinstance(run_id, str) or run_id not in runs:
            problems.append(f"{receipt.tool_call_id}: approved by rule, but its run has no record")
            continue
        if run_id not in recorded:
            path = sessions.run_folder(run_id) / DECISIONS_FILE
            recorded[run_id] = [
                entry[RULES_KEY]
                for entry in read_entries(path)
                if entry.get("kind") in ("started", "resumed")
                and isinstance(entry.get(RULES_KEY), dict)
            ]
        problem = _problem(receipt, recorded[run_id])
        if problem is not None:
            problems.append(f"{receipt.tool_call_id}: {problem}")
    return problems


def _problem(receipt: EffectReceipt, sets: list[dict[str, Any]]) -> str | None:
    approval = receipt.evidence.approval
    assert approval is not None
    digest = approval.rules_sha256
    found = next((item for item in sets if item.get("sha256") == digest), None)
    if found is None:
        return f"approved by rule, but its run's record keeps no rule set {digest}"
    try:
        rules = parse_rules(found.get("rules"), "the recorded rule set")
    except RuleError as error:
        return f"{error}"
    if rules.sha256 != digest:
        return f"the rule set its run recorded no longer has the digest {digest}"
    index = approval.rule_index
    if not isinstance(index, int) or not 1 <= index <= len(rules.rules):
        return f"names rule {index}, which the recorded rule set does not have"
    rule = rules.rules[index - 1]
    if rule.text != approval.rule:
        return f"names a rule that is not rule {index} of the recorded rule set"
    decided = rules.decide(effect_of(receipt))
    if decided.decision != "allow" or decided.index != index:
        why = decided.held or (
            "no rule matches it" if decided.index is None else f"rule {decided.index} decides it"
        )
        return f"rule {index} of the recorded rule set does not approve this effect ({why})"
    return None


def effect_of(receipt: EffectReceipt) -> RuleEffect:
    """The effect a receipt records, as the approval rules see it."""
    arguments, evidence = receipt.arguments, receipt.evidence
    if receipt.tool == "run_command":
        argv = evidence.argv if evidence.argv is not None else arguments.get("argv")
        sandbox = evidence.sandbox
        confined = sandbox is not None and sandbox.mode not in (None, "off")
        return RuleEffect(receipt.tool, argv=tuple(argv or ()), confined=confined)
    if evidence.mcp is not None:
        return RuleEffect(
            receipt.tool,
            server=str(arguments.get("server")),
            mcp_tool=str(arguments.get("name")),
        )
    path = arguments.get("path")
    if not isinstance(path, str):
        return RuleEffect(receipt.tool)
    parts = [part for part in PurePosixPath(path).parts if part not in ("/", ".")]
    return RuleEffect(receipt.tool, path="/".join(parts))
