# Start and stop a private code-server (a real VS Code) on 127.0.0.1 with the packaged extension.
# Sourced by scripts/editor-test.sh and scripts/editor-demo.sh. Everything it writes lives under
# one state folder; the server runs in its own process group so one kill ends it and every
# extension host and daemon it started.

CODE_SERVER_PGID=""

# Prints a TCP port on 127.0.0.1 that nothing listens on.
code_server_free_port() {
  python3 - <<'PY'
import socket
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    print(probe.getsockname()[1])
PY
}

# code_server_port_is_free PORT
code_server_port_is_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# code_server_prepare BIN STATE_DIR VSIX: private config, settings and extension install.
code_server_prepare() {
  local bin="$1" state="$2" vsix="$3"
  mkdir -p "$state/user/User" "$state/ext" "$state/tmp" "$state/xdg/config" "$state/xdg/data" "$state/xdg/cache"
  printf 'auth: none\ncert: false\n' > "$state/config.yaml"
  cat > "$state/user/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "files.autoSave": "off",
  "git.openRepositoryInParentFolders": "never",
  "window.restoreWindows": "none"
}
JSON
  code_server_env "$state" "$bin" --config "$state/config.yaml" --user-data-dir "$state/user" \
    --extensions-dir "$state/ext" --install-extension "$vsix" --force > "$state/install-extension.log" 2>&1 || {
      cat "$state/install-extension.log" >&2
      return 1
    }
}

# code_server_env STATE_DIR COMMAND...: runs COMMAND with temp and XDG folders of its own.
code_server_env() {
  local state="$1"
  shift
  TMPDIR="$state/tmp" XDG_CONFIG_HOME="$state/xdg/config" XDG_DATA_HOME="$state/xdg/data" \
    XDG_CACHE_HOME="$state/xdg/cache" "$@"
}

# code_server_builtin_extensions BIN STATE_DIR: prints a folder of links to code-server's built-in
# extensions, less those whose folder names are in CODE_SERVER_DISABLED_EXTENSIONS (names
# separated by white space); code-server has no --disable-extension.
code_server_builtin_extensions() {
  local bin="$1" state="$2" builtin entry name disabled
  builtin="$(cd "$(dirname "$(readlink -f "$bin")")/../.." && pwd)/lib/vscode/extensions"
  rm -rf "$state/builtin-extensions"
  mkdir -p "$state/builtin-extensions"
  for entry in "$builtin"/*; do
    name="$(basename "$entry")"
    for disabled in $CODE_SERVER_DISABLED_EXTENSIONS; do
      if [ "$name" = "$disabled" ]; then continue 2; fi
    done
    ln -s "$entry" "$state/builtin-extensions/$name"
  done
  echo "$state/builtin-extensions"
}

# code_server_start BIN STATE_DIR PORT [FOLDER]: serves on 127.0.0.1:PORT and waits for /healthz.
# The built-in extensions named in CODE_SERVER_DISABLED_EXTENSIONS are left out.
code_server_start() {
  local bin="$1" state="$2" port="$3" folder="${4:-}"
  if ! code_server_port_is_free "$port"; then
    echo "port $port on 127.0.0.1 is already in use" >&2
    return 1
  fi
  local args=(--config "$state/config.yaml" --user-data-dir "$state/user" --extensions-dir "$state/ext"
    --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check
    --disable-workspace-trust --disable-getting-started-override)
  if [ -n "${CODE_SERVER_DISABLED_EXTENSIONS:-}" ]; then
    args+=(--builtin-extensions-dir "$(code_server_builtin_extensions "$bin" "$state")")
  fi
  if [ -n "$folder" ]; then args+=("$folder"); fi
  # A plain command (not a function) so that $! is setsid's own pid, which becomes the group id.
  TMPDIR="$state/tmp" XDG_CONFIG_HOME="$state/xdg/config" XDG_DATA_HOME="$state/xdg/data" \
    XDG_CACHE_HOME="$state/xdg/cache" setsid "$bin" "${args[@]}" > "$state/code-server.log" 2>&1 < /dev/null &
  CODE_SERVER_PGID=$!
  echo "$CODE_SERVER_PGID" > "$state/code-server.pgid"
  local attempt
  for attempt in $(seq 1 150); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/healthz', timeout=1)" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$CODE_SERVER_PGID" 2>/dev/null; then
      echo "code-server exited; its log:" >&2
      cat "$state/code-server.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "code-server did not answer /healthz within 30 s" >&2
  return 1
}

# code_server_stop: ends the server's whole process group (extension hosts and daemons too).
code_server_stop() {
  if [ -z "$CODE_SERVER_PGID" ]; then return 0; fi
  kill -TERM -- "-$CODE_SERVER_PGID" 2>/dev/null || true
  local attempt
  for attempt in $(seq 1 25); do
    kill -0 -- "-$CODE_SERVER_PGID" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL -- "-$CODE_SERVER_PGID" 2>/dev/null || true
  CODE_SERVER_PGID=""
}
