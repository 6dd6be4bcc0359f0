"""One approved command with its tree recorded: the before-snapshot, the run in its sandbox (or
on a copy under review), what it changed, and the receipt's evidence and the model's text."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..commands.runner import CommandResult, run_bounded
from ..commands.tree.changes import TreeChanges
from ..commands.tree.command_tree import CommandTree
from ..commands.tree.reach import apart_from_root
from ..commands.tree.restore import apply_change_set
from ..commands.tree.review import ReviewCopy
from ..commands.tree.sandbox import REVIEW, Sandbox, private_temporary, sandbox_for
from ..errors import AgentError
from ..proposals import CommandProposal, CommandRan, ToolProposal
from ..receipt_evidence import command_evidence
from ..receipt_fields import ReceiptEvidence, ReviewRecord
from ..receipts import ReceiptNotRecorded, ReceiptStore
from ..verdict import NOTHING_TO_APPLY, EffectOutcome
from .approval import Approval
from .policy import ToolPolicy

Changed = tuple[tuple[str, str | None], ...]
NOT_APPLIED = "not applied"


@dataclass(frozen=True)
class CommandRun:
    outcome: CommandResult
    observation: str
    evidence: ReceiptEvidence
    effect: EffectOutcome  # what `ran` noted the command became


def run_tracked_command(
    proposal: CommandProposal,
    policy: ToolPolicy,
    store: ReceiptStore,
    tree: CommandTree,
    *,
    stop: threading.Event | None,
    ask: Callable[[ToolProposal], Approval],
    load_object: Callable[[str], bytes | None],
    ran: Callable[[CommandResult, Changed, str | None], EffectOutcome],
) -> CommandRun:
    """Run the command; `ran(outcome, changed files, review decision)` notes what it became as
    soon as its effect on the tree is known (before evidence that may fail to be stored). Raises
    AgentError when it could not run, ReceiptNotRecorded when its evidence could not be kept."""
    before, drift = tree.before()
    review = ReviewCopy(policy.root, tree.rules) if policy.command_sandbox == REVIEW else None
    try:
        with store.output_stream(policy.max_command_output_bytes) as output:
            started = time.monotonic()
            outcome, sandbox = _run_confined(proposal, policy, store, review, stop, output.write)
            duration = time.monotonic() - started
            try:
                if review is None:
                    changes = tree.after(before)
                else:
                    changes = review.changes(before, tree.limits, tree.keep)
            except (AgentError, OSError) as error:
                raise ReceiptNotRecorded(f"could not compare the tree: {error}") from None
            try:
                evidence = command_evidence(proposal, outcome, duration, output)
            except (AgentError, OSError) as error:
                ran(outcome, *((_changed(changes), None) if review is None else ((), NOT_APPLIED)))
                raise ReceiptNotRecorded(str(error)) from None
        tree_record = tree.record(changes, drift)
        evidence = replace(
            evidence,
            tree_changes=tree_record.tree_changes,
            tree_drift=tree_record.tree_drift,
            sandbox=sandbox.record(),
        )
        text = [tree.observation(changes, drift)]
        if review is None:
            effect = ran(outcome, _changed(changes), None)
        else:
            ran_as = CommandRan(
                proposal.argv,
                outcome.status,
                outcome.timed_out,
                sandbox.mode,
                sandbox.mechanism,
                sandbox.network,
            )
            decision, applied = _decide(
                proposal,
                review,
                changes,
                ran_as,
                ask,
                load_object,
                policy,
                tree.limits.max_listed_changes,
            )
            tree.after(before)  # the real root now holds what was accepted: not drift
            evidence = replace(evidence, review=decision)
            text.append(_review_line(decision))
            effect = ran(outcome, applied, decision.decision)
            store.sync_objects(
                digest
                for change in changes.changes
                for digest in (change.before_sha256, change.after_sha256)
                if digest is not None
            )
    finally:
        if review is not None:
            review.remove()
    stored = _stored_words(evidence)
    return CommandRun(outcome, _joined(outcome.observation(stored), text), evidence, effect)


def _stored_words(evidence: ReceiptEvidence) -> str:
    """How much of the command's output the receipt keeps, in the observation's words."""
    if evidence.output_truncated is True:
        return "the first bytes of the output, up to the cap, are kept with the receipt"
    return "the whole output is kept with the receipt"


def _run_confined(
    proposal: CommandProposal,
    policy: ToolPolicy,
    store: ReceiptStore,
    review: ReviewCopy | None,
    stop: threading.Event | None,
    output_sink: Callable[[bytes], None],
) -> tuple[CommandResult, Sandbox]:
    """The command run in the policy's sandbox (the receipt log read-only, the evaluation's
    hidden paths hidden; under review, in the review's copy), its output to `output_sink`."""
    try:
        with private_temporary(policy.command_sandbox) as temporary:
            sandbox = sandbox_for(
                policy.command_sandbox,
                policy.root,
                network=policy.allow_network,
                read_only=store.own_paths(with_folder=True)
                + (() if review is None else review.shared),
                source=None if review is None else review.copy,
                temporary=temporary,
                hidden=policy.hidden_paths
                + apart_from_root(policy.root, store.own_paths(with_folder=True)[-1:]),
            )
            with sandbox.launch() as (prefix, fds):
                outcome = run_bounded(
                    proposal.argv,
                    policy.root
                    if review is None or sandbox.mechanism != "sandbox-exec"
                    else review.copy,
                    policy.command_timeout_seconds,
                    pass_environment=policy.pass_environment,
                    withheld_environment=policy.withheld_environment,
                    limits=policy.command_limits,
                    stop=stop,
                    output_sink=output_sink,
                    wrapper=prefix,
                    environment=sandbox.environment,
                    pass_fds=fds,
                )
    except OSError as error:
        raise AgentError(f"could not run command: {error}") from None
    return outcome, sandbox


