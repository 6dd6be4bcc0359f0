// Bundles the extension, the run panel's webview script (for the browser, loaded by nonce from
// dist/webview/), its unit tests, the extension-host tests and the UI tests.
import { build } from "esbuild";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const production = process.argv.includes("--production");

const entries = (folder, suffix) =>
  readdirSync(folder)
    .filter((name) => name.endsWith(suffix))
    .map((name) => join(folder, name));

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  sourcemap: production ? false : "inline",
  logLevel: "warning",
};

await Promise.all([
  build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: production,
  }),
  build({
    ...common,
    platform: "browser",
    format: "iife",
    target: "es2022",
    entryPoints: ["src/run/runPanelScript.ts"],
    outfile: "dist/webview/run-panel.js",
    minify: production,
  }),
  build({
    ...common,
    entryPoints: ["test/host/index.ts"],
    outfile: "dist/test/host/index.js",
    external: ["vscode", "mocha"],
  }),
  build({
    ...common,
    entryPoints: entries("test/unit", ".test.ts"),
    outdir: "dist/test/unit",
  }),
  build({
    ...common,
    entryPoints: entries("test/ui", ".test.ts"),
    outdir: "dist/test/ui",
    external: ["playwright-core"],
  }),
]);
