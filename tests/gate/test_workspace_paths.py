"""Model-given paths stay inside the root, and reads refuse what is not plain text."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ReceiptStore, ToolAction, ToolPolicy, Workspace

RECEIPT_LOG = ".agent-receipts.jsonl"


def refusal(workspace: Workspace, raw: object, *, must_exist: bool = True) -> str:
    with pytest.raises(AgentError) as caught:
        workspace.resolve_path(raw, must_exist=must_exist)  # type: ignore[arg-type]
    return str(caught.value)


def assert_refused(workspace: Workspace, tool: str, raw: str, message: str) -> None:
    """The direct method raises `message`; the gate returns it as `error: message`."""
    with pytest.raises(AgentError) as caught:
        getattr(workspace, tool)(raw)
    assert str(caught.value) == message
    assert workspace.execute(ToolAction(tool, {"path": raw})) == f"error: {message}"


def in_thread(call: object, timeout: float = 5.0) -> object:
    """Run `call` in a thread; a call still blocked after `timeout` fails the test."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = call()  # type: ignore[operator]
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the call blocked"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]


# resolve_path: the rules, in order


@pytest.mark.parametrize("raw", ["", None, 3, b"a.py", ["a.py"]])
def test_empty_or_non_string_path_is_refused(tmp_path: Path, raw: object) -> None:
    assert refusal(make_workspace(tmp_path), raw) == "path must be a non-empty string"


