"""What the workspace has shown the model, and the action schema's values it allows.

A small model copies whatever text is in front of it: a file's name as an edit's `old`, an
example as a path, a key spelled its own way in a file it never read. Constrained decoding
already holds an answer to the enabled tools; this holds its values to what exists, turn by
turn, so a wrong value cannot be generated at all:

- a path to read or list is one the overview or a listing showed (past `MAX_SHOWN_NAMES`, any
  relative path: the enum would cost more than it saves, and the pattern refuses nothing real),
  and a file is not read again while the conversation shows it whole and unchanged;
- no search is offered while the conversation shows every file there is whole and unchanged
  (the 1.5B, both files of a task read, searched for the words of the refusal it was given
  and of the note after that, to the step limit); no listing while the overview names every
  file there is (it would show nothing new);
- an existing file is edited only once read (in full or in the range the edit is in) and
  rewritten only once read in full; no file is changed while a file the task refers to by its
  kind alone (`opening_reads.referred_files`) is unread; a new file only where no file or folder is and, when the
  task says where it may write, only there;
- no final answer is offered on the turn after one the record held;
- `old` is a run of 1 to `MAX_RUN_LINES` consecutive whole lines of the file as read, one that
  occurs exactly once in it (what `apply_edit` takes), so a copy of the path, an example or an
  invented text cannot be spelled; a run the model already sent back as its own `new` is not
  offered again (the 1.5B, refused for an edit that changed nothing, sent the same one again,
  to the step limit).

The view is plain data, built by the gate's side from the record (`context/shown_view.py`); the
schema values are built here, in the standard library only, for every engine alike.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

CHANGES = ("edit_file", "patch_file", "write_file")  # the tools that change a file
MAX_SHOWN_NAMES = 400  # paths an enum names before the schema takes any relative path
MAX_RUN_LINES = 4  # the longest run of whole lines an edit's old text is
# Bytes of old-text choices one file offers; runs of fewer lines are offered first, so a file
# too long for runs of four keeps its single lines (a ranged read narrows it further).
MAX_RUN_BYTES_PER_FILE = 24_000
# A path the schema's patterns take: names of these characters, joined by "/".
_NAME = "[A-Za-z0-9_.@+,=~-]+"
ANY_PATH = f"{_NAME}(/{_NAME})*"


@dataclass(frozen=True)
class FileRead:
    """A file the model has read: its whole current text (what the gate checks a change
    against) and the lines it was shown, 1-based and inclusive (None: all of them)."""

    path: str
    text: str
    shown: tuple[int, int] | None = None
    # Old texts an edit of this file named with the same text as its new: not offered again.
    sent_unchanged: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkspaceView:
    """What the model has been shown: the files and folders the overview and its listings
    named, the files it read that it may change, every path that exists (a new file may not
    take one) and where it may create a file (the task's editable paths; None: anywhere a
    path rule allows)."""

    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    reads: tuple[FileRead, ...] = ()
    existing: tuple[str, ...] = ()
    new_files_under: tuple[str, ...] | None = None
    # Which of `existing` are files: nothing can be made under one (`notes.md/1` is no path).
    existing_files: tuple[str, ...] = ()
    # Paths a read may also take, as a pattern (ranges of the results externalized so far).
    read_pattern: str | None = None
    # Files the conversation still shows whole, their bytes unchanged since: a read of one
    # shows nothing new (the 1.5B read two files, ran the test, then read both again to the
    # step limit instead of editing).
    shown_whole: tuple[str, ...] = ()
    # Files the task refers to (by their kind alone) that the model has not read: no change
    # is offered until it has (the 1.5B, held for not reading the task's "JSON defaults" and
    # given the read as its next call, edited the constant with its old value instead).
    read_first: tuple[str, ...] = ()
    # Whether the overview named every file there is: a listing shows nothing it did not (the
    # 1.5B spent the first of its eight steps listing a folder of three files it was shown).
    listed_whole: bool = False
    # False on the turn after a final answer the record held: that turn is an action (the
    # 1.5B, held for a test it had not run, sent the same untrue final answer again, which
    # ends the run; offered only actions, it takes one, the note's next call most often).
    final_offered: bool = True


def view_choices(
    tool: str,
    properties: dict[str, Any],
    required: list[str],
    view: WorkspaceView,
    text_patterns: bool = True,
) -> list[dict[str, Any]]:
    """The schema branches of `tool` under `view`, from its plain branch's `properties`: the
    paths narrowed to what was shown, and an edit or a rewrite one branch per file read (none:
    the tool cannot be called yet); a hunk held to `hunk_pattern` only with `text_patterns`."""

    def branch(**values: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {**properties, **values},
            "required": required,
            "additionalProperties": False,
        }

    if tool == "list_files":
        return [] if view.listed_whole else [branch(path=path_schema([".", *view.folders]))]
    if tool == "read_file":
        unread = [path for path in view.files if path not in view.shown_whole]
        if not unread and view.read_pattern is None:
            return []  # every file shown is in view whole: nothing to read
        return [branch(path=path_schema(unread, view.read_pattern))]
    if tool == "search_files":
        shown = set(view.shown_whole)
        if view.existing_files and shown.issuperset(view.existing_files):
            return []  # every file there is in view whole: a search finds nothing new
        return [branch()]
    if tool in CHANGES and view.read_first:
        return []  # read what the task refers to first: the grammar, not a refusal
    if tool == "edit_file":
        choices = []
        for read in view.reads:
            runs = old_runs(read)
            old = {"type": "string"} if runs is None else {"enum": list(runs)}
            if runs != ():
                choices.append(branch(path={"const": read.path}, old=old))
        return choices
    if tool == "patch_file":
        choices = []
        for read in view.reads:
            pattern = hunk_pattern(read) if text_patterns else None
            diff = {"type": "string"} if pattern is None else {"type": "string", "pattern": pattern}
            choices.append(branch(path={"const": read.path}, diff=diff))
        return choices
    if tool == "write_file":
        whole = [read.path for read in view.reads if read.shown is None]
        choices = [branch(path={"enum": whole})] if whole else []
        pattern = new_path_pattern(view.existing, view.new_files_under, view.existing_files)
        if pattern is not None:
            choices.append(branch(path={"type": "string", "pattern": f"^({pattern})$"}))
        return choices
    return [branch()]


def path_schema(names: Iterable[str], extra_pattern: str | None = None) -> dict[str, Any]:
    """One of `names` (any relative path past `MAX_SHOWN_NAMES`), or a path `extra_pattern`
    matches."""
    listed = list(dict.fromkeys(names))
    if len(listed) > MAX_SHOWN_NAMES:
        return {"type": "string", "pattern": f"^{ANY_PATH}$"}
    choices: list[dict[str, Any]] = []
    if listed:
        choices.append({"enum": listed})
    if extra_pattern is not None:
        choices.append({"type": "string", "pattern": f"^({extra_pattern})$"})
    if not choices:
        return {"enum": ["."]}
    return choices[0] if len(choices) == 1 else {"anyOf": choices}


def old_runs(read: FileRead) -> tuple[str, ...] | None:
    """The old texts an edit of `read` may name: runs of 1 to `MAX_RUN_LINES` whole lines
    within the lines shown, neither first nor last line blank, occurring once in the file, not
    one the model sent back unchanged; shorter runs first, within
    `MAX_RUN_BYTES_PER_FILE`. None: not even its single lines fit (the old text is then any
    string, and a miss is refused as without a view)."""
    lines = read.text.split("\n")
    first, last = read.shown or (1, len(lines))
    first, last = max(first, 1), min(last, len(lines))
    unchanged = set(read.sent_unchanged)
    runs: list[str] = []
    size = 0
    for height in range(1, MAX_RUN_LINES + 1):
        for start in range(first - 1, last - height + 1):
            if not lines[start].strip() or not lines[start + height - 1].strip():
                continue  # a blank line at either end: the same edit without it is offered
            run = "\n".join(lines[start : start + height])
            if run in unchanged or _occurs_twice(read.text, run):
                continue
            size += len(run.encode("utf-8")) + 4
            if size > MAX_RUN_BYTES_PER_FILE:
                return tuple(runs) if height > 1 else None
            runs.append(run)
    return tuple(runs)


def hunk_pattern(read: FileRead) -> str | None:
    """A pattern of the hunks a patch of `read` may be: a diff's header lines (`---`, `@@`),
    then
    lines each a line of the file within the lines shown after "-" (removed) or " " (kept), or
    a new line after "+"; every line ends with a newline. That the file's lines are
    consecutive and in order is the gate's to refuse (`gate/patches.py`): a pattern that says
    so nests an optional group per line and grows as the file times the hunk's height. The
    file's lines are alternatives that each end with the newline, longest first, so no choice
    is a prefix of another. None: the lines shown do not fit `MAX_RUN_BYTES_PER_FILE` (the
    diff is then any string, and a miss is refused)."""
    lines = read.text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's last newline ends its last line
    first, last = read.shown or (1, len(lines))
    shown = lines[max(first, 1) - 1 : min(last, len(lines))]
    if not shown:
        return None
    texts = sorted({line for line in shown if line}, key=lambda line: (-len(line), line))
    choices = [literal_pattern(line) + r"\n" for line in texts]
    if "" in shown:
        choices.append(r"\n")
    kept = f"[ -]({'|'.join(choices)})" + ("" if "" not in shown else r"|\n")
    pattern = f"^({_HEADER})*({kept}|{_ADDED})*$"
    if len(pattern.encode("utf-8")) > MAX_RUN_BYTES_PER_FILE:
        return None
    return pattern


# The lines a unified diff starts with (`git diff` writes them all) and a hunk's header.
_HEADER = r"(diff --git |index |--- |[+][+][+] |@@)[^\n]*\n"
_ADDED = r"[+][^\n]*\n"


def _occurs_twice(text: str, run: str) -> bool:
    start = text.find(run)
    return start == -1 or text.find(run, start + 1) != -1


def new_path_pattern(
    existing: Iterable[str], under: tuple[str, ...] | None, files: Iterable[str] = ()
) -> str | None:
    """A pattern of the paths a new file may take: under one of `under` (a folder, or a file
    to create; None: anywhere), none of `existing` (a file or folder there already) and none
    under one of `files` (the existing paths that are files). None: nowhere."""
    taken = set(existing)
    file_paths = set(files) & taken
    if len(taken) > MAX_SHOWN_NAMES:
        taken, file_paths = set(), set()  # too many to spell out: the gate says what is taken
    choices = []
    for item in [""] if under is None else sorted({item.strip("/") for item in under}):
        if item in ("", "."):
            choices.append(_path_except(taken, file_paths))
            continue
        if item not in taken:
            choices.append(literal_pattern(item))
        if item in file_paths:
            continue  # an editable file that exists: nothing goes under it
        prefix = item + "/"
        tails = {path[len(prefix) :] for path in taken if path.startswith(prefix)}
        tail_files = {path[len(prefix) :] for path in file_paths if path.startswith(prefix)}
        choices.append(literal_pattern(prefix) + _path_except(tails, tail_files))
    return "|".join(f"({choice})" for choice in choices) if choices else None


# The characters of a path the patterns take ("-" last, so a class needs no escape).
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@+,=~/-"


def literal_pattern(text: str) -> str:
    """`text` as a pattern every engine reads alike (llguidance's regex, llama.cpp's
    converter): punctuation as a one-character class; the four characters a class must escape
    (a file's line may hold them, a path never does) escaped in it."""
    return "".join(
        char
        if char.isalnum() or char in "_/@,="
        else f"[\\{char}]"
        if char in "\\]^["
        else f"[{char}]"
        for char in text
    )


@functools.lru_cache(maxsize=512)
def _free_class(taken: frozenset[str], slash: bool) -> str:
    """The class of the path characters not in `taken` (nor "/" unless `slash`)."""
    return _class(char for char in _ALPHABET if char not in taken and (slash or char != "/"))


def _class(chars: Iterable[str]) -> str:
    """A character class of `chars` in ranges of consecutive codes ("-" last, alone)."""
    chars = set(chars)
    codes = sorted({ord(char) for char in chars if char != "-"})
    parts: list[str] = []
    start = 0
    while start < len(codes):
        end = start
        while end + 1 < len(codes) and codes[end + 1] == codes[end] + 1:
            end += 1
        low, high = chr(codes[start]), chr(codes[end])
        parts.append(low if low == high else low + high if end == start + 1 else low + "-" + high)
        start = end + 1
    return "[" + "".join(parts) + ("-" if "-" in chars else "") + "]"


_REST = _class(_ALPHABET) + "*"


# The mark of a trie node where a taken path that is a file ends: no "/" may follow it.
_FILE = "\0"


def _path_except(taken: set[str], files: Collection[str] = ()) -> str:
    """A pattern of every path after `prefix` (names of `_ALPHABET`) except those in `taken`
    and those under one of `files`: a trie of the taken paths, each node offering every way to
    leave it."""
    trie: dict[str, Any] = {}
    for path in taken:
        node = trie
        for char in path:
            node = node.setdefault(char, {})
        node[""] = {}
        if path in files:
            node[_FILE] = {}
    return _except(trie, at_start=True)


def _except(node: dict[str, Any], *, at_start: bool, after_slash: bool = False) -> str:
    """Paths that leave the trie at `node`: end here (when no taken path ends here), take a
    character no taken path takes here and anything after, or follow a taken path's character
    and leave the trie further on."""
    children = [key for key in node if key and key != _FILE]
    branches: list[str] = []
    if not at_start and not after_slash and "" not in node:
        branches.append("")
    slash = not (at_start or after_slash or _FILE in node)
    branches.append(_free_class(frozenset(children), slash) + _REST)
    for char in sorted(children):
        rest = _except(node[char], at_start=False, after_slash=char == "/")
        branches.append(literal_pattern(char) + "(" + rest + ")")
    return "(" + "|".join(branches) + ")"
