"""What a receipt records beside the course's six fields, as types: who approved what they were
shown, the bytes before and after, what a command ran and changed, an MCP call's facts.

Each part is a frozen dataclass whose fields are the keys the log writes, in the order this
version writes them; `as_record` is the part as the line holds it and `from_record` reads it
back. A part read from a log is kept whole, because the line's bytes are what the chain and the
signature commit to and a receipt read back must be the receipt that was written: a key this
version does not know, or a value not of its field's type, is kept verbatim in `unread` (its
field left None, so no reader acts on a value it cannot trust), and the keys keep the order
the line had them in (`written`), null or absent as they were. Writing such a part again gives
the same JSON, and a newer version's facts survive a round trip through an older reader.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, Union

# Any value JSON can hold: what a tool's arguments, an MCP server's entry and a model's
# sampling settings are, as far as a receipt is concerned.
JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
# A field sent only when it has a value (`protocol.wire`): every fact of a part, whose None is
# absent from the line too.
SOMETIMES = {"sometimes": True}
# A field the log keeps and the daemon's messages do not carry (see `protocol.wire`).
LOG_ONLY = {"log_only": True, **SOMETIMES}


@dataclass(frozen=True, kw_only=True, eq=False)
class EvidencePart:
    """The shared codec: fields to keys and back, losslessly (see the module's docstring).

    Two parts are equal when their records are: the same keys with the same values, whatever
    their order, as the plain objects they replace compared."""

    ALWAYS: ClassVar[frozenset[str]] = frozenset()  # keys written even when None (as null)
    # Groups of keys written all (null included) or none: all once one has a value.
    TOGETHER: ClassVar[tuple[frozenset[str], ...]] = ()

    unread: Mapping[str, JsonValue] = field(default_factory=dict, metadata=LOG_ONLY)
    written: tuple[str, ...] | None = field(default=None, metadata=LOG_ONLY)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> typing.Self:
        """The part a line holds; what it cannot read is kept, not dropped."""
        hints = _field_hints(cls)
        values: dict[str, Any] = {}
        unread: dict[str, JsonValue] = {}
        for key, value in record.items():
            readable, typed = _read(hints[key], value) if key in hints else (False, None)
            if readable:
                values[key] = typed
            else:
                unread[key] = value
        return cls(**values, unread=unread, written=tuple(record))

    def as_record(self) -> dict[str, JsonValue]:
        """The part as the log writes it: the keys as read, or this version's keys in order."""
        return {
            key: self.unread[key] if key in self.unread else _json(getattr(self, key))
            for key in self._keys()
        }

    def has(self, key: str) -> bool:
        """Whether the record names `key` with a value this version reads, null included (a
        file effect's digests, say)."""
        return key not in self.unread and key in self._keys()

    def _keys(self) -> list[str]:
        values = {name: getattr(self, name) for name in _field_hints(type(self))}
        always = self.ALWAYS.union(
            *(group for group in self.TOGETHER if any(values[name] is not None for name in group))
        )
        if self.written is None:
            keys = [name for name, value in values.items() if value is not None or name in always]
        else:  # as read, and any field given a value since
            keys = [*self.written]
            keys += [
                name for name, value in values.items() if value is not None and name not in keys
            ]
        return keys + [name for name in self.unread if name not in keys]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, EvidencePart)
        return self.as_record() == other.as_record()

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, kw_only=True, eq=False)
class ModelRecord(EvidencePart):
    """The model that proposed an effect (`model_identity.ModelIdentity.as_record`)."""

    ALWAYS = frozenset({"weights_sha256", "chat_template_sha256"})

    spec: str | None = field(default=None, metadata=SOMETIMES)
    # Where the spec led: repo, file, engine.
    resolved: dict[str, JsonValue] | None = field(default=None, metadata=SOMETIMES)
    weights_sha256: str | None = field(default=None, metadata=SOMETIMES)
    chat_template_sha256: str | None = field(default=None, metadata=SOMETIMES)
    constrained: bool | None = field(default=None, metadata=SOMETIMES)
    sampling: dict[str, JsonValue] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class ApprovalRecord(EvidencePart):
    """Who approved the effect, through what, and the digest of exactly what they were shown."""

    decision: str | None = field(default=None, metadata=SOMETIMES)
    by: str | None = field(default=None, metadata=SOMETIMES)
    via: str | None = field(default=None, metadata=SOMETIMES)
    shown_sha256: str | None = field(default=None, metadata=SOMETIMES)
    # True: the person approved other text than the model's (`approved_sha256`).
    modified: bool | None = field(default=None, metadata=SOMETIMES)
    # Where the grant that allowed the effect came from: `settings` (the person's own),
    # `walkthrough`, `confirmed-folder` (a folder's grant the person said yes to), `task-package`.
    grant: str | None = field(default=None, metadata=SOMETIMES)
    # False: nobody was asked (an MCP tool the person marked read-only; `via: readOnlyTools`).
    asked: bool | None = field(default=None, metadata=SOMETIMES)
    # Absent for a scripted model.
    model: ModelRecord | None = field(default=None, metadata=SOMETIMES)
    approved_sha256: str | None = field(default=None, metadata=SOMETIMES)
    # Approved by the person's approval rule, nobody asked (`gate/rules.py`): the rule's text,
    # its place in the set (from 1) and the set's digest; the run's record keeps the set.
    rule: str | None = field(default=None, metadata=SOMETIMES)
    rule_index: int | None = field(default=None, metadata=SOMETIMES)
    rules_sha256: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class SandboxRecord(EvidencePart):
    """How a command was confined (`off`, `confine`, `review`) and what it could reach."""

    mode: str | None = field(default=None, metadata=SOMETIMES)
    mechanism: str | None = field(default=None, metadata=SOMETIMES)
    network: bool | None = field(default=None, metadata=SOMETIMES)
    unix_sockets: bool | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeChangeRecord(EvidencePart):
    """One file a command (or a change set) created, deleted or modified."""

    ALWAYS = frozenset({"before_sha256", "after_sha256", "before_mode", "after_mode", "size"})

    path: str | None = field(default=None, metadata=SOMETIMES)
    change: str | None = field(default=None, metadata=SOMETIMES)
    kind: str | None = field(default=None, metadata=SOMETIMES)
    before_sha256: str | None = field(default=None, metadata=SOMETIMES)
    after_sha256: str | None = field(default=None, metadata=SOMETIMES)
    before_mode: int | None = field(default=None, metadata=SOMETIMES)
    after_mode: int | None = field(default=None, metadata=SOMETIMES)
    size: int | None = field(default=None, metadata=SOMETIMES)
    note: str | None = field(default=None, metadata=SOMETIMES)  # what was not read or not kept


