#!/bin/sh
# install.sh - what a user of the library does, from an installed prefix:
# `make install PREFIX=<tmp>` (reusing the build's outputs), then the example
# program (examples/libbaton/main.c) built with pkg-config against the shared
# library (baton) and the static one (baton-static; and libbaton.a with
# `pkg-config --static --libs baton`), each run from elsewhere; their numbers
# must be `baton predict`'s, only the public header installed, only its
# functions exported, and `make uninstall` must leave no file behind.
# Run from the repository root by tests/test_install.c; exit 0 pass, 77 skip
# (the line says why), anything else fail (the line says what).
set -u
bin=${BATON_BIN:-build/baton}
B=$(dirname "$bin")
case "$B" in
*san*) echo "SKIP: $bin is the sanitizer build, whose library a program would have to be built with" \
            "-fsanitize too; make test-plain runs this against the plain build"; exit 77 ;;
esac
for tool in cc make pkg-config readelf nm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: no $tool on this machine"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baton-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
repo=$(pwd)
fail() { echo "FAIL: $*"; exit 1; }
unset MAKEFLAGS MFLAGS MAKELEVEL                # not the outer make's jobserver

keep=                                           # install what was built: never remade here, where it
for f in baton libbaton.a libbaton.so libnccl-tuner-baton.so; do   # is (a rebuild from sources edited
    [ -e "$B/$f" ] && keep="$keep -o $B/$f"      # meanwhile replaced the binary under the tests beside this)
done
# shellcheck disable=SC2086
make --no-print-directory B="$B" PREFIX="$prefix" $keep install >"$tmp/make.log" 2>&1 ||
    { tail -20 "$tmp/make.log"; fail "make install PREFIX=$prefix"; }

# The public header only, and only its functions exported by the shared library.
[ -f "$prefix/include/baton.h" ] || fail "no $prefix/include/baton.h"
others=$(cd "$prefix/include" && find . ! -type d ! -name baton.h)
[ -z "$others" ] || fail "internal headers installed: $others"
[ "$(readelf -d "$prefix/lib/libbaton.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = libbaton.so.0 ] ||
    fail "libbaton.so's soname is not libbaton.so.0"
nm -D --defined-only "$prefix/lib/libbaton.so.0" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort >"$tmp/exported"
sed -n 's/^BATON_API [^(]*[ *]\(baton_[a-z_]*\)(.*/\1/p' include/baton.h | sort >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "no BATON_API declarations read from include/baton.h"
cmp -s "$tmp/exported" "$tmp/declared" || fail "exported symbols differ from include/baton.h's: $(diff "$tmp/declared" "$tmp/exported" | grep '^[<>]' | head -5 | tr '\n' ' ')"

# The example, three ways.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags="-std=c11 -Wall -Wextra -Werror"
cc $cflags -o "$tmp/shared" examples/libbaton/main.c $(pkg-config --cflags --libs baton) 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; fail "cc main.c \$(pkg-config --cflags --libs baton)"; }
cc $cflags -o "$tmp/static" examples/libbaton/main.c $(pkg-config --cflags --libs baton-static) 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; fail "cc main.c \$(pkg-config --cflags --libs baton-static)"; }
cc $cflags -o "$tmp/archive" examples/libbaton/main.c $(pkg-config --cflags baton) "$prefix/lib/libbaton.a" \
    -Wl,--as-needed $(pkg-config --static --libs baton) 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; fail "cc main.c libbaton.a \$(pkg-config --static --libs baton)"; }
readelf -d "$tmp/shared" | grep -q 'NEEDED.*\[libbaton\.so\.0\]' || fail "the shared build does not need libbaton.so.0"
for x in static archive; do
    ! readelf -d "$tmp/$x" | grep -q 'NEEDED.*libbaton' || fail "the $x build needs libbaton.so"
done

