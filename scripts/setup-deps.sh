#!/usr/bin/env bash
# Installs what jrace needs on a fresh Debian 12 machine, only what is missing.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail

need_apt=()
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# Later parts (the z3-backed detectors, the JVMTI bindings) need these; installing
# them now keeps the set-up command the same as the project grows.
dpkg -s libz3-dev >/dev/null 2>&1 || need_apt+=(libz3-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need_apt+=(libclang-dev)
# Headless browser for the `jrace witness --html` page test (about 1 min to install):
# only scripts/test.sh asks for it (JRACE_SETUP_TESTS=1).
if [ "${JRACE_SETUP_TESTS:-0}" = 1 ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >&2
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: Rust is missing: install it with rustup (https://rustup.rs), then run this again" >&2
    exit 2
  fi
fi
