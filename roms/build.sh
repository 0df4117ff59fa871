#!/bin/sh
# Builds every anes ROM with ca65/ld65 (Debian package cc65) into the .nes next to its source.
#   roms/build.sh           rebuild the committed .nes files
#   roms/build.sh --check   rebuild into a temporary directory and fail if any byte differs
#   roms/build.sh [--check] demo/demo.s ...   only the named sources
# The output is deterministic: ca65/ld65 write no timestamps or paths into a raw binary.
# Licence: MIT OR Apache-2.0 (ours).
set -eu
command -v ca65 >/dev/null && command -v ld65 >/dev/null || {
    echo "roms/build.sh needs ca65 and ld65 (Debian/Ubuntu: apt-get install cc65)" >&2
    exit 1
}
here=$(cd "$(dirname "$0")" && pwd)
check=0
[ "${1:-}" = "--check" ] && check=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# source (relative to roms/)   linker config
ROMS="
demo/demo.s             demo/demo.cfg
stress/unofficial.s     common/nrom.cfg
stress/dma_collide.s    common/nrom.cfg
stress/ppu_race.s       common/nrom.cfg
stress/mmc3_irq.s       common/mmc3_small.cfg
stress/mmc3_a12.s       common/mmc3_small.cfg
stress/frame_irq.s      common/nrom.cfg
stress/smc.s            common/nrom.cfg
mmc6/mmc6.s             common/mmc3_small.cfg
mmc5/mmc5.s             common/flat.cfg
mmc5/mmc5_audio.s       common/flat.cfg
vrc/vrc4e.s             common/vrc.cfg
vrc/vrc4c.s             common/vrc.cfg
vrc/vrc4d.s             common/vrc.cfg
vrc/vrc2b.s             common/vrc.cfg
vrc6/vrc6a.s            common/vrc.cfg
vrc6/vrc6b.s            common/vrc.cfg
vrc6/vrc6_ntrom.s       common/vrc.cfg
vrc7/vrc7a.s            common/vrc.cfg
vrc7/vrc7b.s            common/vrc.cfg
vrc1/m075_vrc1.s        common/flat.cfg
vrc3/m073_vrc3.s        vrc3/vrc3.cfg
sunsoft/m067_sunsoft3.s common/vrc.cfg
sunsoft/m068_sunsoft4.s common/vrc.cfg
sunsoft/m069_fme7.s     common/vrc.cfg
sunsoft/m089_sunsoft2.s common/flat.cfg
sunsoft/m093_sunsoft2_3r.s common/flat.cfg
sunsoft/m184_sunsoft1.s common/flat.cfg
namco/m019_namco163.s   common/flat.cfg
namco/m019_namco163_ntrom.s common/flat.cfg
namco/m210_namco175.s   common/flat.cfg
namco/m210_namco340.s   common/flat.cfg
discrete/m013_cprom.s   common/flat.cfg
discrete/m034_bnrom.s   common/flat.cfg
discrete/m034_nina001.s common/flat.cfg
discrete/m079_nina03.s  common/flat.cfg
discrete/m094_un1rom.s  common/flat.cfg
discrete/m113_nina06.s  common/flat.cfg
discrete/m140_jf11.s    common/flat.cfg
discrete/m180_unrom.s   common/flat.cfg
discrete/m185_cnrom.s   common/flat.cfg
discrete/m232_quattro.s common/flat.cfg
discrete/m032_g101.s    common/flat.cfg
discrete/m032_major_league.s common/flat.cfg
discrete/m078_cosmo_carrier.s common/flat.cfg
discrete/m078_holy_diver.s common/flat.cfg
discrete/m086_jf13.s    common/flat.cfg
discrete/m087_jf05.s    common/flat.cfg
discrete/m092_jf19.s    common/flat.cfg
discrete/m097_tam_s1.s  common/flat.cfg
discrete/m030_unrom512.s common/flat.cfg
discrete/m030_unrom512_flash.s common/flat.cfg
discrete/m028_action53.s common/flat.cfg
secret/secret.s         common/nrom.cfg
regions/timing.s        common/nrom.cfg
regions/dots.s          common/nrom.cfg
poweron/one_vblank.s    common/nrom.cfg
mmc3fam/m004_big_prg.s  mmc3fam/image.cfg
mmc3fam/m118_txsrom.s   mmc3fam/image.cfg
mmc3fam/m119_tqrom.s    mmc3fam/image.cfg
mmc3fam/m155_mmc1a.s    mmc3fam/image.cfg
mmc3fam/m076_namcot3446.s mmc3fam/image.cfg
mmc3fam/m088_namcot3443.s mmc3fam/image.cfg
mmc3fam/m095_namcot3425.s mmc3fam/image.cfg
mmc3fam/m154_namcot3453.s mmc3fam/image.cfg
mmc3fam/m111_gtrom.s    mmc3fam/image.cfg
mmc3fam/m206_dxrom.s    mmc3fam/image.cfg
asic/m018_ss88006.s     mmc3fam/image.cfg
asic/m065_h3001.s       mmc3fam/image.cfg
asic/m033_tc0190.s      mmc3fam/image.cfg
asic/m048_tc0690.s      mmc3fam/image.cfg
tengen/m064_rambo1.s    mmc3fam/image.cfg
event/m105_nes_event.s  common/flat.cfg
taito/m080_x1005.s      mmc3fam/image.cfg
taito/m207_x1005.s      mmc3fam/image.cfg
taito/m082_x1017.s      mmc3fam/image.cfg
bandai/m016_lz93d50.s   bandai/bandai.cfg
bandai/m159_lz93d50.s   bandai/bandai.cfg
bandai/m016_fcg.s       bandai/bandai.cfg
bandai/m153_bandai.s    common/flat.cfg
bandai/m070_bandai.s    common/flat.cfg
bandai/m152_bandai.s    common/flat.cfg
"
build_one() {
    src=$1 cfg=$2
    name=$(basename "$src" .s)
    dir=$(dirname "$src")
    ca65 -I "$here/common" -I "$here/$dir" -o "$tmp/$name.o" "$here/$src" || exit 1
    ld65 -C "$here/$cfg" -o "$tmp/$name.nes" "$tmp/$name.o" || exit 1
    if [ $check = 1 ]; then
        if ! cmp -s "$tmp/$name.nes" "$here/$dir/$name.nes"; then
            echo "DIFFERS: $dir/$name.nes (rebuild with roms/build.sh and commit)" >&2
            exit 1
        fi
        echo "same: $dir/$name.nes"
    else
        cp "$tmp/$name.nes" "$here/$dir/$name.nes"
        echo "built: $dir/$name.nes"
    fi
}

[ $check = 1 ] && shift
filter=" $* "
set -- $ROMS
while [ $# -ge 2 ]; do
    case "$filter" in
        "  " | *" $1 "*) build_one "$1" "$2" ;;
    esac
    shift 2
done
