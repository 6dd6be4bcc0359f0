import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Receipt } from "../../src/daemon/protocol";
import {
  clock,
  liveRunRecord,
  receiptFile,
  receiptLabel,
  receiptNode,
  receiptRoots,
  runNodes,
  withLiveRuns,
} from "../../src/receipts/receiptNodes";

const edit: Receipt = {
  receipt_id: "a".repeat(64),
  tool_call_id: "call-1",
  tool: "edit_file",
  arguments: { path: "app.py", old: "1", new: "2" },
  exit_state: "ok",
  result: "edited app.py",
  changed_artifacts: ["app.py"],
  revertable: true,
};

const validation: Receipt = {
  receipt_id: "b".repeat(64),
  tool_call_id: "call-2",
  tool: "run_command",
  arguments: { argv: ["python", "-m", "pytest", "tests/test_math.py", "-q"] },
  exit_state: "error",
  result: "status: 1\noutput:\nF\n1 failed",
  changed_artifacts: [],
  revertable: false,
};

describe("receipt nodes", () => {
  test("an edit receipt is labelled with its call id, tool and path", () => {
    assert.equal(receiptLabel(edit), "call-1 · edit_file app.py");
  });

  test("a command receipt is labelled with its argv", () => {
    assert.equal(
      receiptLabel(validation),
      "call-2 · run_command python -m pytest tests/test_math.py -q",
    );
  });

  test("the icon follows what the receipt changed or ran, and a failed receipt shows an error icon", () => {
    assert.deepEqual(receiptNode(edit).icon, {
      id: "edit",
      color: "testing.iconPassed",
    });
    assert.deepEqual(receiptNode(validation).icon, {
      id: "error",
      color: "testing.iconFailed",
    });
    assert.equal(
      receiptNode({ ...validation, exit_state: "ok" }).icon?.id,
      "terminal",
    );
  });

  test("children show arguments, result, artifacts and receipt id", () => {
    const node = receiptNode(edit);
    assert.deepEqual(
      node.children.map((child) => child.label),
      ["arguments", "result", "artifacts", "receipt id"],
    );
    assert.equal(
      node.children[0].description,
      '{"path":"app.py","old":"1","new":"2"}',
    );
    assert.equal(node.children[1].description, "edited app.py");
    assert.deepEqual(
      node.children[2].children.map((artifact) => artifact.openPath),
      ["app.py"],
    );
    assert.equal(node.children[3].description, edit.receipt_id);
  });

  test("the result child shows the first line and keeps the whole text in the tooltip", () => {
    const result = receiptNode(validation).children[1];
    assert.equal(result.description, "status: 1");
    assert.equal(result.tooltip, validation.result);
  });

  test("clicking an edit receipt opens its file; a command receipt opens nothing", () => {
    assert.equal(receiptNode(edit).openPath, "app.py");
    assert.equal(receiptFile(validation), undefined);
    assert.equal(receiptNode(validation).openPath, undefined);
  });

  test("node ids are unique across receipts and their children", () => {
    const ids = receiptRoots([edit, validation], null).flatMap((node) => [
      node.id,
      ...node.children.map((child) => child.id),
    ]);
    assert.equal(new Set(ids).size, ids.length);
  });

  test("a bad line shows the receipts before it, then the problem", () => {
    const roots = receiptRoots(
      [edit],
      "line 3: receipt digest does not match its contents",
    );
    assert.equal(roots.length, 2);
    assert.equal(roots[0].children[0].label, "call-1 · edit_file app.py");
    assert.equal(roots[1].contextValue, "logProblem");
    assert.equal(roots[1].icon?.id, "warning");
    assert.equal(
      roots[1].description,
      "line 3: receipt digest does not match its contents",
    );
  });

  test("receipts are grouped by run with the goal, time and verdict the daemon reports", () => {
    const first = { ...edit, run_id: "r1", time: "2026-11-30T04:10:00Z" };
    const second = {
      ...edit,
      receipt_id: "r-2",
      tool_call_id: "call-2",
      run_id: "r2",
      time: "2026-11-30T04:12:00Z",
    };
    const roots = runNodes(
      [first, second],
      [
        {
          runId: "r1",
          conversationId: "r1",
          goal: "make tests/test_math.py pass",
          followUp: false,
          agentsFile: null,
          startedAt: "2026-11-30T04:09:59Z",
          endedAt: null,
          reason: null,
          verdict: {
            succeeded: false,
            approved: ["call-1"],
            rejected: ["call-3"],
            refused: [],
            failed: [],
            reviewRejected: [],
            filesChanged: [],
            validation: "not_run",
            validatedBy: null,
            effects: [],
          },
        },
      ],
      new Date("2026-11-30T18:00:00Z"),
    );
    assert.deepEqual(
      roots.map((root) => [root.label, root.description]),
      [
        [
          "make tests/test_math.py pass",
          "04:09:59 · not validated · 1 rejected",
        ],
        ["run (goal not known here)", "04:12:00 · 1 effect"],
      ],
    );
    assert.equal(roots[0].children[0].contextValue, "receipt.edit");
    const revert = {
      ...edit,
      receipt_id: "r-3",
      run_id: "r3",
      reverts: "call-1",
    };
    assert.equal(runNodes([revert])[0].label, "revert of call-1");
  });

  test("an edit receipt with digests opens its applied diff; a command receipt its output", () => {
    const stored = {
      ...edit,
      base_sha256: "a".repeat(64),
      result_sha256: "b".repeat(64),
    };
    assert.deepEqual(receiptNode(stored).command, {
      id: "counterfoil.showAppliedDiff",
      title: "Show Applied Diff",
      arguments: ["a".repeat(64), "b".repeat(64), "call-1 app.py"],
    });
    const ran = { ...validation, output_sha256: "c".repeat(64) };
    assert.equal(receiptNode(ran).command?.id, "counterfoil.showObject");
  });

  test("a reviewed command's receipt says what its review let land: an accepted and a rejected one differ", () => {
    const reviewed = (decision: string) =>
      receiptNode({
        ...validation,
        exit_state: "ok",
        review: { decision, applied: [], left_alone: [] },
      }).description;
    assert.equal(reviewed("accepted"), "ok · its changes accepted");
    assert.equal(
      reviewed("rejected"),
      "ok · its changes rejected, nothing landed",
    );
    assert.equal(receiptNode(validation).description, "error");
    assert.equal(
      receiptNode({
        ...validation,
        exit_state: "ok",
        review: { decision: "rejected" },
      }).icon?.id,
      "circle-slash",
    );
  });
});