# Run from elsewhere: the shared library finds the machines installed beside
# it; a static program (not in PREFIX/bin) is told where by $BATON_PATH.
cd "$tmp" || fail "cd $tmp"
LD_LIBRARY_PATH="$prefix/lib" ./shared >shared.out 2>&1 || { cat shared.out; fail "the shared build did not run"; }
BATON_PATH="$prefix/share/baton/topologies" ./static >static.out 2>&1 || { cat static.out; fail "the static build did not run"; }
BATON_PATH="$prefix/share/baton/topologies" ./archive >archive.out 2>&1 || { cat archive.out; fail "the archive build did not run"; }

# `baton predict`'s own numbers (the installed binary), in the example's form.
for a in ring nccl; do
    "$prefix/bin/baton" predict -t hgx-h100 -c allreduce -a "$a" -s 1GiB --json >"predict-$a.json" 2>&1 ||
        { cat "predict-$a.json"; fail "baton predict -a $a"; }
    sed 's/[{}]//g' "predict-$a.json" | tr ',' '\n' | tr -d '"' | awk -F: -v a="$a" '
        {v[$1] = $2} END {printf "-a %s: %s/%s %s %s %s\n", a, v["algorithm"], v["protocol"], v["time_s"], v["algbw_GBps"], v["busbw_GBps"]}'
done >expected
for x in shared static archive; do
    grep '^-a ' "$x.out" | awk '{print $1, $2, $3, $5, $7, $9}' >"$x.got"
    [ "$(wc -l <"$x.got")" -eq 2 ] || { cat "$x.out"; fail "the $x build printed no two results"; }
    awk 'NR == FNR {e[FNR] = $0; next}
         {split(e[FNR], w, " ")
          if ($1 != w[1] || $2 != w[2] || $3 != w[3]) {print "line " FNR ": " $0 " vs " e[FNR]; bad = 1}
          for (i = 4; i <= 6; i++) {d = $i - w[i]; if (d < 0) d = -d
              if (w[i] <= 0 || d > 1e-8 * w[i]) {print "line " FNR ": " $0 " vs baton predict " e[FNR]; bad = 1}}}
         END {exit bad}' expected "$x.got" >"$x.diff" || fail "the $x build disagrees with baton predict: $(cat "$x.diff")"
done

# The NCCL tuner plugin: only NCCL's entry points exported; loaded from
# elsewhere by the harness as NCCL loads it, it finds the installed machine
# by name and answers as the installed `baton select --format nccl-tuner`.
plugin=$prefix/lib/libnccl-tuner-baton.so
[ -f "$plugin" ] || fail "no $plugin"
[ "$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort | tr '\n' ' ')" = \
  "ncclTunerPlugin_v2 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 " ] ||
    fail "the tuner plugin exports more than ncclTunerPlugin_v2..v6: $(nm -D --defined-only "$plugin" | head -5 | tr '\n' ' ')"
harness=$repo/$B/tuner_harness
if [ -x "$harness" ]; then
    echo "allreduce 67108864" | BATON_TUNER_MACHINE=hgx-h100 "$harness" "$plugin" 6 8 1 >tuner.out 2>&1 ||
        { cat tuner.out; fail "the installed tuner plugin did not load hgx-h100"; }
    want=$("$prefix/bin/baton" select -t hgx-h100 -c allreduce --format nccl-tuner | awk -F, '!/^#/ && $2 <= 67108864 && 67108864 <= $3 {print $4, $5}')
    [ "$(awk '/^allreduce/ {print $3, $4}' tuner.out)" = "$want" ] || fail "tuner plugin: $(cat tuner.out), select: $want"
fi
cd "$repo" || fail "cd $repo"

make --no-print-directory B="$B" PREFIX="$prefix" uninstall >"$tmp/make.log" 2>&1 ||
    { tail -20 "$tmp/make.log"; fail "make uninstall"; }
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: installed, built three ways, same numbers as baton predict ($(tr '\n' ';' <"$tmp/expected")), uninstalled"
