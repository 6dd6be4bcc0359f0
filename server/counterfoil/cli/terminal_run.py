"""How the terminal shows one run of `counterfoil agent` (and `resume`): its header once the
workspace is built, the model loaded with its lines, each step as it happens, a Ctrl-C, and the
run's end with its receipts and verdict. The run itself is opened by `run_start.open_run`."""

from __future__ import annotations

import argparse
import threading
from typing import TextIO

from ..context.agents_file import AgentsFile
from ..gate.rules import RuleDecision, RuleSet
from ..loop import AgentEvent
from ..model import ResponseStats
from ..model_identity import describe_identity
from ..models import close_model
from ..models.progress import ModelProgress
from ..models.usage import usage_line
from ..receipts import ReceiptStore
from ..run_start import LoadedModel, RunOutcome, RunSession
from ..sessions.recorded_run import RecordedRun
from ..settings.table import Settings
from .approvals import format_event, format_receipt
from .model_load import load_terminal_model
from .terminal import StepPrinter, exit_status, format_verdict


class TerminalRun:
    """One run as the terminal shows it; `interrupted` is set by a Ctrl-C (the run then
    stops, resumable)."""

    def __init__(
        self,
        args: argparse.Namespace,
        settings: Settings,
        stdout: TextIO,
        session: RecordedRun,
        rules: RuleSet,
        model_line: str | None,
    ) -> None:
        self.args, self.settings, self.stdout = args, settings, stdout
        self.session, self.rules, self.model_line = session, rules, model_line
        self.interrupted = threading.Event()
        self.steps = StepPrinter(stdout)
        self.steps.step = session.steps_done  # a resumed run's steps go on from where it stopped
        self.responses: list[ResponseStats] = []  # what each response cost, as its event says
        self.receipts_before = 0

    def resumable(self) -> str | None:
        return "interrupted" if self.interrupted.is_set() else None

    def rule_approved(self, _proposal: object, decided: RuleDecision) -> None:
        self.stdout.write(f"\n[rule] {decided.line()} (Ctrl-C stops the run)\n")

    def on_event(self, event: AgentEvent) -> None:
        if event.response_stats is not None:
            self.responses.append(event.response_stats)
        self.stdout.write(format_event(event))

    def on_interrupt(self) -> None:
        self.interrupted.set()
        self.stdout.write("\n(interrupted)\n")

    def opened(self, run: RunSession, agents: AgentsFile | None) -> None:
        """The run's header: its goal, root, tools, rules, AGENTS.md and model."""
        workspace, stdout = run.workspace, self.stdout
        self.receipts_before = len(workspace.receipt_store)
        stdout.write(
            f"goal: {self.args.goal}\nroot: {workspace.policy.root}\n"
            f"tools: {', '.join(sorted(workspace.available_tools))}\n"
        )
        if self.rules.rules:
            stdout.write(f"approval rules: {len(self.rules.rules)}, rule set {self.rules.sha256}\n")
        if agents is not None:
            stdout.write(f"agents file: {agents.summary()}\n")
        if self.model_line is not None:
            stdout.write(self.model_line + "\n")

    def load(self, _run: RunSession, _agents: AgentsFile | None) -> LoadedModel | int:
        """The model, loaded with its lines (served where, computed how, its identity), or the
        exit status once the reason is written."""
        from ..models.identity import run_identity

        settings, stdout = self.settings, self.stdout
        loaded = threading.Event()

        def on_progress(progress: ModelProgress) -> None:
            self.steps.on_progress(progress)
            if progress.note and loaded.is_set():
                stdout.write(f"\n[model] {progress.note}\n")  # a server's cache stats and notes

        model = load_terminal_model(
            self.args, settings, stdout, on_progress, should_stop=self.interrupted.is_set
        )
        if isinstance(model, int):
            return model
        loaded.set()
        generate = model.generate
        self.session.model_spec = model.spec or None
        if settings.endpoint:
            from ..models.server.remote import RemoteGenerate

            served = generate.model if isinstance(generate, RemoteGenerate) else model.spec
            stdout.write(f"model: {served} at {settings.endpoint}\n")
        identity = run_identity(generate, model.spec)
        resolved = identity.get("resolved") if identity is not None else None
        if isinstance(resolved, dict) and resolved.get("compute"):  # a local model's compute
            stdout.write(f"compute: {resolved['compute']}\n")
        if identity is not None:
            stdout.write(f"model identity: {describe_identity(identity)}\n")
        return LoadedModel(
            generate,
            self.steps.wrap(generate),
            identity,
            generate.count_tokens,
            close=lambda: close_model(generate),  # a llama.cpp engine's server ends with the run
        )

    def ended(self, outcome: RunOutcome, store: ReceiptStore, log_path: object) -> int:
        """The run's end as the terminal says it, and its exit status."""
        run, stdout = outcome.run, self.stdout
        completed = run is not None and run.completed
        final = None if run is None else run.final
        run_error = None if run is None else run.error
        status = exit_status(completed, outcome.verdict, interrupted=self.interrupted.is_set())
        stdout.write(f"\n== run ended: {outcome.reason} ==\n")
        usage = usage_line(self.responses)
        if usage:
            stdout.write(f"model usage: {usage}\n")
        new_receipts = store.receipts()[self.receipts_before :]
        stdout.write(f"receipts ({len(new_receipts)} new, log {log_path}):\n")
        stdout.writelines(format_receipt(receipt) + "\n" for receipt in new_receipts)
        stdout.write(f"log: {store.checked}\n")
        stdout.write(
            format_verdict(
                outcome.verdict, reason=outcome.reason, final=final, status=status, error=run_error
            )
        )
        stdout.flush()
        return status
