import assert from "node:assert/strict";
import { test } from "node:test";
import { agentsFileLine, liveStepWords } from "../../src/run/turnNotes";
import type { ProposalView } from "../../src/run/runModel";

const command = (state: ProposalView["state"], turn = 0): ProposalView => ({
  toolCallId: "call-2",
  subject: "run_command python -m pytest",
  kind: "command",
  state,
  turn,
});

test("a step whose approved command is running says so, not generating", () => {
  assert.equal(
    liveStepWords([command("approved")], 0, new Set()),
    "running the approved command…",
  );
});

test("a step waiting for an answer says so", () => {
  assert.equal(
    liveStepWords([command("pending")], 0, new Set()),
    "waiting for your answer",
  );
});

test("a proposal of an earlier step or another turn leaves the model generating", () => {
  assert.equal(
    liveStepWords([command("approved")], 0, new Set(["call-2"])),
    "generating…",
  );
  assert.equal(
    liveStepWords([command("approved", 1)], 0, new Set()),
    "generating…",
  );
});

test("an approved edit being written says so", () => {
  assert.equal(
    liveStepWords(
      [{ ...command("approved"), kind: "edit", subject: "edit_file app.py" }],
      0,
      new Set(),
    ),
    "writing the approved edit…",
  );
});

test("the rules file line names the file, a short digest and its size", () => {
  assert.equal(
    agentsFileLine({
      path: "AGENTS.md",
      sha256: "1a2b3c4d5e6f7a8b9c0d".padEnd(64, "0"),
      bytes: 1204,
      notRead: null,
    }),
    "AGENTS.md · sha256 1a2b3c4d5e6f · 1,204 bytes",
  );
});

test("a rules file that was not read says why", () => {
  assert.equal(
    agentsFileLine({
      path: "AGENTS.md",
      sha256: null,
      bytes: null,
      notRead: "too large",
    }),
    "AGENTS.md · not read (too large)",
  );
  assert.equal(agentsFileLine(null), null);
});

test("an approved MCP definition leaves the model generating; an approved call is being made", () => {
  const definition: ProposalView = {
    toolCallId: "mcp-definition:files/read",
    subject: "MCP tool files/read (new)",
    kind: "mcp_definition",
    state: "approved",
    turn: 0,
  };
  assert.equal(liveStepWords([definition], 0, new Set()), "generating…");
  assert.equal(
    liveStepWords(
      [{ ...definition, kind: "mcp_call", toolCallId: "call-1" }],
      0,
      new Set(),
    ),
    "calling the approved MCP tool…",
  );
});
