"""The few git plumbing calls evidence needs, through the `git` program itself.

Every call reads objects or writes a note; none reads the index or runs a hook, and
`core.fsmonitor` and `core.hooksPath` are pinned off so that a repository's own config cannot
turn a verification into running its code.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError

NOTES_REF = "refs/notes/counterfoil"
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


@dataclass(frozen=True)
class Repository:
    """A git work tree's top folder, and where a Counterfoil root sits inside it."""

    top: Path

    def git(self, *arguments: str, input: bytes | None = None) -> bytes:
        try:
            done = subprocess.run(
                ["git", *_SAFE, "-C", str(self.top), *arguments],
                input=input,
                capture_output=True,
                check=False,
                timeout=120,
            )
        except FileNotFoundError:
            raise AgentError("git is not installed") from None
        except subprocess.TimeoutExpired:
            raise AgentError(f"git {arguments[0]} took over 120 s") from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise AgentError(f"git {arguments[0]}: {message[-1] if message else 'failed'}")
        return done.stdout

    def commit(self, revision: str) -> str:
        """The full id of the commit `revision` names."""
        if revision.startswith("-"):
            raise AgentError(f"{revision!r} is not a revision")
        try:
            out = self.git(
                "rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"
            )
        except AgentError:
            raise AgentError(f"{revision!r} names no commit in {self.top}") from None
        return out.decode("ascii").strip()

    def first_parent(self, commit: str) -> str | None:
        """The first parent of `commit`, or None for a root commit."""
        ids = self.git("rev-list", "--parents", "-n", "1", commit).decode("ascii").split()
        return ids[1] if len(ids) > 1 else None

    def changed_paths(self, commit: str) -> set[str]:
        """The paths `commit`'s tree changes against its first parent's tree (every path of a
        root commit). Two trees are compared, never the commit alone: for a merge, `diff-tree`
        of the commit prints nothing, and a merge could then carry any change unseen."""
        parent = self.first_parent(commit)
        trees = [parent, commit] if parent is not None else ["--root", commit]
        out = self.git(
            "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--no-renames", *trees
        )
        return {item.decode("utf-8", "surrogateescape") for item in out.split(b"\0") if item}

    def _files(self, commit: str) -> dict[str, tuple[str, str]]:
        """Each file's (mode, blob id) in `commit`: regular files, executables and symlinks."""
        tree = self.git("ls-tree", "-r", "-z", "--full-tree", commit)
        found: dict[str, tuple[str, str]] = {}
        for entry in tree.split(b"\0"):
            if not entry:
                continue
            meta, _, name = entry.partition(b"\t")
            mode, kind, object_id = meta.split()
            if kind == b"blob" and mode != b"160000":
                path = name.decode("utf-8", "surrogateescape")
                found[path] = (mode.decode("ascii"), object_id.decode("ascii"))
        return found

    def modes(self, commit: str, paths: list[str]) -> dict[str, str | None]:
        """Each path's tree-entry mode in `commit` (`100644`, `100755`, `120000` for a symlink);
        None where the commit holds no file there."""
        files = self._files(commit)
        return {path: files[path][0] if path in files else None for path in paths}

    def blobs(self, commit: str, paths: list[str]) -> dict[str, bytes | None]:
        """Each path's bytes in `commit` (a symlink's: its target text); None where the commit
        holds no file there."""
        ids = {path: blob for path, (_, blob) in self._files(commit).items()}
        result: dict[str, bytes | None] = {}
        for path in paths:
            blob = ids.get(path)
            result[path] = None if blob is None else self.git("cat-file", "blob", blob)
        return result

    def add_note(self, commit: str, text: str) -> None:
        self.git(
            "notes",
            "--ref",
            NOTES_REF,
            "add",
            "--force",
            "--file",
            "-",
            commit,
            input=text.encode("utf-8"),
        )

    def note(self, commit: str) -> bytes | None:
        """The evidence note on `commit`, or None when it has none."""
        try:
            return self.git("notes", "--ref", NOTES_REF, "show", commit)
        except AgentError as error:
            if "no note found" in str(error).lower():
                return None
            raise


def repository_of(folder: Path) -> tuple[Repository, str]:
    """The repository holding `folder`, and `folder`'s path inside it (`""` or ending in `/`)."""
    probe = Repository(folder)
    try:
        top = probe.git("rev-parse", "--show-toplevel").decode("utf-8").strip()
        prefix = probe.git("rev-parse", "--show-prefix").decode("utf-8").strip()
    except AgentError:
        raise AgentError(f"{folder} is not inside a git repository") from None
    return Repository(Path(top)), prefix
