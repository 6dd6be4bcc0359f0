import assert from "node:assert/strict";
import { test } from "node:test";
import type { Receipt, StoredRunRecord } from "../../src/daemon/protocol";
import { runNodes } from "../../src/receipts/receiptNodes";

const EDIT: Receipt = {
  receipt_id: "r1",
  tool_call_id: "call-4",
  tool: "edit_file",
  arguments: { path: "app.py" },
  exit_state: "ok",
  result: "edited app.py",
  changed_artifacts: ["app.py"],
  run_id: "cli-run",
  time: "2026-01-01T10:00:05+00:00",
  revertable: true,
};

const SAME_DAY = new Date("2026-01-01T12:00:00Z");

const RECORD: StoredRunRecord = {
  runId: "cli-run",
  goal: "make double() double",
  by: "alice",
  via: "terminal",
  startedAt: "2026-01-01T10:00:00+00:00",
  endedAt: "2026-01-01T10:01:00+00:00",
  state: "ended",
  reason: "completed",
  effects: { approved: 1, rejected: 3, refused: 0, failed: 0 },
  validation: "not_run",
  resumed: 0,
  decisions: [
    decision("call-1", "rejected", "not this way"),
    decision("call-2", "stale", "the file changed while it waited"),
    decision("call-3", "closed", null),
    decision("call-4", "approved", null),
  ],
  problem: null,
};

function decision(toolCallId: string, state: string, reason: string | null) {
  return {
    toolCallId,
    tool: "edit_file",
    state,
    reason,
    path: "app.py",
    argv: null,
    time: null,
  };
}

test("a run another process ran is named by its record's goal, with who ran it", () => {
  const [node] = runNodes([EDIT], [], SAME_DAY, [RECORD]);

  assert.equal(node.label, "make double() double");
  assert.match(
    node.description ?? "",
    /^10:00:00 · ended · 1 approved · 3 rejected$/,
  );
  assert.match(node.tooltip ?? "", /run by alice in the terminal/);
});

test("every call id without a receipt is explained by its decision", () => {
  const [node] = runNodes([EDIT], [], SAME_DAY, [RECORD]);

  assert.deepEqual(
    node.children.map((child) => child.label),
    [
      node.children[0].label,
      "call-1 rejected: not this way",
      "call-2 stale: the file changed while it waited",
      "call-3 closed",
    ],
  );
  assert.equal(node.children[0].toolCallId, "call-4");
});

test("a run that left only Noes still has its node", () => {
  const noes = { ...RECORD, runId: "no-receipts" };

  const nodes = runNodes([], [], new Date(), [noes]);

  assert.equal(nodes.length, 1);
  assert.equal(nodes[0].label, "make double() double");
  assert.equal(nodes[0].children.length, 3);
});

test("runs are listed in the order they started, and the one that started last is the open one, even when an earlier run left only Noes", () => {
  const earlierNoes = {
    ...RECORD,
    runId: "rejected-first",
    startedAt: "2026-01-01T09:00:00+00:00",
  };

  const nodes = runNodes([EDIT], [], SAME_DAY, [RECORD, earlierNoes]);

  assert.deepEqual(
    nodes.map((node) => [node.id, node.expanded]),
    [
      ["run/rejected-first", false],
      ["run/cli-run", true],
    ],
  );
});

test("the run's row and each receipt's tooltip name the model that proposed it", () => {
  const model = "qwen3-4b · weights 918b844f4ec1 · MLX, compute cpu";
  const [run] = runNodes([{ ...EDIT, proposedBy: model }], [], SAME_DAY, [
    RECORD,
  ]);

  assert.match(run.tooltip ?? "", /^model: qwen3-4b · weights 918b844f4ec1/m);
  assert.match(run.children[0].tooltip ?? "", /^proposed by qwen3-4b · /m);
});

test("runs whose long goals read the same are told apart by their ids", () => {
  const goal =
    "make every function in the project double its input, then run the tests";
  const first = { ...RECORD, runId: "aaaa1111bbbb", goal };
  const second = {
    ...RECORD,
    runId: "cccc2222dddd",
    goal: `${goal} again`,
    startedAt: "2026-01-01T11:00:00+00:00",
  };

  const nodes = runNodes([], [], SAME_DAY, [first, second]);

  assert.equal(nodes[0].label, nodes[1].label);
  assert.match(nodes[0].description ?? "", /run aaaa1111/);
  assert.match(nodes[1].description ?? "", /run cccc2222/);
});

test("a run listed before its first receipt has an id of its own, so the tree draws it anew, open, once it has one", () => {
  // VS Code keeps the collapsible state it first saw for an id: a run first drawn as a leaf
  // (its command approved, no receipt yet) stayed closed on a busy machine.
  const approved = {
    runId: "cli-run",
    toolCallId: "call-4",
    state: "answered" as const,
    why: "approved",
  };
  const [leaf] = runNodes([], [], SAME_DAY, [], new Set(), [approved]);
  const [withReceipt] = runNodes([EDIT], [], SAME_DAY, [], new Set(), [
    approved,
  ]);

  assert.equal(leaf.children.length, 0);
  assert.equal(withReceipt.children.length, 1);
  assert.notEqual(leaf.id, withReceipt.id);
  assert.equal(withReceipt.id, "run/cli-run");
  assert.equal(withReceipt.expanded, true);
});