@pytest.mark.parametrize(
    "raw", ["/etc/passwd", "../outside.txt", "src/../../outside.txt", "src/../app.py", ".."]
)
def test_absolute_or_parent_path_is_refused(tmp_path: Path, raw: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    assert (
        refusal(make_workspace(tmp_path), raw) == "path must be relative and stay in the workspace"
    )


def test_parent_rule_comes_before_protected_names(tmp_path: Path) -> None:
    assert refusal(make_workspace(tmp_path), "../.env") == (
        "path must be relative and stay in the workspace"
    )


@pytest.mark.parametrize(
    "raw",
    [
        ".aws",
        ".env",
        ".git",
        ".ssh",
        "credentials",
        "id_ed25519",
        "id_rsa",
        ".ENV",
        ".Git",
        "CREDENTIALS",
        "Id_Rsa",
        ".env.local",
        ".ENV.production",
        "server.key",
        "cert.pem",
        "cert.PEM",
        "config/.env",
        "config/service.key",
    ],
)
def test_protected_names_are_not_accessible(tmp_path: Path, raw: str) -> None:
    target = tmp_path / raw
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("secret\n")
    workspace = make_workspace(tmp_path)
    assert refusal(workspace, raw) == "path is not accessible"
    assert workspace.execute(ToolAction("read_file", {"path": raw})) == (
        "error: path is not accessible"
    )


@pytest.mark.parametrize("raw", [".git/config", ".ssh/known_hosts", "credentials/aws.txt"])
def test_files_under_protected_directories_are_not_accessible(tmp_path: Path, raw: str) -> None:
    target = tmp_path / raw
    target.parent.mkdir(parents=True)
    target.write_text("secret\n")
    assert refusal(make_workspace(tmp_path), raw) == "path is not accessible"


def test_protected_names_are_refused_even_when_missing(tmp_path: Path) -> None:
    assert refusal(make_workspace(tmp_path), ".env.local", must_exist=False) == (
        "path is not accessible"
    )


def test_protected_rule_comes_before_the_symlink_rule(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x\n")
    os.symlink(tmp_path / "real.txt", tmp_path / "server.pem")
    assert refusal(make_workspace(tmp_path), "server.pem") == "path is not accessible"


@pytest.mark.parametrize(
    "raw",
    [
        ".gitignore",
        ".github/workflows/ci.yml",
        ".prettierrc",
        "keys.txt",
        "environment.yml",
        "config",
        "docker/config.json",
        ".vscode/extensions.json",
        ".vscode/launch.json",
        "settings.json",
    ],
)
def test_other_hidden_and_similar_names_are_fine(tmp_path: Path, raw: str) -> None:
    target = tmp_path / raw
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("fine\n")
    assert make_workspace(tmp_path).resolve_path(raw) == tmp_path.resolve() / raw


def test_symlinked_file_pointing_inside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("x = 1\n")
    os.symlink(tmp_path / "real.py", tmp_path / "alias.py")
    assert refusal(make_workspace(tmp_path), "alias.py") == "symlinks are not accessible"


def test_symlinked_file_pointing_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    os.symlink(tmp_path / "outside.txt", root / "outside.txt")
    workspace = make_workspace(root)
    assert refusal(workspace, "outside.txt") == "symlinks are not accessible"
    assert workspace.execute(ToolAction("read_file", {"path": "outside.txt"})) == (
        "error: symlinks are not accessible"
    )


def test_symlinked_directory_pointing_inside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x = 1\n")
    os.symlink(tmp_path / "src", tmp_path / "alias")
    workspace = make_workspace(tmp_path)
    assert refusal(workspace, "alias") == "symlinks are not accessible"
    assert refusal(workspace, "alias/main.py") == "symlinks are not accessible"


def test_symlinked_directory_pointing_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    os.symlink(tmp_path / "outside", root / "linked")
    workspace = make_workspace(root)
    assert refusal(workspace, "linked/secret.txt") == "symlinks are not accessible"
    assert refusal(workspace, "linked/new.txt", must_exist=False) == ("symlinks are not accessible")
    assert workspace.execute(ToolAction("list_files", {"path": "linked"})) == (
        "error: symlinks are not accessible"
    )


def test_dangling_symlink_is_refused_as_a_symlink(tmp_path: Path) -> None:
    os.symlink(tmp_path / "nowhere.py", tmp_path / "dangling.py")
    assert refusal(make_workspace(tmp_path), "dangling.py") == "symlinks are not accessible"


def test_missing_path_is_not_accessible(tmp_path: Path) -> None:
    assert refusal(make_workspace(tmp_path), "missing.py") == "path is not accessible"


def test_dot_prefix_normalises_to_the_plain_path(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("y = 2\n")
    workspace = make_workspace(tmp_path)
    assert workspace.resolve_path("./a.py") == tmp_path.resolve() / "a.py"
    assert workspace.resolve_path("src/./main.py") == tmp_path.resolve() / "src" / "main.py"


def test_missing_path_is_returned_when_it_need_not_exist(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    assert workspace.resolve_path("new.py", must_exist=False) == tmp_path.resolve() / "new.py"
    assert workspace.resolve_path("./new/deeper.py", must_exist=False) == (
        tmp_path.resolve() / "new" / "deeper.py"
    )


def test_must_exist_false_still_applies_the_other_rules(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    assert refusal(workspace, "../new.py", must_exist=False) == (
        "path must be relative and stay in the workspace"
    )
    assert refusal(workspace, "", must_exist=False) == "path must be a non-empty string"


@pytest.mark.parametrize("raw", ["a\0.py", "\0", "src/\0/x.py"])
def test_nul_bytes_are_refused_with_a_clear_error(tmp_path: Path, raw: str) -> None:
    workspace = make_workspace(tmp_path, allow_writes=True)
    assert "NUL" in refusal(workspace, raw)
    assert "NUL" in refusal(workspace, raw, must_exist=False)
    assert workspace.execute(ToolAction("read_file", {"path": raw})).startswith("error: path")
    assert workspace.execute(ToolAction("write_file", {"path": raw, "content": "x"})).startswith(
        "error: path"
    )


@pytest.mark.parametrize("raw", ["\ud800.py", "src/\udc80.py"])
def test_paths_that_are_not_valid_unicode_are_refused(tmp_path: Path, raw: str) -> None:
    (tmp_path / "src").mkdir()
    workspace = make_workspace(tmp_path, allow_writes=True)
    assert refusal(workspace, raw) == "path must be valid Unicode text"
    assert refusal(workspace, raw, must_exist=False) == "path must be valid Unicode text"
    action = ToolAction("write_file", {"path": raw, "content": "x"})
    assert make_workspace(workspace.policy, confirm_tool=lambda _action: True).execute(action) == (
        "error: path must be valid Unicode text"
    )
    assert sorted(os.listdir(tmp_path)) == ["src"]
    assert os.listdir(tmp_path / "src") == []


@pytest.mark.parametrize("raw", ["a" * 300, "src/" + "b" * 300 + ".py", "a/" * 2500])
def test_over_long_names_are_refused_with_a_clear_error(tmp_path: Path, raw: str) -> None:
    (tmp_path / "src").mkdir()
    workspace = make_workspace(tmp_path, allow_writes=True)
    assert "too long" in refusal(workspace, raw)
    assert "too long" in refusal(workspace, raw, must_exist=False)
    for action in (
        ToolAction("read_file", {"path": raw}),
        ToolAction("list_files", {"path": raw}),
        ToolAction("write_file", {"path": raw, "content": "x"}),
    ):
        assert workspace.execute(action) == "error: path is too long"


# list_files


def test_list_files_shows_direct_children_sorted(demo_project: Path) -> None:
    listing = make_workspace(demo_project).list_files()
    assert listing.splitlines() == [
        "file app.py",
        "file conftest.py",
        "file greeting.py",
        "dir tests",
        "file validate.py",
    ]


def test_list_files_paths_are_relative_to_the_root(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "main.py").write_text("x = 1\n")
    listing = make_workspace(tmp_path).list_files("src")
    assert listing == "file src/main.py\ndir src/pkg"


def test_list_files_default_is_the_root(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    workspace = make_workspace(tmp_path)
    assert workspace.list_files() == "dir src"
    assert workspace.list_files(".") == "dir src"
    assert workspace.execute(ToolAction("list_files", {})) == "dir src"


def test_list_files_skips_symlinks_protected_names_and_special_files(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("*.pyc\n")
    (tmp_path / ".env").write_text("TOKEN=1\n")
    (tmp_path / ".env.local").write_text("TOKEN=2\n")
    (tmp_path / "server.key").write_text("key\n")
    (tmp_path / "cert.PEM").write_text("pem\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / "Credentials").mkdir()
    os.symlink(tmp_path / "app.py", tmp_path / "alias.py")
    os.symlink(tmp_path / ".git", tmp_path / "linked")
    os.mkfifo(tmp_path / "pipe")
    assert make_workspace(tmp_path).list_files() == "file .gitignore\nfile app.py"


def test_list_files_stops_at_max_list_entries(tmp_path: Path) -> None:
    for name in ("d.py", "a.py", "c.py", "b.py"):
        (tmp_path / name).write_text("x\n")
    listing = make_workspace(tmp_path, max_list_entries=2).list_files()
    assert listing == "file a.py\nfile b.py"


def test_list_files_reports_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert make_workspace(tmp_path).list_files("empty") == "(empty directory)"


def test_list_files_of_only_hidden_entries_reports_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOKEN=1\n")
    os.symlink(tmp_path / ".env", tmp_path / "alias")
    assert make_workspace(tmp_path).list_files() == "(empty directory)"


def test_list_files_of_a_file_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    assert_refused(make_workspace(tmp_path), "list_files", "app.py", "path is not a directory")


def test_list_files_of_a_fifo_is_not_a_directory(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(AgentError, match="^path is not a directory$"):
        in_thread(lambda: make_workspace(tmp_path).list_files("pipe"))


# read_file


def test_read_file_returns_the_text(demo_project: Path) -> None:
    text = make_workspace(demo_project).read_file("app.py")
    assert text == (demo_project / "app.py").read_text(encoding="utf-8")


def test_read_file_through_execute_returns_the_text(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("café\n", encoding="utf-8")
    action = ToolAction("read_file", {"path": "./notes.md"})
    assert make_workspace(tmp_path).execute(action) == "café\n"


def test_read_file_of_a_directory_is_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert_refused(make_workspace(tmp_path), "read_file", "src", "path is not a regular file")


@pytest.mark.parametrize("raw", [".", "./"])
def test_read_file_of_the_root_is_not_a_regular_file(tmp_path: Path, raw: str) -> None:
    assert_refused(make_workspace(tmp_path), "read_file", raw, "path is not a regular file")


def test_read_file_of_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    workspace = make_workspace(tmp_path)
    with pytest.raises(AgentError, match="^path is not a regular file$"):
        in_thread(lambda: workspace.read_file("pipe"))
    result = in_thread(lambda: workspace.execute(ToolAction("read_file", {"path": "pipe"})))
    assert result == "error: path is not a regular file"


def test_read_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * 11)
    workspace = make_workspace(tmp_path, max_file_bytes=10)
    assert_refused(workspace, "read_file", "big.txt", "file exceeds 10 bytes")


def test_read_file_at_the_limit_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "exact.txt").write_bytes(b"x" * 10)
    assert make_workspace(tmp_path, max_file_bytes=10).read_file("exact.txt") == "x" * 10


def test_read_file_limit_counts_bytes_not_characters(tmp_path: Path) -> None:
    (tmp_path / "accents.txt").write_text("é" * 6, encoding="utf-8")
    with pytest.raises(AgentError, match="^file exceeds 10 bytes$"):
        make_workspace(tmp_path, max_file_bytes=10).read_file("accents.txt")


def test_read_file_of_invalid_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "binary.bin").write_bytes(b"\xff\xfe\x00\x81")
    assert_refused(make_workspace(tmp_path), "read_file", "binary.bin", "file is not valid UTF-8")


# The receipt log is the operator's, not the agent's


def log_workspace(root: Path) -> Workspace:
    policy = ToolPolicy(root, allow_writes=True)
    return make_workspace(
        policy, confirm_tool=lambda _action: True, store=ReceiptStore(root / RECEIPT_LOG)
    )


def test_receipt_log_cannot_be_read(tmp_path: Path) -> None:
    workspace = log_workspace(tmp_path)
    assert workspace.write_file("notes.md", "hello\n") == "wrote notes.md"
    assert (tmp_path / RECEIPT_LOG).is_file()
    for raw in (RECEIPT_LOG, f"./{RECEIPT_LOG}"):
        assert workspace.execute(ToolAction("read_file", {"path": raw})) == (
            "error: path is not accessible"
        )


def test_receipt_log_is_not_listed(tmp_path: Path) -> None:
    workspace = log_workspace(tmp_path)
    workspace.write_file("notes.md", "hello\n")
    assert workspace.list_files() == "file notes.md"


def test_receipt_log_cannot_be_written_even_before_it_exists(tmp_path: Path) -> None:
    workspace = log_workspace(tmp_path)
    action = ToolAction("write_file", {"path": RECEIPT_LOG, "content": "forged\n"})
    assert workspace.execute(action) == "error: path is not accessible"
    assert not (tmp_path / RECEIPT_LOG).exists()


def test_receipt_log_cannot_be_overwritten_once_it_exists(tmp_path: Path) -> None:
    workspace = log_workspace(tmp_path)
    workspace.write_file("notes.md", "hello\n")
    before = (tmp_path / RECEIPT_LOG).read_bytes()
    action = ToolAction("write_file", {"path": RECEIPT_LOG, "content": "forged\n"})
    assert workspace.execute(action) == "error: path is not accessible"
    assert (tmp_path / RECEIPT_LOG).read_bytes() == before


def test_receipt_log_in_a_subdirectory_is_not_accessible(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    policy = ToolPolicy(tmp_path, allow_writes=True)
    store = ReceiptStore(tmp_path / "logs" / "receipts.jsonl")
    workspace = make_workspace(policy, confirm_tool=lambda _action: True, store=store)
    workspace.write_file("notes.md", "hello\n")
    assert workspace.execute(ToolAction("read_file", {"path": "logs/receipts.jsonl"})) == (
        "error: path is not accessible"
    )
    assert workspace.execute(ToolAction("list_files", {"path": "logs"})) == (
        "error: path is not accessible"
    )


# Counterfoil protects more than the course's minimum


@pytest.mark.parametrize("raw", [" ", "   ", "\t", "\n", " \u3000 "])
def test_whitespace_only_path_is_refused(tmp_path: Path, raw: str) -> None:
    workspace = make_workspace(tmp_path, confirm_tool=lambda _action: True, allow_writes=True)
    assert refusal(workspace, raw) == "path must be a non-empty string"
    assert refusal(workspace, raw, must_exist=False) == "path must be a non-empty string"
    action = ToolAction("write_file", {"path": raw, "content": "x"})
    assert workspace.execute(action) == "error: path must be a non-empty string"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "raw",
    [
        ".envrc",
        ".env_local",
        ".env-prod",
        ".env~",
        ".ENVRC",
        "config/.envrc",
        ".netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".htpasswd",
        "id_ecdsa",
        "id_dsa",
        "client.p12",
        "CLIENT.PFX",
        ".docker/config.json",
        ".kube/config",
        "home/.Docker/Config.JSON",
        ".vscode/settings.json",
        ".vscode/tasks.json",
        "team.code-workspace",
    ],
)
def test_credential_files_and_editor_settings_are_not_accessible(tmp_path: Path, raw: str) -> None:
    target = tmp_path / raw
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("secret\n")
    workspace = make_workspace(tmp_path, confirm_tool=lambda _action: True, allow_writes=True)
    assert refusal(workspace, raw) == "path is not accessible"
    assert workspace.execute(ToolAction("read_file", {"path": raw})) == (
        "error: path is not accessible"
    )
    write = ToolAction("write_file", {"path": raw, "content": "changed\n"})
    assert workspace.execute(write) == "error: path is not accessible"
    assert target.read_text() == "secret\n"


@pytest.mark.parametrize("raw", [".envrc", ".vscode/settings.json", ".kube/config", "x.pfx"])
def test_protected_names_are_refused_for_new_files(tmp_path: Path, raw: str) -> None:
    (tmp_path / raw).parent.mkdir(parents=True, exist_ok=True)
    asked: list[object] = []
    policy = ToolPolicy(tmp_path, allow_writes=True)
    workspace = make_workspace(
        policy, confirm_proposal=lambda proposal: asked.append(proposal) or True
    )
    action = ToolAction("write_file", {"path": raw, "content": "forged\n"})
    assert workspace.execute(action) == "error: path is not accessible"
    assert asked == []
    assert not (tmp_path / raw).exists()


def test_list_files_skips_credential_files_and_editor_settings(tmp_path: Path) -> None:
    names = (".envrc", ".netrc", "bundle.p12", "app.py", ".vscode/settings.json")
    for name in (*names, ".vscode/extensions.json", ".kube/config", ".kube/notes.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    workspace = make_workspace(tmp_path)
    assert workspace.list_files() == "dir .kube\ndir .vscode\nfile app.py"
    assert workspace.list_files(".vscode") == "file .vscode/extensions.json"
    assert workspace.list_files(".kube") == "file .kube/notes.md"


def test_policy_protected_patterns_protect_names_and_paths(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    for name in ("secrets.yaml", "Notes.TXT", "deploy/prod.yaml", "deploy/dev.yaml", "app.py"):
        (tmp_path / name).write_text("x\n")
    workspace = make_workspace(tmp_path, protected_patterns=("secrets.*", "*.txt", "deploy/prod.*"))
    for raw in ("secrets.yaml", "Notes.TXT", "deploy/prod.yaml", "DEPLOY/prod.yaml"):
        assert refusal(workspace, raw, must_exist=False) == "path is not accessible"
    assert workspace.read_file("deploy/dev.yaml") == "x\n"
    assert workspace.list_files() == "file app.py\ndir deploy"
    assert workspace.list_files("deploy") == "file deploy/dev.yaml"


# Hard links: another name for an inode is not a way around the rules


def test_a_hard_link_to_a_file_outside_the_root_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    os.link(tmp_path / "outside.txt", root / "innocent.txt")
    workspace = make_workspace(root)
    assert_refused(workspace, "read_file", "innocent.txt", "file has other hard links")


def test_a_hard_link_to_a_protected_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOKEN=1\n")
    os.link(tmp_path / ".env", tmp_path / "notes.txt")
    assert_refused(make_workspace(tmp_path), "read_file", "notes.txt", "file has other hard links")


def test_a_file_that_gains_a_hard_link_after_the_check_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    workspace = make_workspace(tmp_path)
    checked = workspace.resolve_path

    def link_after_check(raw: str, *, must_exist: bool = True) -> Path:
        path = checked(raw, must_exist=must_exist)
        os.unlink(tmp_path / "notes.txt")
        os.link(tmp_path / "secret.txt", tmp_path / "notes.txt")
        return path

    workspace.resolve_path = link_after_check  # type: ignore[method-assign]
    with pytest.raises(AgentError, match="^file has other hard links$"):
        workspace.read_file("notes.txt")


def test_a_hard_link_to_the_receipt_log_is_the_receipt_log(tmp_path: Path) -> None:
    workspace = log_workspace(tmp_path)
    workspace.write_file("notes.md", "hello\n")
    os.link(tmp_path / RECEIPT_LOG, tmp_path / "alias.txt")
    assert_refused(workspace, "read_file", "alias.txt", "path is not accessible")
    assert workspace.list_files() == "file notes.md"


# list_files works through directory descriptors, as reads do


def test_list_files_does_not_follow_a_parent_swapped_for_a_symlink(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "inside.py").write_text("x\n")
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "outside-secret.txt").write_text("secret\n")
    workspace = make_workspace(root)
    checked = workspace.resolve_path

    def swap_after_check(raw: str, *, must_exist: bool = True) -> Path:
        path = checked(raw, must_exist=must_exist)
        (root / "src").rename(root / "src-real")
        (root / "src").symlink_to(outside)
        return path

    workspace.resolve_path = swap_after_check  # type: ignore[method-assign]
    with pytest.raises(AgentError, match="^symlinks are not accessible$"):
        workspace.list_files("src/pkg")


def test_list_files_racing_a_directory_symlink_swap_never_lists_outside_names(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real" / "inner").mkdir(parents=True)
    (root / "real" / "inner" / "inside.py").write_text("x\n")
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "outside-secret.txt").write_text("secret\n")
    (root / "link").symlink_to(outside)
    (root / "real").rename(root / "sub")
    workspace = make_workspace(root)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            (root / "sub").rename(root / "real")
            (root / "link").rename(root / "sub")
            (root / "sub").rename(root / "link")
            (root / "real").rename(root / "sub")

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    seen: set[str] = set()
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline:
            seen.add(workspace.execute(ToolAction("list_files", {"path": "sub/inner"})))
    finally:
        stop.set()
        swapper.join(5)
    assert not any("outside-secret" in listing for listing in seen)
    assert "file sub/inner/inside.py" in seen


# Temporary files of interrupted writes are neither listed nor accessible


TEMPORARY_NAMES = (".cf-0123456789ab.tmp", ".app.py.counterfoil-0123456789ab.tmp")


def test_temporary_files_are_not_listed(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    for name in TEMPORARY_NAMES:
        (tmp_path / name).write_text("x = 2\n")
    assert make_workspace(tmp_path).list_files() == "file app.py"


@pytest.mark.parametrize("name", TEMPORARY_NAMES)
def test_temporary_files_are_not_accessible(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("x = 2\n")
    workspace = make_workspace(tmp_path, confirm_tool=lambda _action: True, allow_writes=True)
    assert_refused(workspace, "read_file", name, "path is not accessible")
    write = ToolAction("write_file", {"path": f"src/{name}", "content": "x"})
    (tmp_path / "src").mkdir()
    assert workspace.execute(write) == "error: path is not accessible"
