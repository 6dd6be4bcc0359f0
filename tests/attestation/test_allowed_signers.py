"""The allowed-signers file is read as git reads it: a line ends only at `\\n`, and a line that
is not a valid entry is a finding, never skipped."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from tests.support.evidence import export, verify

from counterfoil.attestation.signers import parse_allowed_signers

KEY = "ed25519:" + base64.b64encode(bytes(range(32))).decode()


@pytest.mark.parametrize("separator", ["\u2028", "\x1e", "\x85", "\x0c", "\r", "\x1c"])
def test_a_key_after_another_line_break_is_part_of_the_comment(separator: str) -> None:
    allowed = parse_allowed_signers(f"# the team's keys{separator}mallory {KEY}\n")

    assert allowed.signers == ()
    assert allowed.problems == ()


@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\x1e"])
def test_a_break_inside_an_entry_makes_it_invalid_rather_than_two(separator: str) -> None:
    allowed = parse_allowed_signers(f"ada {KEY}{separator}mallory {KEY}\n")

    assert allowed.signers == ()
    assert allowed.problems == ("allowed signers line 1: expected OWNER ed25519:<base64>",)


def test_an_invalid_line_is_a_problem_and_the_valid_ones_still_count() -> None:
    allowed = parse_allowed_signers(f"ada {KEY}\nbob ed25519:not-base64\n\n# fine\n")

    assert [signer.owner for signer in allowed.signers] == ["ada"]
    assert allowed.problems == ("allowed signers line 2: public key is not valid base64",)


def test_an_invalid_line_in_the_signers_is_a_finding(project: Path) -> None:
    assert export(project)[0] == 0
    signers = project.parent / "allowed_signers"
    good = (project / ".counterfoil" / "allowed_signers").read_text()
    signers.write_text(good + "eve\u00a0" + KEY + "\n")

    status, output = verify(project, "--signers", str(signers))

    assert status == 1
    assert "finding: allowed signers line 2: expected OWNER ed25519:<base64>" in output
