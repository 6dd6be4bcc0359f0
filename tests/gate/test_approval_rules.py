"""Approval rules: how an entry is read, what it matches, and what no rule can allow."""

from __future__ import annotations

import pytest

from counterfoil.gate.rules import (
    NO_RULES,
    ApprovalRule,
    RuleEffect,
    RuleError,
    RuleSet,
    parse_rules,
    path_matches,
)


def rules(*entries: object) -> RuleSet:
    return parse_rules(list(entries), "test")


def command(*argv: str, confined: bool = True, rejected: bool = False) -> RuleEffect:
    return RuleEffect("run_command", argv=argv, confined=confined, rejected_before=rejected)


def edit(path: str, tool: str = "edit_file", rejected: bool = False) -> RuleEffect:
    return RuleEffect(tool, path=path, rejected_before=rejected)


def mcp(server: str, tool: str, pinned: bool = True) -> RuleEffect:
    return RuleEffect("mcp_call", server=server, mcp_tool=tool, pinned=pinned)


def test_no_rule_asks() -> None:
    assert NO_RULES.decide(command("pytest")).decision == "ask"


def test_an_exact_argv_rule_matches_that_argv_only() -> None:
    exact = rules({"decision": "allow", "argv": ["pytest", "-q"]})

    assert exact.decide(command("pytest", "-q")).decision == "allow"
    assert exact.decide(command("pytest", "-q", "-x")).decision == "ask"
    assert exact.decide(command("pytest")).decision == "ask"


def test_a_prefix_matches_whole_arguments_never_part_of_one() -> None:
    prefix = rules({"decision": "allow", "argvPrefix": ["git", "log"]})

    assert prefix.decide(command("git", "log", "--oneline")).decision == "allow"
    assert prefix.decide(command("git", "log")).decision == "allow"
    assert prefix.decide(command("git", "logout")).decision == "ask"
    assert prefix.decide(command("git")).decision == "ask"


def test_a_prefix_is_no_shell_pattern() -> None:
    prefix = rules({"decision": "allow", "argvPrefix": ["npm", "run", "test:*"]})

    assert prefix.decide(command("npm", "run", "test:unit")).decision == "ask"
    assert prefix.decide(command("npm", "run", "test:*")).decision == "allow"


def test_the_first_match_decides() -> None:
    ordered = rules(
        {"decision": "deny", "argvPrefix": ["git", "push"]},
        {"decision": "allow", "argvPrefix": ["git"]},
    )

    pushed = ordered.decide(command("git", "push"))
    assert (pushed.decision, pushed.index) == ("deny", 1)
    assert ordered.decide(command("git", "status")).index == 2


def test_a_path_pattern_matches_one_name_per_star_and_folders_with_two() -> None:
    assert path_matches("docs/*.md", "docs/guide.md")
    assert not path_matches("docs/*.md", "docs/deep/guide.md")
    assert path_matches("docs/**/*.md", "docs/guide.md")
    assert path_matches("docs/**/*.md", "docs/deep/er/guide.md")
    assert path_matches("docs/**", "docs/deep/guide.txt")
    assert not path_matches("docs/**", "docs")


def test_a_path_rule_applies_to_writes_and_edits_only() -> None:
    docs = rules({"decision": "allow", "path": "docs/**"})

    assert docs.decide(edit("docs/a.md", "write_file")).decision == "allow"
    assert docs.decide(edit("docs/a.md", "edit_file")).decision == "allow"
    assert docs.decide(RuleEffect("revert_effect", path="docs/a.md")).decision == "ask"


def test_a_path_pattern_is_normalized_when_read() -> None:
    docs = rules({"decision": "allow", "path": "./docs//*.md"})

    assert docs.rules[0].path == "docs/*.md"


def test_an_allow_matches_only_the_spelling_it_names() -> None:
    docs = rules({"decision": "allow", "path": "docs/*.md"})

    assert docs.decide(edit("DOCS/a.md")).decision == "ask"


def test_a_deny_folds_letter_case() -> None:
    secret = rules({"decision": "deny", "path": "deploy/**"})

    assert secret.decide(edit("Deploy/prod.cfg")).decision == "deny"


def test_an_mcp_rule_names_server_and_tool() -> None:
    github = rules({"decision": "allow", "mcpServer": "github", "mcpTool": "get_issue"})

    assert github.decide(mcp("github", "get_issue")).decision == "allow"
    assert github.decide(mcp("github", "create_issue")).decision == "ask"
    assert github.decide(mcp("gitlab", "get_issue")).decision == "ask"


