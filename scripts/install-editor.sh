#!/usr/bin/env bash
# Installs what the editor tests and the editor demo need: Debian packages, code-server from npm
# (a real VS Code with a Node extension host) in a cache folder outside the repository, and the
# extension's npm dependencies. Every step is skipped when its result is already there.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE_SERVER_VERSION="4.100.3"
CACHE_DIR="${COUNTERFOIL_CACHE:-$HOME/.cache/counterfoil}"
CODE_SERVER_DIR="$CACHE_DIR/code-server-$CODE_SERVER_VERSION"
CODE_SERVER_BIN="$CODE_SERVER_DIR/node_modules/.bin/code-server"

log() { printf '[install-editor] %s\n' "$*" >&2; }

install_debian_packages() {
  local wanted=(chromium build-essential python3 pkg-config libkrb5-dev ripgrep bubblewrap)
  local missing=()
  local package
  for package in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return
  fi
  log "installing Debian packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  local attempt
  for attempt in $(seq 1 60); do
    # Another apt run may hold the lock; wait for it rather than fail.
    if "${sudo[@]}" apt-get update -qq && \
       DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
         "${missing[@]}"; then
      return
    fi
    log "apt-get failed (attempt $attempt), probably locked; retrying in 10 s"
    sleep 10
  done
  log "could not install ${missing[*]}"
  exit 1
}

install_code_server() {
  if [ -x "$CODE_SERVER_BIN" ] && [ -f "$CODE_SERVER_DIR/.installed" ]; then
    return
  fi
  log "installing code-server@$CODE_SERVER_VERSION into $CODE_SERVER_DIR"
  rm -rf "$CODE_SERVER_DIR"
  mkdir -p "$CODE_SERVER_DIR"
  # @vscode/ripgrep's postinstall downloads a binary from outside the registry; hand it
  # Debian's rg, tarred under the name and cache folder it looks for.
  local tmp="$CODE_SERVER_DIR/tmp"
  local rg_cache="$tmp/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rg_cache" "$tmp/rg"
  cp "$(command -v rg)" "$tmp/rg/rg"
  tar -C "$tmp/rg" -czf "$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
  (
    cd "$CODE_SERVER_DIR"
    printf '{"name":"counterfoil-code-server","private":true}\n' > package.json
    TMPDIR="$tmp" npm_config_unsafe_perm=true npm_config_yes=true \
      npm install "code-server@$CODE_SERVER_VERSION" --foreground-scripts --no-audit --no-fund \
      > "$CODE_SERVER_DIR/npm-install.log" 2>&1 || {
        tail -40 "$CODE_SERVER_DIR/npm-install.log" >&2
        exit 1
      }
  )
  "$CODE_SERVER_BIN" --version >/dev/null
  rm -rf "$tmp"
  touch "$CODE_SERVER_DIR/.installed"
}

install_extension_dependencies() {
  local extension_dir="$REPO_ROOT/extension"
  local stamp="$extension_dir/node_modules/.package-lock.json"
  # A linked node_modules is another checkout's install: `npm ci` would empty it through the link.
  if [ -L "$extension_dir/node_modules" ]; then
    return
  fi
  if [ -f "$stamp" ] && [ "$stamp" -nt "$extension_dir/package-lock.json" ] && \
     [ "$stamp" -nt "$extension_dir/package.json" ]; then
    return
  fi
  log "npm ci in extension/"
  (cd "$extension_dir" && npm ci --no-audit --no-fund)
}

install_debian_packages
install_code_server
install_extension_dependencies
echo "$CODE_SERVER_BIN"