test("a run's time has seconds, and its date when it is not today's", () => {
  const now = new Date("2026-12-01T09:30:00Z");
  assert.equal(clock("2026-12-01T08:05:07.123456Z", now), "08:05:07");
  assert.equal(clock("2026-11-30T23:59:58Z", now), "2026-11-30 23:59:58");
  assert.equal(clock(undefined, now), "");
});

test("a run whose evidence a git note carries is marked exported, and no other run is", () => {
  const first = { ...edit, run_id: "run-a" };
  const second = { ...validation, run_id: "run-b", tool_call_id: "call-9" };
  const [a, b] = runNodes(
    [first, second],
    [],
    new Date(),
    [],
    new Set(["run-a"]),
  );
  assert.match(a.description ?? "", / · exported$/);
  assert.match(a.tooltip ?? "", /git note/);
  assert.doesNotMatch(b.description ?? "", /exported/);
});

test("a live run's receipts are grouped under its goal before the daemon lists the run", () => {
  const live = liveRunRecord(
    {
      runId: "run-live",
      conversationId: "c-1",
      goal: "make double() double",
      followUp: false,
      agentsFile: null,
    },
    "2026-12-01T08:00:00Z",
  );
  const receipt = { ...edit, run_id: "run-live" };

  const [group] = runNodes([receipt], withLiveRuns([], [live]));

  assert.equal(group.label, "make double() double");
});

test("the daemon's own record of a run wins over what this window noted when it started", () => {
  const live = liveRunRecord(
    {
      runId: "run-1",
      conversationId: "c-1",
      goal: "noted",
      followUp: false,
      agentsFile: null,
    },
    "2026-12-01T08:00:00Z",
  );
  const listed = { ...live, goal: "listed", endedAt: "2026-12-01T08:01:00Z" };

  assert.deepEqual(
    withLiveRuns([listed], [live]).map((run) => run.goal),
    ["listed"],
  );
});

const mcpCall: Receipt = {
  receipt_id: "c".repeat(64),
  tool_call_id: "call-3",
  tool: "mcp_call",
  arguments: {
    server: "files",
    name: "read",
    arguments: { path: "notes.txt" },
  },
  exit_state: "ok",
  result: "the notes",
  changed_artifacts: [],
  revertable: false,
  mcp: {
    server: {
      name: "files",
      transport: "stdio",
      command: ["python", "server.py"],
    },
    tool: "read",
    definition_sha256: "d".repeat(64),
    result_sha256: "e".repeat(64),
    result_kept: true,
    read_only: false,
  },
};

