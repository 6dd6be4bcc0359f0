"""Judge one run by the observable facts a case declares: the final answer, file bytes, tool
results and named receipts (the tiny-llm course's Day 7).

Evaluation only reads. It invokes no model, tool or approval, appends no receipt, and reads
files through descriptors that follow no symlink, so grading cannot become an effect. A case
that is malformed is refused with ValueError; evidence that is missing or wrong is a failed
check, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .actions import ToolAction
from .errors import AgentError
from .files.files import open_directory, read_regular_file
from .gate.workspace import Workspace
from .loop import AgentRun
from .receipts import ReceiptLogError, ReceiptStore, verify_receipt_log


def _expect_text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must not be blank")
    return value


def _expect_path(value: object, name: str) -> str:
    text = _expect_text(value, name)
    path = PurePosixPath(text)
    if path.is_absolute() or path == PurePosixPath(".") or ".." in path.parts or "\0" in text:
        raise ValueError(f"{name} must be a relative file path")
    return str(path)


@dataclass(frozen=True)
class FileExpectation:
    """One exact UTF-8 file content expected after the run."""

    path: str
    content: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", _expect_path(self.path, "file path"))
        if not isinstance(self.content, str):
            raise ValueError("file content must be a string")


@dataclass(frozen=True)
class ResultExpectation:
    """A substring that at least one observed result of `tool` must contain."""

    tool: str
    contains: str

    def __post_init__(self) -> None:
        _expect_text(self.tool, "result tool")
        _expect_text(self.contains, "result substring")


@dataclass(frozen=True)
class ReceiptExpectation:
    """The facts one named durable receipt must hold."""

    tool_call_id: str
    tool: str
    exit_state: str
    result_contains: str
    changed_artifacts: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        _expect_text(self.tool_call_id, "receipt call id")
        _expect_text(self.tool, "receipt tool")
        if self.exit_state not in {"ok", "error"}:
            raise ValueError("receipt exit_state must be 'ok' or 'error'")
        _expect_text(self.result_contains, "receipt result substring")
        if not isinstance(self.changed_artifacts, tuple):
            raise ValueError("receipt changed_artifacts must be a tuple")
        artifacts = tuple(_expect_path(item, "changed artifact") for item in self.changed_artifacts)
        object.__setattr__(self, "changed_artifacts", artifacts)


@dataclass(frozen=True)
class EvaluationCase:
    """Only the facts that matter for one task; nothing about the transcript's shape."""

    final_contains: str
    files: tuple[FileExpectation, ...] = field(default_factory=tuple)
    results: tuple[ResultExpectation, ...] = field(default_factory=tuple)
    receipts: tuple[ReceiptExpectation, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Refuse a case that could not be judged fairly (checked again at evaluation, since a
        dataclass can be changed after construction)."""
        _expect_text(self.final_contains, "final substring")
        groups: tuple[tuple[object, type, str], ...] = (
            (self.files, FileExpectation, "files"),
            (self.results, ResultExpectation, "results"),
            (self.receipts, ReceiptExpectation, "receipts"),
        )
        for values, kind, name in groups:
            if not isinstance(values, tuple) or not all(isinstance(item, kind) for item in values):
                raise ValueError(f"evaluation {name} must be a tuple of expectations")
        paths = [expected.path for expected in self.files]
        if len(paths) != len(set(paths)):
            raise ValueError("evaluation file paths must be unique")
        call_ids = [expected.tool_call_id for expected in self.receipts]
        if len(call_ids) != len(set(call_ids)):
            raise ValueError("evaluation receipt call ids must be unique")


@dataclass(frozen=True)
class EvaluationCheck:
    """One named pass or fail, with the observed fact behind it."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class EvaluationReport:
    """The checks in a fixed order: final, files, results, receipts (each in case order)."""

    checks: tuple[EvaluationCheck, ...]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(check.passed for check in self.checks)

    def render(self) -> str:
        lines = [f"evaluation: {'PASS' if self.passed else 'FAIL'}"]
        lines += [
            f"- {check.name}: {'PASS' if check.passed else 'FAIL'} ({check.detail})"
            for check in self.checks
        ]
        return "\n".join(lines)


def read_workspace_bytes(workspace: Workspace, raw: str) -> bytes:
    """A file's bytes by the workspace's path rules, opened without following any symlink;
    it never goes through the model's `read_file`, which records what the model has seen."""
    path = workspace.resolve_path(raw)
    parts = path.relative_to(workspace.policy.root).parts
    if not parts:
        raise AgentError("path is not a regular file")
    with open_directory(workspace.policy.root, parts[:-1]) as directory:
        return read_regular_file(directory, parts[-1], workspace.policy.max_ranged_file_bytes)


def _file_check(workspace: Workspace, expected: FileExpectation) -> EvaluationCheck:
    name = f"file:{expected.path}"
    try:
        observed = read_workspace_bytes(workspace, expected.path).decode("utf-8")
    except (AgentError, OSError, UnicodeError) as error:
        return EvaluationCheck(name, False, f"evidence unavailable: {error}")
    if observed == expected.content:
        return EvaluationCheck(name, True, "content matches")
    return EvaluationCheck(name, False, "content does not match")


def _result_check(run: AgentRun, expected: ResultExpectation) -> EvaluationCheck:
    matched = any(
        isinstance(event.action, ToolAction)
        and event.action.tool == expected.tool
        and isinstance(event.result, str)
        and expected.contains in event.result
        for event in run.events
    )
    detail = "required result observed" if matched else "required result not observed"
    return EvaluationCheck(f"result:{expected.tool}", matched, detail)


def _receipt_reader(receipts: ReceiptStore) -> tuple[ReceiptStore | None, str | None]:
    """The store to read from, reopened after a full verify of its log (so a line edited in
    the middle is caught, not only a broken end); or why the evidence cannot be trusted."""
    if receipts.path is None:
        return receipts, None
    report = verify_receipt_log(receipts.path)
    if not report.ok:
        return None, f"receipt evidence unavailable: {report.error}"
    try:
        return ReceiptStore(receipts.path), None
    except (AgentError, ReceiptLogError, OSError, UnicodeError) as error:
        return None, f"receipt evidence unavailable: {error}"


def _receipt_check(
    receipts: ReceiptStore | None, load_error: str | None, expected: ReceiptExpectation
) -> EvaluationCheck:
    name = f"receipt:{expected.tool_call_id}"
    if receipts is None:
        return EvaluationCheck(name, False, load_error or "receipt evidence unavailable")
    try:
        receipt = receipts.get(expected.tool_call_id)
    except (AgentError, OSError) as error:
        return EvaluationCheck(name, False, f"receipt lookup failed: {error}")
    if receipt is None:
        return EvaluationCheck(name, False, "receipt is absent")
    matched = (
        receipt.tool == expected.tool
        and receipt.exit_state == expected.exit_state
        and expected.result_contains in receipt.result
        and tuple(receipt.changed_artifacts) == expected.changed_artifacts
    )
    detail = "receipt facts match" if matched else "receipt facts do not match"
    return EvaluationCheck(name, matched, detail)


def evaluate_run(
    run: AgentRun, workspace: Workspace, receipts: ReceiptStore, case: EvaluationCase
) -> EvaluationReport:
    """Judge `run` only from the observable facts `case` declares."""
    if not isinstance(run, AgentRun):
        raise ValueError("run must be an AgentRun")
    if not isinstance(workspace, Workspace):
        raise ValueError("workspace must be a Workspace")
    if not isinstance(receipts, ReceiptStore):
        raise ValueError("receipts must be a ReceiptStore")
    if not isinstance(case, EvaluationCase):
        raise ValueError("case must be an EvaluationCase")
    case.validate()
    final_ok = run.completed and run.final is not None and case.final_contains in run.final
    checks = [
        EvaluationCheck(
            "final",
            final_ok,
            "required final observed" if final_ok else "required final not observed",
        )
    ]
    checks += [_file_check(workspace, expected) for expected in case.files]
    checks += [_result_check(run, expected) for expected in case.results]
    reader, load_error = _receipt_reader(receipts)
    checks += [_receipt_check(reader, load_error, expected) for expected in case.receipts]
    return EvaluationReport(tuple(checks))