@dataclass(frozen=True, kw_only=True, eq=False)
class LeftOutChangeRecord(EvidencePart):
    """A folder the snapshot leaves out, and how many of its entries differ (None: unknown)."""

    ALWAYS = frozenset({"entries"})

    path: str | None = field(default=None, metadata=SOMETIMES)
    why: str | None = field(default=None, metadata=SOMETIMES)
    entries: int | None = field(default=None, metadata=SOMETIMES)
    unchecked: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeChangesRecord(EvidencePart):
    """What a command changed in the tree: `count` changes found, the first `listed` of them."""

    ALWAYS = frozenset({"incomplete"})

    changes: tuple[TreeChangeRecord, ...] | None = field(default=None, metadata=SOMETIMES)
    count: int | None = field(default=None, metadata=SOMETIMES)
    listed: int | None = field(default=None, metadata=SOMETIMES)
    # Changes under ignored folders, by folder.
    ignored: dict[str, int] | None = field(default=None, metadata=SOMETIMES)
    # Why the comparison is incomplete (None: it is not).
    incomplete: str | None = field(default=None, metadata=SOMETIMES)
    left_out_changes: tuple[LeftOutChangeRecord, ...] | None = field(
        default=None, metadata=SOMETIMES
    )
    # A change set's [path, why] pairs.
    left_alone: tuple[tuple[str, ...], ...] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeDriftRecord(EvidencePart):
    """What changed in the tree before a command, not by it (paths only)."""

    paths: tuple[str, ...] | None = field(default=None, metadata=SOMETIMES)
    count: int | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class ReviewRecord(EvidencePart):
    """A reviewed command's answer: which of the copy's changes reached the root."""

    decision: str | None = field(default=None, metadata=SOMETIMES)
    # True: accepted, yet not applied (`error` says why)
    accepted: bool | None = field(default=None, metadata=SOMETIMES)
    applied: tuple[str, ...] | None = field(default=None, metadata=SOMETIMES)
    error: str | None = field(default=None, metadata=SOMETIMES)
    # [path, why] pairs.
    left_alone: tuple[tuple[str, ...], ...] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class McpRecord(EvidencePart):
    """An MCP call's server, the definition it was called under, and its result's digest."""

    # The server's entry, as the person configured it.
    server: dict[str, JsonValue] | None = field(default=None, metadata=SOMETIMES)
    tool: str | None = field(default=None, metadata=SOMETIMES)
    definition_sha256: str | None = field(default=None, metadata=SOMETIMES)
    read_only: bool | None = field(default=None, metadata=SOMETIMES)
    duration_seconds: float | None = field(default=None, metadata=SOMETIMES)
    result_sha256: str | None = field(default=None, metadata=SOMETIMES)
    result_bytes: int | None = field(default=None, metadata=SOMETIMES)
    is_error: bool | None = field(default=None, metadata=SOMETIMES)
    result_kept: bool | None = field(default=None, metadata=SOMETIMES)
    preview_truncated: bool | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True, eq=False)
