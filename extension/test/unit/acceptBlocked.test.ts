import assert from "node:assert/strict";
import { test } from "node:test";
import {
  acceptBlocked,
  emptyModel,
  type ProposalView,
  setProposal,
  takesReason,
} from "../../src/run/runModel";

const waiting: ProposalView = {
  toolCallId: "call-2",
  subject: "edit_file app.py",
  kind: "edit",
  state: "pending",
  outdated: false,
};

test("the panel's Accept is blocked, with the reason, while the proposal is out of date", () => {
  assert.match(
    acceptBlocked({ ...waiting, outdated: true }) ?? "",
    /^The file changed since the model read it: Accept cannot apply this edit\./,
  );
});

test("a waiting proposal that still applies can be accepted", () => {
  assert.equal(acceptBlocked(waiting), undefined);
});

test("a proposal that applies again after being out of date can be accepted again", () => {
  const model = emptyModel();
  setProposal(model, { ...waiting, outdated: true });
  setProposal(model, waiting);

  assert.equal(acceptBlocked(model.proposals["call-2"]), undefined);
});

test("a No to an MCP tool's definition takes no reason: the model reads none", () => {
  assert.equal(takesReason({ kind: "mcp_definition" }), false);
  assert.equal(takesReason({ kind: "mcp_call" }), true);
  assert.equal(takesReason(waiting), true);
});
