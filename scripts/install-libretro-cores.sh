#!/usr/bin/env bash
# Installs the Debian libretro cores the libretro host's tests and `anes audit`'s documented table run
# (crates/anes-retro-host/tests/debian_cores.rs, docs/USING-LOCKSTEP.md): Nestopia (NES), Gambatte
# (Game Boy), mGBA (GBA), bsnes-mercury (SNES), Beetle PCE Fast (PC Engine), with their `.info` files
# (libretro-core-info). Does nothing when they are installed. Needs root and apt-get; exits 1
# (changing nothing) without them, so the caller decides whether missing cores skip or fail a test.
set -euo pipefail

packages=(libretro-nestopia libretro-gambatte libretro-mgba libretro-bsnes-mercury-performance
    libretro-beetle-pce-fast libretro-core-info)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [[ ${#missing[@]} == 0 ]]; then
    echo "install-libretro-cores: ${packages[*]} are installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-libretro-cores: apt-get not found; install ${missing[*]} by hand" >&2
    exit 1
fi
if [[ $(id -u) != 0 ]]; then
    echo "install-libretro-cores: must run as root to apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "install-libretro-cores: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
