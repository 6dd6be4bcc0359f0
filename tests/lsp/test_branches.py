"""counterfoil/branches and counterfoil/selectBranch: a forked run's branches listed as the
terminal lists them, and one applied with each change asked through counterfoil/confirm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from tests.branches.fork_helpers import forked_run

from counterfoil import protocol as messages

from .conftest import StartDaemon, approve, reject


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


from .test_messages import conforms


@pytest.fixture
def forked(tmp_path: Path) -> tuple[Path, str]:
    return forked_run(tmp_path)


async def test_the_branches_are_listed_with_their_verdict_and_prefill(
    start_daemon: StartDaemon, forked: tuple[Path, str]
) -> None:
    root, run_id = forked
    daemon = await start_daemon(root=root)

    result = await daemon.request("counterfoil/branches", {"runId": run_id})

    conforms(result, messages.BranchesResult, "branches")
    assert [(item["name"], item["steering"]) for item in result["branches"]] == [
        (f"{run_id}.1", "one"),
        (f"{run_id}.2", "two"),
    ]
    first = result["branches"][0]
    assert (first["state"], first["filesChanged"], first["prefillAvoided"]) == (
        "ended",
        ["app.py"],
        None,
    )


async def test_a_branch_names_its_copy_of_the_root_so_its_files_can_be_compared(
    start_daemon: StartDaemon, forked: tuple[Path, str]
) -> None:
    root, run_id = forked
    daemon = await start_daemon(root=root)

    result = await daemon.request("counterfoil/branches", {"runId": run_id})

    copy = Path(result["branches"][0]["copyRoot"])
    assert (copy / "app.py").read_text() == "answer = 3\n"
    assert (root / "app.py").read_text() == "answer = 2\n"


async def test_an_unknown_run_is_said_in_the_result(
    start_daemon: StartDaemon, forked: tuple[Path, str]
) -> None:
    root, _ = forked
    daemon = await start_daemon(root=root)

    result = await daemon.request("counterfoil/branches", {"runId": "nosuchrun"})

    assert result == {"runId": "nosuchrun", "branches": [], "error": "there is no run nosuchrun"}
    with pytest.raises(JsonRpcInvalidParams):
        await daemon.request("counterfoil/branches", {"runId": ""})


async def test_selecting_asks_each_change_and_its_receipt_names_the_branch(
    start_daemon: StartDaemon, forked: tuple[Path, str]
) -> None:
    root, run_id = forked
    daemon = await start_daemon(root=root)
    daemon.answer = approve

    result = await daemon.request("counterfoil/selectBranch", {"branch": f"{run_id}.1"})

    conforms(result, messages.SelectBranchResult, "selectBranch")
    assert (result["outcome"], result["applied"], result["discarded"]) == (
        "selected",
        ["wrote app.py"],
        [f"{run_id}.2"],
    )
    (confirm,) = daemon.confirms
    assert (confirm["tool"], confirm["preview"]["proposedText"]) == ("write_file", "answer = 3\n")
    assert daemon.receipts[-1]["approval"]["via"] == f"editor, selecting branch {run_id}.1"
    assert (root / "app.py").read_text() == "answer = 3\n"


async def test_a_denied_change_stops_the_selection(
    start_daemon: StartDaemon, forked: tuple[Path, str]
) -> None:
    root, run_id = forked
    daemon = await start_daemon(root=root)
    daemon.answer = reject

    result = await daemon.request("counterfoil/selectBranch", {"branch": f"{run_id}.2"})

    assert (result["outcome"], result["applied"]) == ("stopped", [])
    assert result["detail"] == "app.py: operator denied the tool action"
    assert (root / "app.py").read_text() == "answer = 2\n"


@pytest.mark.parametrize(
    ("branch", "detail"),
    [
        ("nope", "'nope' is not a branch name (they read RUN_ID.N)"),
        ("{run}.9", "there is no branch {run}.9"),
    ],
)
async def test_a_bad_branch_is_refused_and_nobody_is_asked(
    start_daemon: StartDaemon, forked: tuple[Path, str], branch: str, detail: str
) -> None:
    root, run_id = forked
    daemon = await start_daemon(root=root)

    result: dict[str, Any] = await daemon.request(
        "counterfoil/selectBranch", {"branch": branch.format(run=run_id)}
    )

    assert (result["outcome"], result["detail"]) == ("refused", detail.format(run=run_id))
    assert daemon.confirms == [] and (root / "app.py").read_text() == "answer = 2\n"