def _joined(observation: str, notes: list[str]) -> str:
    """The command's own observation unchanged (as the tiny-llm course has it), then notes."""
    notes = [note for note in notes if note]
    if not notes:
        return observation
    return observation + ("" if observation.endswith("\n") else "\n") + "\n".join(notes)


def _changed(changes: TreeChanges) -> Changed:
    return tuple((change.path, change.after_sha256) for change in changes.changes)


def _decide(
    proposal: CommandProposal,
    review: ReviewCopy,
    changes: TreeChanges,
    ran_as: CommandRan,
    ask: Callable[[ToolProposal], Approval],
    load_object: Callable[[str], bytes | None],
    policy: ToolPolicy,
    listed_at_most: int,
) -> tuple[ReviewRecord, Changed]:
    """Ask whether to apply the copy's changes; apply them whole, or not at all. A change set
    that cannot show every change (over the listing cap, or an incomplete comparison) is not
    offered: an Accept would apply only part of what the command did."""
    if not changes.count and changes.incomplete is None:
        return ReviewRecord(decision=NOTHING_TO_APPLY, applied=()), ()
    if changes.count > len(changes.changes):
        why = (
            f"the command changed {changes.count} files, more than the {listed_at_most} "
            "a review can show; nothing was applied"
        )
        return ReviewRecord(decision=NOT_APPLIED, applied=(), error=why), ()
    if changes.incomplete is not None:
        why = (
            f"the comparison of the copy is incomplete ({changes.incomplete}); nothing was applied"
        )
        return ReviewRecord(decision=NOT_APPLIED, applied=(), error=why), ()
    change_set = replace(
        review.change_set(proposal.tool_call_id, list(proposal.argv), changes, load_object),
        ran=ran_as,
    )
    left = tuple(tuple(pair) for pair in change_set.left_alone)
    if not change_set.files:
        return ReviewRecord(decision=NOT_APPLIED, applied=(), left_alone=left), ()
    if not ask(change_set).approved:
        return ReviewRecord(decision="rejected", applied=(), left_alone=left), ()
    try:
        applied, alone = apply_change_set(
            policy.root, change_set.files, policy.protected_patterns, all_or_nothing=True
        )
    except AgentError as error:
        record = ReviewRecord(
            decision=NOT_APPLIED, accepted=True, applied=(), error=str(error), left_alone=left
        )
        return record, ()
    left += tuple(tuple(pair) for pair in alone)
    paths = tuple(item.path for item in applied)
    decision = "partially accepted" if left else "accepted"
    record = ReviewRecord(decision=decision, applied=paths, left_alone=left)
    return record, tuple((item.path, item.content_sha256) for item in applied)


def _review_line(decision: ReviewRecord) -> str:
    what = decision.decision
    applied = f"{len(decision.applied or ())} file(s) applied to the root"
    left_alone = len(decision.left_alone or ())
    if what == NOT_APPLIED and decision.accepted:
        return f"[review: accepted, but not applied: {decision.error}]"
    if what == NOT_APPLIED and decision.error:
        return f"[review: not applied: {decision.error}]"
    if what == NOT_APPLIED:
        return f"[review: not applied: none of the {left_alone} change(s) can be]"
    if what == "accepted":
        return f"[review: accepted; {applied}]"
    if what == "partially accepted":
        return f"[review: partially accepted; {applied}, {left_alone} left alone]"
    if what == "rejected":
        return "[review: rejected; the changes were discarded]"
    return "[review: nothing to apply]"