describe("an MCP call's receipt", () => {
  test("is labelled with its server and tool, with the plug icon", () => {
    const node = receiptNode(mcpCall);
    assert.equal(node.label, "call-3 · mcp_call files/read");
    assert.deepEqual(node.icon, { id: "plug", color: "testing.iconPassed" });
  });

  test("names the server and the approved definition, and opens the whole result", () => {
    const node = receiptNode(mcpCall);
    const server = node.children.find((child) => child.label === "MCP server");
    assert.equal(server?.description, "files · python server.py");
    const definition = node.children.find(
      (child) => child.label === "definition",
    );
    assert.equal(definition?.tooltip, "d".repeat(64));
    assert.deepEqual(node.command?.arguments, [
      "e".repeat(64),
      "call-3 result",
    ]);
  });

  test("a call nobody was asked about says so", () => {
    const readOnly = {
      ...mcpCall,
      approval: { via: "readOnlyTools", asked: false },
    };
    assert.equal(
      receiptNode(readOnly).description,
      "ok · not asked: you marked it read-only",
    );
  });
});

describe("Revert is offered where the daemon says the receipt can be reverted", () => {
  const ran: Receipt = { ...validation, exit_state: "ok" };

  test("a command the daemon calls revertable offers Revert as a command", () => {
    assert.equal(
      receiptNode({ ...ran, revertable: true }).contextValue,
      "receipt.command",
    );
  });

  test("an edit the daemon calls revertable offers Revert as an edit", () => {
    assert.equal(receiptNode(edit).contextValue, "receipt.edit");
  });

  test("a receipt the daemon does not call revertable offers no Revert, whatever it changed", () => {
    assert.equal(receiptNode(ran).contextValue, "receipt");
    assert.equal(
      receiptNode({ ...edit, revertable: false }).contextValue,
      "receipt",
    );
  });
});

describe("who decided an effect", () => {
  const RULE = '{"argvPrefix":["python","-m","pytest"],"decision":"allow"}';
  const byRule: Receipt = {
    ...validation,
    exit_state: "ok",
    approval: {
      by: "ada",
      via: "approvalRules",
      asked: false,
      rule: RULE,
      rule_index: 2,
      rules_sha256: "f".repeat(64),
    },
  };

  test("a receipt a rule approved names the rule, not the person", () => {
    assert.equal(
      receiptNode(byRule).description,
      "ok · approved by your rule 2, not asked",
    );
  });

  test("its detail gives the rule's text as the receipt names it, and the rule set's digest", () => {
    const node = receiptNode(byRule).children.find(
      (child) => child.label === "approved by",
    );
    assert.equal(node?.description, `your rule 2: ${RULE}`);
    assert.equal(
      node?.tooltip,
      `your rule 2: ${RULE}\nrule set sha256 ${"f".repeat(64)}`,
    );
  });

  test("a receipt the person approved names them and where they were asked", () => {
    const asked: Receipt = {
      ...edit,
      approval: { by: "ada", via: "editor", decision: "approved" },
    };
    const node = receiptNode(asked).children.find(
      (child) => child.label === "approved by",
    );
    assert.equal(node?.description, "ada, asked in the editor");
    assert.equal(receiptNode(asked).description, "ok");
  });
});

test("a question the record holds withdrawn reads as the daemon says it now: pending again", () => {
  const record = {
    runId: "run-1",
    goal: "run it",
    by: null,
    via: "editor",
    startedAt: "2026-12-01T08:00:00Z",
    endedAt: null,
    state: null,
    reason: null,
    effects: null,
    validation: null,
    resumed: 1,
    problem: null,
    decisions: [
      {
        toolCallId: "call-1",
        tool: "run_command",
        state: "withdrawn",
        reason: "withdrawn by a pause before it was answered",
        path: null,
        argv: ["true"],
        time: null,
      },
    ],
  };
  const live = [
    {
      runId: "run-1",
      toolCallId: "call-1",
      state: "pending" as const,
      why: null,
    },
  ];

  const [group] = runNodes([], [], new Date(), [record], new Set(), live);

  assert.deepEqual(
    group.children.map((node) => [node.label, node.description]),
    [["call-1 pending", "run_command true"]],
  );
});
