#!/usr/bin/env bash
# Installs what the RetroArch test of the libretro core needs (crates/anes-libretro/tests/retroarch.rs):
# Debian's `retroarch` client and an X server to run it headless (`xvfb-run`, `xauth`). Does nothing when
# they are already installed. Needs root and apt-get; exits 1 (changing nothing) without them, so the
# caller can decide whether a missing client skips or fails the test.
set -euo pipefail

if command -v retroarch >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1 && command -v xauth >/dev/null 2>&1; then
    echo "install-retroarch: retroarch, xvfb-run and xauth are installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-retroarch: apt-get not found; install retroarch, xvfb and xauth by hand" >&2
    exit 1
fi
if [[ $(id -u) != 0 ]]; then
    echo "install-retroarch: must run as root to apt-get install retroarch xvfb xauth" >&2
    exit 1
fi
echo "install-retroarch: apt-get install retroarch xvfb xauth"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends retroarch xvfb xauth
command -v retroarch >/dev/null 2>&1 && command -v xvfb-run >/dev/null 2>&1
