// Builds extension/bundled/ for the .vsix: libs/ holds the daemon (the counterfoil package from
// server/) and its pinned pure-Python dependencies (bundled-requirements.txt, installed with
// pip from wheels only, hashes checked); demo/ holds the demo project and its scripted
// responses for the walkthrough. The extension puts libs/ first on the daemon's PYTHONPATH.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const extension = join(dirname(fileURLToPath(import.meta.url)), "..");
const repository = join(extension, "..");
const bundled = join(extension, "bundled");
const libs = join(bundled, "libs");
const python = process.env.PYTHON ?? "python3";
// Compiled files stay out: the .vsix runs on any Python, where the walk's Python loop runs.
const notCache = (source) =>
  basename(source) !== "__pycache__" &&
  !source.endsWith(".pyc") &&
  !source.endsWith(".so");

rmSync(bundled, { recursive: true, force: true });
mkdirSync(libs, { recursive: true });
execFileSync(
  python,
  [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    "--target",
    libs,
    "--no-deps",
    "--no-compile",
    "--only-binary=:all:",
    "--require-hashes",
    "-r",
    join(extension, "bundled-requirements.txt"),
  ],
  { stdio: "inherit" },
);
rmSync(join(libs, "bin"), { recursive: true, force: true });
cpSync(join(repository, "server", "counterfoil"), join(libs, "counterfoil"), {
  recursive: true,
  filter: notCache,
});
// The extras' requirements, read by models/runtime.py (three folders up, as in the repository)
// to offer the model runtime's install: the bundled copy has no installed metadata to name them.
cpSync(join(repository, "pyproject.toml"), join(bundled, "pyproject.toml"));
cpSync(
  join(repository, "fixtures", "demo-project"),
  join(bundled, "demo", "project"),
  { recursive: true, filter: notCache },
);
cpSync(
  join(repository, "fixtures", "responses", "fix-app.jsonl"),
  join(bundled, "demo", "fix-app.jsonl"),
);
console.log(`bundled the daemon into ${libs}`);
