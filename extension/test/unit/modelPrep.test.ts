import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decideRuntime,
  describeDownload,
  downloadDetail,
  formatBytes,
  formatDuration,
  needsDownload,
  powershellLine,
  shellKind,
  shellLine,
  terminalLine,
} from "../../src/model/modelPrep";
import type { DownloadProgress } from "../../src/daemon/protocol";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function progress(fields: Partial<DownloadProgress>): DownloadProgress {
  return {
    model: "qwen3-4b",
    bytes: 0,
    total: 0,
    rate: null,
    etaSeconds: null,
    state: "downloading",
    ...fields,
  };
}

test("bytes read in binary units with one decimal", () => {
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(2.3 * GiB), "2.3 GiB");
  assert.equal(formatBytes(-5), "0 B");
});

test("durations read in hours, minutes and seconds", () => {
  assert.equal(formatDuration(7.4), "7 s");
  assert.equal(formatDuration(80), "1 min 20 s");
  assert.equal(formatDuration(7500), "2 h 5 min");
});

test("the status bar says the per cent done of the total", () => {
  assert.equal(
    describeDownload(progress({ bytes: 0.38 * 2.3 * GiB, total: 2.3 * GiB })),
    "downloading 38 % of 2.3 GiB",
  );
});

test("an unknown total reads as 0 % and never over 100 %", () => {
  assert.equal(
    describeDownload(progress({ bytes: 10 })),
    "downloading 0 % of 0 B",
  );
  assert.equal(
    describeDownload(progress({ bytes: 2 * GiB, total: GiB })),
    "downloading 100 % of 1.0 GiB",
  );
});

test("the notification line has bytes, rate and time left once known", () => {
  assert.equal(
    downloadDetail(
      progress({
        bytes: 1.2 * GiB,
        total: 2.3 * GiB,
        rate: 12 * MiB,
        etaSeconds: 80,
      }),
    ),
    "1.2 GiB of 2.3 GiB, 12.0 MiB/s, 1 min 20 s left",
  );
  assert.equal(
    downloadDetail(progress({ bytes: 0, total: 2.3 * GiB })),
    "0 B of 2.3 GiB",
  );
});

test("a runtime with nothing missing needs no install", () => {
  assert.deepEqual(
    decideRuntime({
      model: "qwen3-4b",
      extra: "mlx",
      missing: [],
      python: "/venv/bin/python",
      command: null,
      unavailable: null,
    }),
    { kind: "ready" },
  );
});

test("where no install can help, the daemon's reason is the answer, not a command", () => {
  const reason =
    "MLX has no build for Windows, so a local MLX model cannot run here: use a model server";
  assert.deepEqual(
    decideRuntime({
      model: "qwen3-4b",
      extra: "mlx",
      missing: ["mlx.core", "mlx_lm"],
      python: "C:\\venv\\python.exe",
      command: [],
      unavailable: reason,
    }),
    { kind: "unavailable", reason },
  );
});

test("a missing runtime is installed with the daemon's command into its python", () => {
  const command = [
    "/venv/bin/python",
    "-m",
    "pip",
    "install",
    "counterfoil[mlx]",
  ];
  assert.deepEqual(
    decideRuntime({
      model: "qwen3-4b",
      extra: "mlx",
      missing: ["mlx.core", "mlx_lm"],
      python: "/venv/bin/python",
      command,
      unavailable: null,
    }),
    {
      kind: "install",
      python: "/venv/bin/python",
      command,
      missing: ["mlx.core", "mlx_lm"],
    },
  );
});

test("only a model the daemon says is off disk is downloaded first", () => {
  assert.equal(needsDownload({ modelOnDisk: false }, ""), true);
  assert.equal(needsDownload({ modelOnDisk: true }, ""), false);
  assert.equal(needsDownload({ modelOnDisk: null }, undefined), false);
  assert.equal(needsDownload({}, undefined), false);
});

