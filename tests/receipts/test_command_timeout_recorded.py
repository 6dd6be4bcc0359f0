"""A command that ran past its time limit says so in its receipt (`timed_out`), so a resumed
run's verdict and an exported statement tell a timeout from a stop request; a command that
ended by itself writes no such key."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.processes import GUARD_SECONDS
from tests.support.workspaces import make_workspace

from counterfoil.attestation.statement import effect_entry
from counterfoil.receipts.store import ReceiptStore
from counterfoil.sessions.decisions import recorded_outcomes

SLEEP = (sys.executable, "-c", "import time; time.sleep(30)")
QUICK = (sys.executable, "-c", "print('ok')")


def test_a_timed_out_command_s_receipt_says_so_and_the_statement_and_verdict_read_it(
    tmp_path: Path,
) -> None:
    # One log, two limits: the sleep outlasts half a second on any machine, and the quick
    # command has the hang guard, as a busy machine may take longer than half a second to start
    # Python.
    store = ReceiptStore()
    short = make_workspace(
        tmp_path, answer=True, allowed_commands=(SLEEP,), command_timeout_seconds=0.5, store=store
    )
    guarded = make_workspace(
        tmp_path,
        answer=True,
        allowed_commands=(QUICK,),
        command_timeout_seconds=GUARD_SECONDS,
        store=store,
    )

    assert short.run_command(list(SLEEP)).startswith("status: timeout")
    assert guarded.run_command(list(QUICK)).startswith("status: 0")

    slow, quick = store.receipts()
    assert (slow.evidence.exit_status, slow.evidence.timed_out) == (None, True)
    assert (quick.evidence.exit_status, quick.evidence.timed_out) == (0, None)
    assert "timed_out" not in quick.evidence.as_record()
    assert effect_entry(slow)["timed_out"] is True
    assert effect_entry(quick)["timed_out"] is False
    outcomes = recorded_outcomes((), lambda _call: None, (slow, quick))
    assert [outcome.timed_out for outcome in outcomes] == [True, False]
