import assert from "node:assert/strict";
import { test } from "node:test";
import manifest from "../../package.json";
import { callOfQuery } from "../../src/review/proposal";

const titleMenu: { command: string; when?: string }[] =
  manifest.contributes.menus["editor/title"];

function inMultiFileDiff(command: string): string | undefined {
  return titleMenu.find(
    (item) =>
      item.command === command &&
      item.when?.includes("activeEditor == multiDiffEditor"),
  )?.when;
}

test("a waiting change set's multi-file diff has Accept and Reject in its title bar", () => {
  for (const command of [
    "counterfoil.acceptProposal",
    "counterfoil.rejectProposal",
    "counterfoil.rejectProposalWithReason",
  ]) {
    assert.match(
      inMultiFileDiff(command) ?? "",
      /^counterfoil\.changeSetPending && /,
      command,
    );
  }
});

test("a change set's diff side names its call", () => {
  assert.equal(callOfQuery("call=call-3&side=now"), "call-3");
  assert.equal(callOfQuery("call=a%26b&side=after"), "a&b");
  assert.equal(callOfQuery("side=now"), undefined);
});