def test_an_unconfined_command_is_asked_whatever_the_rules_say() -> None:
    decided = rules({"decision": "allow", "argv": ["pytest"]}).decide(
        command("pytest", confined=False)
    )

    assert (decided.decision, decided.index) == ("ask", 1)
    assert decided.held == "the command would run unconfined (--sandbox off)"


def test_a_protected_path_is_asked_whatever_the_rules_say() -> None:
    everything = rules({"decision": "allow", "path": "**"})

    assert everything.decide(edit("config/.env.local")).held == "the path is protected"
    held = everything.decide(edit("deploy/prod.yaml"), ("prod.*",))
    assert (held.decision, held.held) == ("ask", "the path is protected")


def test_an_effect_the_person_rejected_is_asked_whatever_the_rules_say() -> None:
    decided = rules({"decision": "allow", "argv": ["pytest"]}).decide(
        command("pytest", rejected=True)
    )

    assert decided.decision == "ask"
    assert decided.held == "you said No to this same effect earlier in this run"


def test_an_unpinned_mcp_tool_is_asked_whatever_the_rules_say() -> None:
    decided = rules({"decision": "allow", "mcpServer": "s", "mcpTool": "t"}).decide(
        mcp("s", "t", pinned=False)
    )

    assert (decided.decision, decided.held) == ("ask", "the MCP tool's definition is not pinned")


def test_a_deny_still_refuses_an_effect_no_rule_may_allow() -> None:
    decided = rules({"decision": "deny", "argv": ["rm", "-rf", "."]}).decide(
        command("rm", "-rf", ".", confined=False)
    )

    assert decided.decision == "deny"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("allow", "must be an object"),
        ({"decision": "yes", "argv": ["a"]}, "decision must be allow, ask or deny"),
        ({"decision": "allow"}, "must name exactly one of argv, argvPrefix, path or mcpServer"),
        (
            {"decision": "allow", "argv": ["a"], "path": "b"},
            "must name exactly one of argv, argvPrefix, path or mcpServer",
        ),
        ({"decision": "allow", "argv": "pytest -q"}, "argv must be a list of non-empty strings"),
        ({"decision": "allow", "argvPrefix": []}, "argvPrefix must be a list of non-empty"),
        ({"decision": "allow", "path": "../up/*"}, "path must stay under the root"),
        ({"decision": "allow", "path": "/etc/*"}, "path must be relative to the root"),
        ({"decision": "allow", "path": ""}, "path must be a non-empty pattern"),
        ({"decision": "allow", "mcpServer": "s"}, "mcpTool must be a non-empty string"),
        ({"decision": "allow", "command": ["a"]}, "unknown key command"),
    ],
)
def test_a_bad_entry_is_named_with_what_is_wrong(entry: object, problem: str) -> None:
    with pytest.raises(RuleError) as raised:
        parse_rules([{"decision": "ask", "argv": ["ok"]}, entry], "rules.json")

    assert str(raised.value).startswith(f"rules.json: rule 2: {problem}")
    assert "\n" not in str(raised.value)


def test_rules_must_be_a_list() -> None:
    with pytest.raises(RuleError, match="^x: approval rules must be a list of rule objects$"):
        parse_rules({"decision": "allow"}, "x")


def test_a_folder_may_add_ask_and_deny_never_allow() -> None:
    narrowing = [{"decision": "deny", "argv": ["a"]}, {"decision": "ask", "path": "b"}]
    assert len(parse_rules(narrowing, "folder", allow=False).rules) == 2

    with pytest.raises(RuleError, match="rule 2: a folder's settings may add ask and deny"):
        parse_rules([narrowing[0], {"decision": "allow", "argv": ["a"]}], "folder", allow=False)


def test_the_digest_names_the_set_and_its_order() -> None:
    first = rules({"decision": "allow", "argv": ["a"]}, {"decision": "deny", "argv": ["b"]})
    same = rules({"argv": ["a"], "decision": "allow"}, {"decision": "deny", "argv": ["b"]})
    swapped = RuleSet(tuple(reversed(first.rules)))

    assert first.sha256 == same.sha256
    assert first.sha256 != swapped.sha256
    assert len(first.sha256) == 64


def test_a_rule_reads_back_from_its_text() -> None:
    rule = ApprovalRule("allow", argv_prefix=("python3", "-m", "pytest"))

    assert rule.text == '{"argvPrefix":["python3","-m","pytest"],"decision":"allow"}'
    assert parse_rules([rule.as_record()], "x").rules == (rule,)