test("a model served by an endpoint is never downloaded", () => {
  assert.equal(
    needsDownload({ modelOnDisk: false }, "http://127.0.0.1:8080/v1"),
    false,
  );
});

test("the install line quotes the words a shell would change", () => {
  assert.equal(
    shellLine([
      "/My Env/bin/python",
      "-m",
      "pip",
      "install",
      "counterfoil[mlx]",
    ]),
    "'/My Env/bin/python' -m pip install 'counterfoil[mlx]'",
  );
  assert.equal(shellLine(["it's"]), `"it's"`);
  assert.equal(
    shellLine(["mlx==0.32.4; sys_platform == 'darwin'"]),
    `"mlx==0.32.4; sys_platform == 'darwin'"`,
  );
  assert.equal(shellLine(["it's $HOME"]), "'it'\\''s $HOME'");
});

const INSTALL = [
  "C:\\Users\\Ann Lee\\env\\Scripts\\python.exe",
  "-m",
  "pip",
  "install",
  "counterfoil[mlx]",
  'mlx==0.32.4; sys_platform == "darwin"',
];

test("PowerShell and pwsh are told apart from POSIX shells by the terminal's shell path", () => {
  assert.equal(
    shellKind("C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"),
    "powershell",
  );
  assert.equal(
    shellKind("C:\\Program Files\\PowerShell\\7\\pwsh.exe"),
    "powershell",
  );
  assert.equal(shellKind("/usr/local/bin/pwsh"), "powershell");
  assert.equal(
    shellKind("/opt/microsoft/powershell/7/pwsh-preview"),
    "powershell",
  );
  assert.equal(shellKind("/bin/zsh"), "posix");
  assert.equal(shellKind("/usr/bin/bash"), "posix");
  assert.equal(shellKind(undefined), "posix");
});

test("the PowerShell install line calls the quoted program with & and single-quotes what PowerShell reads", () => {
  assert.equal(
    powershellLine(INSTALL),
    "& 'C:\\Users\\Ann Lee\\env\\Scripts\\python.exe' -m pip install 'counterfoil[mlx]' 'mlx==0.32.4; sys_platform == \"darwin\"'",
  );
  assert.equal(
    powershellLine(["python", "-m", "pip", "install", "httpx<1,>=0.27"]),
    "& python -m pip install 'httpx<1,>=0.27'",
  );
});

test("the PowerShell line doubles every quote PowerShell ends a string with and expands nothing", () => {
  assert.equal(powershellLine(["it's"]), "& 'it''s'");
  assert.equal(powershellLine(["a\u2019b"]), "& 'a\u2019\u2019b'");
  assert.equal(
    powershellLine(["$HOME", "@args", "a,b", "`n"]),
    "& '$HOME' '@args' 'a,b' '`n'",
  );
});

test("the line typed into a terminal is quoted for that terminal's shell", () => {
  assert.equal(
    terminalLine(INSTALL, "/usr/local/bin/pwsh"),
    powershellLine(INSTALL),
  );
  assert.equal(terminalLine(INSTALL, "/bin/bash"), shellLine(INSTALL));
  assert.equal(
    terminalLine(["/My Env/bin/python", "-m", "pip"], "/bin/zsh"),
    "'/My Env/bin/python' -m pip",
  );
});

test("a runtime is not offered for a model whose files cannot be had: both are said at once", () => {
  const decision = decideRuntime({
    model: "qwen3-4b",
    extra: "mlx",
    missing: ["mlx.core", "mlx_lm"],
    python: "/venv/bin/python",
    command: ["/venv/bin/python", "-m", "pip", "install", "counterfoil[mlx]"],
    unavailable: null,
    modelAvailable: false,
    modelDetail:
      "qwen3-4b (Qwen/Qwen3-4B-MLX-4bit): neither in the hub cache nor downloadable",
  });
  assert.equal(decision.kind, "unavailable");
  assert.match(
    decision.kind === "unavailable" ? decision.reason : "",
    /needs mlx\.core, mlx_lm and its files, and the files cannot be had: .*neither in the hub cache/,
  );
});
