#!/bin/sh
# Make sure the packages baton builds and tests with are installed.
# As root: installs the missing ones with apt-get. Otherwise: names them and fails.
set -eu
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in build-essential pkg-config libyaml-dev libcjson-dev libgsl-dev libexpat1-dev libcriterion-dev clang libclang-rt-dev valgrind parallel; do
    have_pkg "$p" || need="$need $p"
done
command -v gnuplot >/dev/null 2>&1 || need="$need gnuplot-nox"
# Only the browser test of the teaching pages needs these; without them it is skipped.
want=""
command -v python3 >/dev/null 2>&1 || want="$want python3"
command -v chromium >/dev/null 2>&1 || want="$want chromium"
command -v chromedriver >/dev/null 2>&1 || want="$want chromium-driver"
# Only the Slurm test (tests/slurm/run.sh) needs these (3.7 MB without recommends).
command -v sbatch >/dev/null 2>&1 || want="$want slurm-wlm"
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || want="$want munge"

[ -z "$need$want" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    need="$need$want"
    echo "baton: installing missing packages:$need" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need >&2
    exit 0
fi
[ -n "$want" ] && echo "baton: the browser or Slurm test will be skipped; they need:$want (sudo apt-get install$want)" >&2
[ -z "$need" ] && exit 0
echo "baton: missing packages:$need" >&2
echo "baton: install them with: sudo apt-get install$need" >&2
exit 1