class ReceiptEvidence(EvidencePart):
    """Everything a receipt's line holds beyond the course's six fields and id; the fields an
    effect did not have are None and absent from the line."""

    # A file effect names both digests, either of which may be null (a new file, a removal); a
    # command that ran, all its facts (its exit status is null after a timeout or a stop).
    TOGETHER = (
        frozenset({"base_sha256", "result_sha256"}),
        frozenset(
            {"argv", "cwd", "exit_status", "duration_seconds", "output_sha256", "output_truncated"}
        ),
    )

    run_id: str | None = field(default=None, metadata=SOMETIMES)
    # True: the run keeps a record beside the log.
    run_record: bool | None = field(default=None, metadata=SOMETIMES)
    base_sha256: str | None = field(default=None, metadata=SOMETIMES)
    result_sha256: str | None = field(default=None, metadata=SOMETIMES)
    # A new file's new folders, outermost first.
    created_folders: tuple[str, ...] | None = field(default=None, metadata=SOMETIMES)
    argv: tuple[str, ...] | None = field(default=None, metadata=SOMETIMES)
    cwd: str | None = field(default=None, metadata=SOMETIMES)
    exit_status: int | None = field(default=None, metadata=SOMETIMES)
    # True: the command ran past its time limit and was killed (its exit status is null, as
    # after a stop request); absent otherwise, and in receipts written before it was recorded.
    timed_out: bool | None = field(default=None, metadata=SOMETIMES)
    duration_seconds: float | None = field(default=None, metadata=SOMETIMES)
    output_sha256: str | None = field(default=None, metadata=SOMETIMES)
    output_truncated: bool | None = field(default=None, metadata=SOMETIMES)
    tree_changes: TreeChangesRecord | None = field(default=None, metadata=SOMETIMES)
    # The call id of the receipt this effect undoes.
    reverts: str | None = field(default=None, metadata=SOMETIMES)
    # The new folders a revert removed (they were empty).
    removed_folders: tuple[str, ...] | None = field(default=None, metadata=SOMETIMES)
    tree_drift: TreeDriftRecord | None = field(default=None, metadata=SOMETIMES)
    sandbox: SandboxRecord | None = field(default=None, metadata=SOMETIMES)
    review: ReviewRecord | None = field(default=None, metadata=SOMETIMES)
    mcp: McpRecord | None = field(default=None, metadata=SOMETIMES)
    approval: ApprovalRecord | None = field(default=None, metadata=SOMETIMES)
    # How an interrupted effect was settled from the disk (sessions/intents.py).
    recovered: str | None = field(default=None, metadata=SOMETIMES)
    time: str | None = field(default=None, metadata=SOMETIMES)

    @property
    def writes_file(self) -> bool:
        """A file effect's receipt: it names the bytes before and after, each readable."""
        return self.has("base_sha256") and self.has("result_sha256")


