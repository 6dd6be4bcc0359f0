// What the run panel's webview scripts build their elements with: text only ever through
// textContent, so nothing the daemon or the model sends is read as HTML.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string | number | null,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function button(
  text: string,
  className: string,
  onClick: () => void,
  disabled = false,
): HTMLButtonElement {
  const node = el("button", className, text);
  node.type = "button";
  node.disabled = disabled;
  node.addEventListener("click", onClick);
  return node;
}

/** The details the person opened, by key, so a redraw (every event) keeps them open. */
const opened = new Set<string>();

export function details(
  summary: string,
  body: string,
  key: string,
): HTMLDetailsElement {
  const node = el("details", "collapsible");
  node.open = opened.has(key);
  node.addEventListener("toggle", () => {
    if (node.open) opened.add(key);
    else opened.delete(key);
  });
  node.append(el("summary", "", summary), el("pre", "", body));
  return node;
}

/** Closes every observation, and forgets that the person opened them. */
export function closeAllDetails(root: ParentNode): void {
  opened.clear();
  for (const node of Array.from(root.querySelectorAll("details"))) {
    node.open = false;
  }
}
