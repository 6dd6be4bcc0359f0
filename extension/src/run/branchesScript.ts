// The run panel webview's Branches section: draws the branches the host posts side by side
// (columns on a wide panel, stacked on a narrow one: branches.css) and posts back Show diff and
// Keep this branch. Text is only set with textContent. Bundled into the run panel's script.

import type { BranchesMessage, BranchPanelMessage } from "./branchMessages";
import type { BranchCard } from "./branchesView";
import { button, el } from "./panelDom";

function card(
  branch: BranchCard,
  keeping: string | null,
  post: (message: BranchPanelMessage) => void,
): HTMLElement {
  const box = el("section", `branch state-${branch.state}`);
  box.dataset.branch = branch.name;
  const head = el("div", "branch-head");
  head.append(
    el("h3", "", branch.label),
    el("span", `badge ${branch.state}`, branch.stateWords),
  );
  box.append(
    head,
    el("code", "branch-name", branch.name),
    el("p", "steering", `Steering: ${branch.steering}`),
  );
  const facts = el("ul", "facts");
  for (const line of branch.lines) facts.append(el("li", "", line));
  box.append(facts);
  if (branch.checks.length > 0) {
    const checks = el("ul", "checks");
    for (const check of branch.checks) {
      const mark = check.passed ? "passed" : "failed";
      checks.append(
        el(
          "li",
          mark,
          `${check.name}: ${mark}${check.detail ? ` (${check.detail})` : ""}`,
        ),
      );
    }
    box.append(checks);
  }
  if (branch.final) {
    const claim = el("p", "claim");
    claim.append(
      el("strong", "", "The model's claim: "),
      el("span", "", branch.final),
    );
    box.append(claim);
  }
  const row = el("div", "row");
  if (branch.canShowDiff) {
    row.append(
      button("Show diff", "secondary show-diff", () =>
        post({ type: "showBranchDiff", branch: branch.name }),
      ),
    );
  }
  if (branch.canKeep && branch.keepWould) {
    box.append(el("p", "keep-would", branch.keepWould));
  }
  if (branch.canKeep) {
    row.append(
      button(
        keeping === branch.name ? "Keeping…" : "Keep this branch",
        "keep",
        () => post({ type: "keepBranch", branch: branch.name }),
        keeping !== null,
      ),
    );
  }
  box.append(row);
  return box;
}

function render(
  section: HTMLElement,
  state: BranchesMessage,
  post: (message: BranchPanelMessage) => void,
): void {
  section.replaceChildren();
  section.hidden = state.runId === null;
  if (state.runId === null) return;
  const head = el("div", "branches-head");
  head.append(
    el("h2", "", `Branches of ${state.runId}`),
    button("Close", "link", () => post({ type: "closeBranches" })),
  );
  section.append(head);
  if (state.note) section.append(el("p", "branches-note", state.note));
  const columns = el("div", "branch-columns");
  for (const branch of state.cards) {
    columns.append(card(branch, state.keeping, post));
  }
  section.append(columns);
}

/** Draws each `branches` message into #branches; `post` is the panel's handle on its host. */
export function wireBranches(
  post: (message: BranchPanelMessage) => void,
): void {
  const section = document.getElementById("branches");
  if (!section) return;
  window.addEventListener("message", (event: MessageEvent<unknown>) => {
    const data = event.data as Partial<BranchesMessage> | null;
    if (data && data.type === "branches") {
      render(section, data as BranchesMessage, post);
      if (data.reveal && !section.hidden) {
        // Above a conversation scrolled to its end: brought into view, not drawn out of sight.
        requestAnimationFrame(() =>
          section.scrollIntoView({ block: "start", behavior: "auto" }),
        );
      }
    }
  });
}
