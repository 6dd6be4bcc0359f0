"""search_files: the read rules hold for every hit, both engines agree, and the bounds hold."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.search.scope import SearchLimits
from counterfoil.step_facts import SearchHits

ENGINES = [
    pytest.param(
        "ripgrep",
        marks=pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed"),
    ),
    "python",
]
ENGINE_NAMES = ("ripgrep", "python")


def searcher(root: Path, engine: str, **limits: object) -> Workspace:
    limited = SearchLimits(**limits)  # type: ignore[arg-type]
    setup = WorkspaceSetup(search_engine=engine, search_limits=limited)
    return make_workspace(root, allow_search=True, setup=setup)


def search(workspace: Workspace, pattern: str, **arguments: object) -> str:
    return workspace.execute(ToolAction("search_files", {"pattern": pattern, **arguments}))


def hit_paths(observation: str) -> set[str]:
    return {line.split(":", 1)[0] for line in observation.splitlines() if ":" in line}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def fixture_tree(root: Path) -> Path:
    """A small project with every kind of file search must include or leave out."""
    write(root / "app.py", "import os\n\ndef main():\n    return greet('World')\n")
    write(root / "lib" / "greet.py", "def greet(name):\n    return f'Hello, {name}!'\r\n")
    write(root / "lib" / "deep" / "more.py", "# greet is defined in lib/greet.py\nGREETING = 1\n")
    write(root / "lib.txt", "greet me\n")
    write(root / ".hidden.cfg", "greet = on\n")
    write(root / "notes" / "ünïcode.md", "Grüße: greet\ntabs\tgreet\n")
    write(root / "data.bin", b"greet\x00\x01\x02")
    write(root / "latin1.txt", "caf\xe9 greet\n".encode("latin-1"))
    write(root / "empty.txt", "")
    return root


# The engines agree


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
@pytest.mark.parametrize(
    "pattern, literal",
    [
        ("greet", False),
        ("^def ", False),
        ("greet\\(", False),
        ("(?i)GRÜSSE|grüße", False),
        ("\\bmain\\b", False),
        ("\\d+$", False),
        ("[A-Z]{3,}", False),
        ("greet(", True),
        ("{name}", True),
        ("nothing matches this", False),
    ],
)
def test_ripgrep_and_python_give_the_same_hits(tmp_path: Path, pattern: str, literal: bool) -> None:
    root = fixture_tree(tmp_path)
    observations = [
        search(searcher(root, engine), pattern, literal=literal) for engine in ("ripgrep", "python")
    ]
    assert observations[0] == observations[1]
    assert not observations[0].startswith("error:")


@pytest.mark.parametrize("engine", ENGINES)
def test_hits_are_path_line_text_in_path_order(tmp_path: Path, engine: str) -> None:
    observation = search(searcher(fixture_tree(tmp_path), engine), "greet")
    assert observation.splitlines() == [
        ".hidden.cfg:1: greet = on",
        "app.py:4:     return greet('World')",
        "lib/deep/more.py:1: # greet is defined in lib/greet.py",
        "lib/greet.py:1: def greet(name):",
        "lib.txt:1: greet me",
        "notes/ünïcode.md:1: Grüße: greet",
        "notes/ünïcode.md:2: tabs\tgreet",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_search_skips_binary_and_non_utf8_files(tmp_path: Path, engine: str) -> None:
    observation = search(searcher(fixture_tree(tmp_path), engine), "greet")
    assert not hit_paths(observation) & {"data.bin", "latin1.txt"}


@pytest.mark.parametrize("engine", ENGINES)
def test_search_under_a_path_stays_under_it(tmp_path: Path, engine: str) -> None:
    observation = search(searcher(fixture_tree(tmp_path), engine), "greet", path="lib")
    assert hit_paths(observation) == {"lib/greet.py", "lib/deep/more.py"}
    single = search(searcher(tmp_path, engine), "greet", path="lib/greet.py")
    assert hit_paths(single) == {"lib/greet.py"}


# The read rules


@pytest.mark.parametrize("engine", ENGINES)
def test_search_does_not_follow_symlinked_directories_or_files(tmp_path: Path, engine: str) -> None:
    root = tmp_path / "root"
    write(root / "inside.py", "needle\n")
    outside = write(tmp_path / "outside" / "secret.py", "needle\n")
    (root / "linked-dir").symlink_to(outside.parent, target_is_directory=True)
    (root / "linked-file.py").symlink_to(outside)
    (root / "loop").symlink_to(root, target_is_directory=True)
    workspace = searcher(root, engine)
    assert hit_paths(search(workspace, "needle")) == {"inside.py"}
    assert search(workspace, "needle", path="linked-dir") == ("error: symlinks are not accessible")


@pytest.mark.parametrize("engine", ENGINES)
def test_search_leaves_out_protected_names(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "visible.py", "token\n")
    for name in (".env", ".env.local", "server.pem", "deploy.key", "credentials"):
        write(tmp_path / name, "token\n")
    write(tmp_path / ".git" / "config", "token\n")
    write(tmp_path / ".ssh" / "config", "token\n")
    write(tmp_path / "sub" / ".aws" / "credentials", "token\n")
    workspace = searcher(tmp_path, engine)
    assert hit_paths(search(workspace, "token")) == {"visible.py"}
    assert search(workspace, "token", path=".ssh") == "error: path is not accessible"


@pytest.mark.parametrize("engine", ENGINES)
def test_search_leaves_out_the_receipt_log(tmp_path: Path, engine: str) -> None:
    log = tmp_path / "logs" / "receipts.jsonl"
    store = ReceiptStore(log)
    write(log, '{"tool":"write_file"}\n')
    write(tmp_path / "app.py", "write_file\n")
    setup = WorkspaceSetup(search_engine=engine)
    workspace = make_workspace(tmp_path, store=store, allow_search=True, setup=setup)
    assert hit_paths(search(workspace, "write_file")) == {"app.py"}
    assert search(workspace, "x", path="logs/receipts.jsonl") == "error: path is not accessible"


@pytest.mark.parametrize("engine", ENGINES)
def test_search_leaves_out_the_log_head_and_the_content_store(tmp_path: Path, engine: str) -> None:
    log = tmp_path / "logs" / "receipts.jsonl"
    store = ReceiptStore(log)
    write(tmp_path / "logs" / "receipts.jsonl.head", "secret_marker\n")
    write(tmp_path / "logs" / "objects" / ("a" * 64), "secret_marker\n")
    write(tmp_path / "app.py", "secret_marker\n")
    setup = WorkspaceSetup(search_engine=engine)
    workspace = make_workspace(tmp_path, store=store, allow_search=True, setup=setup)
    assert hit_paths(search(workspace, "secret_marker")) == {"app.py"}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("engine", ENGINES)
def test_search_respects_gitignore_in_a_git_checkout(tmp_path: Path, engine: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / ".gitignore", "build/\n*.log\n")
    write(tmp_path / "src" / ".gitignore", "generated.py\n")
    write(tmp_path / "src" / "main.py", "needle\n")
    write(tmp_path / "src" / "generated.py", "needle\n")
    write(tmp_path / "build" / "out.py", "needle\n")
    write(tmp_path / "run.log", "needle\n")
    write(tmp_path / "untracked.py", "needle\n")
    assert hit_paths(search(searcher(tmp_path, engine), "needle")) == {
        "src/main.py",
        "untracked.py",
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_gitignore_means_nothing_outside_a_git_checkout(tmp_path: Path, engine: str) -> None:
    write(tmp_path / ".gitignore", "*.log\n")
    write(tmp_path / "run.log", "needle\n")
    assert hit_paths(search(searcher(tmp_path, engine), "needle")) == {"run.log"}


@pytest.mark.parametrize("engine", ENGINES)
def test_search_never_blocks_on_a_fifo(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "app.py", "needle\n")
    os.mkfifo(tmp_path / "pipe")
    outcome: list[str] = []
    thread = threading.Thread(
        target=lambda: outcome.append(search(searcher(tmp_path, engine), "needle")), daemon=True
    )
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "search blocked on a FIFO"
    assert hit_paths(outcome[0]) == {"app.py"}
    assert search(searcher(tmp_path, engine), "x", path="pipe") == (
        "error: path is not a regular file"
    )


# Bounds


@pytest.mark.parametrize("engine", ENGINES)
def test_hits_stop_at_max_hits_and_say_so(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "many.txt", "hit\n" * 50)
    observation = search(searcher(tmp_path, engine, max_hits=5), "hit")
    lines = observation.splitlines()
    assert lines[:5] == [f"many.txt:{n}: hit" for n in range(1, 6)]
    assert lines[5].startswith("[first 5 hits")
    assert len(lines) == 6


@pytest.mark.parametrize("engine", ENGINES)
def test_long_lines_are_shortened(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "wide.txt", "x" * 5000 + " needle\n")
    observation = search(searcher(tmp_path, engine, max_line_chars=40), "needle")
    assert observation == "wide.txt:1: " + "x" * 40 + "…"


@pytest.mark.parametrize("engine", ENGINES)
def test_files_over_the_search_size_are_skipped(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "big.txt", "needle\n" + "x" * 2000)
    write(tmp_path / "small.txt", "needle\n")
    observation = search(searcher(tmp_path, engine, max_file_bytes=1000), "needle")
    assert hit_paths(observation) == {"small.txt"}


def test_python_walk_stops_at_max_files(tmp_path: Path) -> None:
    for index in range(20):
        write(tmp_path / f"f{index:02}.txt", "needle\n")
    observation = search(searcher(tmp_path, "python", max_files=5), "needle")
    assert observation.splitlines()[-1] == "[stopped after 5 files; give a narrower path]"
    assert len(hit_paths(observation)) == 5


@pytest.mark.parametrize("engine", ENGINES)
def test_search_stops_at_the_time_limit(tmp_path: Path, engine: str) -> None:
    for index in range(200):
        write(tmp_path / f"d{index}" / "file.txt", "needle\n" * 1000)
    observation = search(searcher(tmp_path, engine, max_seconds=0.01, max_hits=10**6), "needle")
    assert observation.splitlines()[-1] == "[stopped at the time limit; give a narrower path]"


# What a search found, on its record


@pytest.mark.parametrize("engine", ENGINES)
def test_a_search_counts_the_lines_it_found_on_its_record(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "a.txt", "needle\nhay\nneedle\n")

    step = searcher(tmp_path, engine).execute_step(
        ToolAction("search_files", {"pattern": "needle"})
    )

    assert step.search == SearchHits(2, complete=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_search_that_finds_nothing_says_so_by_its_count(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "a.txt", "hay\n")

    step = searcher(tmp_path, engine).execute_step(
        ToolAction("search_files", {"pattern": "needle"})
    )

    assert step.search is not None and step.search.none_found
    assert step.observation == "(no matches)"  # the model's words; no layer reads them back


def test_a_search_stopped_at_a_limit_has_not_found_nothing(tmp_path: Path) -> None:
    for index in range(20):
        write(tmp_path / f"f{index:02}.txt", "hay\n")

    step = searcher(tmp_path, "python", max_files=5).execute_step(
        ToolAction("search_files", {"pattern": "needle"})
    )

    assert step.search == SearchHits(0, complete=False)
    assert not step.search.none_found


# Patterns and the policy


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("", "pattern must be a non-empty string"),
        ("a\nb", "pattern must be one line"),
        ("foo(?=bar)", "look-around"),
        ("(?<!x)y", "look-around"),
        ("(a)\\1", "escape \\1"),
        ("\\p{L}", "escape \\p"),
        ("(?x)a b", "flags"),
        ("[", "not a valid regular expression"),
        ("a\\/b", "escape \\/"),
        ("(?#note)a", "comments"),
    ],
)
def test_patterns_outside_the_shared_dialect_are_refused(
    tmp_path: Path, pattern: str, message: str
) -> None:
    observation = search(searcher(tmp_path, "python"), pattern)
    assert observation.startswith("error: ")
    assert message in observation


def test_an_escaped_backslash_before_a_digit_is_a_plain_pattern(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "C:\\1\n")
    assert search(searcher(tmp_path, "python"), "\\\\1") == "a.txt:1: C:\\1"


def test_search_is_off_unless_the_policy_allows_it(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    assert "search_files" not in workspace.available_tools
    assert workspace.execute(ToolAction("search_files", {"pattern": "x"})) == (
        "error: tool is not enabled: search_files"
    )
    assert "search_files" in make_workspace(tmp_path, allow_search=True).available_tools


def test_search_arguments_are_checked(tmp_path: Path) -> None:
    workspace = searcher(tmp_path, "python")
    assert search(workspace, "x", literal="yes") == (
        "error: search_files argument literal must be true or false"
    )
    assert search(workspace, "x", glob="*.py") == (
        "error: unexpected fields for search_files: glob"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pattern_that_looks_like_an_option_is_only_a_pattern(tmp_path: Path, engine: str) -> None:
    write(tmp_path / "a.txt", "run with --pre=cat\n")
    observation = search(searcher(tmp_path, engine), "--pre=cat", literal=True)
    assert observation == "a.txt:1: run with --pre=cat"


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_every_escape_the_dialect_allows_is_accepted_by_both_engines(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "a#&~-{}.+*?()|[]^$\\ b\tc\n")
    for escape in "\\.+*?()|[]{}^$#&-~dDwWsSbBtfvr":
        pattern = "\\" + escape
        observations = [search(searcher(tmp_path, e), pattern) for e in ("ripgrep", "python")]
        assert observations[0] == observations[1], pattern
        assert not observations[0].startswith("error:"), pattern


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)*$", "(a*)*b"])
def test_the_time_limit_holds_inside_a_catastrophic_match(
    tmp_path: Path, engine: str, pattern: str
) -> None:
    # A backtracking match of 2^40 steps: the call returning at all is the limit holding (how
    # far past its limit is bench/stop_latency.py's figure).
    write(tmp_path / "bait.txt", "a" * 40 + "!\n")

    observation = search(searcher(tmp_path, engine, max_seconds=1.0), pattern)

    if engine == "python":  # ripgrep's engine matches in linear time: it simply finishes
        assert observation.splitlines()[-1] == "[stopped at the time limit; give a narrower path]"
    else:
        assert not observation.startswith("error:"), observation


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
@pytest.mark.parametrize("bound", [10, 10**9])
def test_ripgreps_hits_are_in_path_order_from_a_parallel_or_a_sorted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int
) -> None:
    """Unsorted output within the bound is sorted here; past it, ripgrep runs sorted."""
    from counterfoil.search import ripgrep

    monkeypatch.setattr(ripgrep, "MAX_UNSORTED_BYTES", bound)
    for index in range(40):
        write(tmp_path / f"d{index % 7}" / f"f{index}.txt", "needle\nhay\nneedle\n")

    observations = [
        search(searcher(tmp_path, engine, max_hits=25), "needle") for engine in ENGINE_NAMES
    ]

    assert observations[0] == observations[1]
    assert observations[0].splitlines()[-1].startswith("[first 25 hits")


# What the Python engine rules out before matching


@pytest.mark.parametrize(
    "pattern, literal, required",
    [
        ("class HTTPServer", False, b"class HTTPServer"),
        ("a|b(", True, b"a|b("),
        ("AF_UNIX, socket\\.SOCK", False, b"AF_UNIX, socket"),
        ("colou?r", False, b"colo"),
        ("ab*c", False, b"a"),
        ("x{2}", False, None),
        ("grüße+", False, "grüße".encode()),
        ("greet|hello", False, None),
        ("(?i)greet", False, None),
        ("^def ", False, None),
    ],
)
def test_the_python_engine_knows_the_text_every_match_contains(
    pattern: str, literal: bool, required: bytes | None
) -> None:
    from counterfoil.search.engine import required_text

    assert required_text(pattern, literal) == required


def test_a_character_a_quantifier_may_leave_out_does_not_rule_a_file_out(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "the color red\n")
    write(tmp_path / "b.txt", "ac\n")
    workspace = searcher(tmp_path, "python")
    assert search(workspace, "colou?r") == "a.txt:1: the color red"
    assert search(workspace, "ab*c") == "b.txt:1: ac"
