#!/usr/bin/env bash
# Installs Nestopia's libretro core, the peer group's second peer (benches/peer/src/nestopia.rs):
# Debian's `libretro-nestopia`, which puts nestopia_libretro.so in /usr/lib/<multiarch>/libretro/.
# Does nothing when the core is already there. Needs root and apt-get; exits 1 (changing nothing)
# without them, so the caller decides whether a missing core skips or fails.
set -euo pipefail

multiarch="$(uname -m)-linux-gnu"
core="/usr/lib/$multiarch/libretro/nestopia_libretro.so"
if [[ -n "${ANES_NESTOPIA_CORE:-}" ]]; then
    # A core of one's own: nothing to install, it must be there.
    if [[ -f "$ANES_NESTOPIA_CORE" ]]; then
        echo "install-nestopia: ANES_NESTOPIA_CORE=$ANES_NESTOPIA_CORE is installed"
        exit 0
    fi
    echo "install-nestopia: ANES_NESTOPIA_CORE=$ANES_NESTOPIA_CORE: no such file" >&2
    exit 1
fi
if [[ -f "$core" ]]; then
    echo "install-nestopia: $core is installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-nestopia: apt-get not found; install libretro-nestopia (or set ANES_NESTOPIA_CORE) by hand" >&2
    exit 1
fi
if [[ $(id -u) != 0 ]]; then
    echo "install-nestopia: must run as root to apt-get install libretro-nestopia" >&2
    exit 1
fi
echo "install-nestopia: apt-get install libretro-nestopia"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends libretro-nestopia
test -f "$core"
echo "install-nestopia: $core is installed"