def evidence_keys() -> frozenset[str]:
    """The keys a receipt's evidence may have on a line this version reads."""
    return frozenset(
        item.name
        for item in dataclasses.fields(ReceiptEvidence)
        if not item.metadata.get("log_only")
    )


def field_annotations(cls: type, namespace: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A dataclass's field types, each evaluated in its own class's module (plus `namespace`),
    with `JsonValue` kept whole: `typing.get_type_hints` would unroll it one level."""
    hints: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        scope = {**vars(sys.modules[owner.__module__]), **(namespace or {})}
        for name, annotation in vars(owner).get("__annotations__", {}).items():
            hints[name] = eval(annotation, scope) if isinstance(annotation, str) else annotation
    return {item.name: hints[item.name] for item in dataclasses.fields(cls)}


_HINTS: dict[str, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    """A part's fields as the log names them, with their types (read once per class)."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name not in _HINTS:
        hints = field_annotations(cls)
        _HINTS[name] = {
            item.name: hints[item.name]
            for item in dataclasses.fields(cls)
            if not item.metadata.get("log_only")
        }
    return _HINTS[name]


Reader = Callable[[Any], tuple[bool, Any]]
_UNREADABLE = (False, None)
_READERS: dict[Any, Reader] = {}


def _read(hint: Any, value: Any) -> tuple[bool, Any]:
    """Whether `value` (as JSON decoded it) is of type `hint`, and the typed value."""
    reader = _READERS.get(hint)
    if reader is None:
        reader = _READERS[hint] = _reader(hint)
    return reader(value)


def _reader(hint: Any) -> Reader:
    """The check and conversion for one type, worked out once (a log is read line by line)."""
    if hint == JsonValue:
        return lambda value: (True, value)
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        options = [_reader(argument) for argument in arguments]

        def either(value: Any) -> tuple[bool, Any]:
            for option in options:
                readable, typed = option(value)
                if readable:
                    return True, typed
            return _UNREADABLE

        return either
    if hint is type(None):
        return lambda value: (value is None, None)
    if hint is float:
        return lambda value: (type(value) in (float, int), value)
    if hint in (str, int, bool):
        return lambda value: (type(value) is hint, value)
    if origin is Literal:
        return lambda value: (value in arguments, value)
    if isinstance(hint, type) and issubclass(hint, EvidencePart):
        return lambda value: (True, hint.from_record(value)) if type(value) is dict else _UNREADABLE
    if origin is tuple:
        item_reader = _reader(arguments[0])

        def items(value: Any) -> tuple[bool, Any]:
            if type(value) is not list:
                return _UNREADABLE
            read = [item_reader(item) for item in value]
            if not all(readable for readable, _ in read):
                return _UNREADABLE
            return True, tuple(typed for _, typed in read)

        return items
    if origin is dict:
        entry_reader = _reader(arguments[1])

        def entries(value: Any) -> tuple[bool, Any]:
            if type(value) is not dict:
                return _UNREADABLE
            read = {key: entry_reader(item) for key, item in value.items()}
            if not all(readable for readable, _ in read.values()):
                return _UNREADABLE
            return True, {key: typed for key, (_, typed) in read.items()}

        return entries
    raise TypeError(f"a receipt's evidence has no reader for {hint!r}")


def _json(value: Any) -> JsonValue:
    if isinstance(value, EvidencePart):
        return value.as_record()
    if isinstance(value, (tuple, list)):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return typing.cast(JsonValue, value)
