#!/bin/sh
# doctest.sh BATON FILE.md... - run every command a document shows and
# check that it prints what the document says it prints.
#
# A command is a line starting with "$ " inside a ```console block (a line
# ending in a backslash continues it); its expected output is every line
# after it up to the next "$ " line or the end of the block. Only stdout is
# compared (write 2>&1 in the command to show stderr too), and the command
# must exit 0. Each file's commands run in order, in one scratch directory
# that links the repository's top-level entries (topologies/, validate/,
# build/, ...), so a command may write a file (-o cal.yaml, --plot a.png)
# that a later one of the same file reads, and nothing lands in the tree.
# "build/baton" in a command is the binary under test (BATON), so the
# sanitizer build checks the same pages. SOURCE_DATE_EPOCH is fixed (a
# calibrated file records its date).
#
#   sh scripts/doctest.sh build/baton README.md docs/guide/*.md
#   sh scripts/doctest.sh --update build/baton docs/guide/teaching.md
#       rewrites each block's output with what the command printed now (read
#       the diff before committing it: the document is the expected output).
set -eu
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
[ $# -ge 2 ] || { echo "usage: doctest.sh [--update] BATON FILE.md..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
BATON=$1; shift
case $BATON in /*) ;; *) BATON=$(cd "$(dirname "$BATON")" && pwd)/$(basename "$BATON") ;; esac
[ -x "$BATON" ] || { echo "doctest: $BATON is not an executable" >&2; exit 2; }
export BATON SOURCE_DATE_EPOCH=1796169600 BATON_NO_PROGRESS=1 LC_ALL=C
unset BATON_PATH BATON_PROGRESS || true
work=$(mktemp -d "${TMPDIR:-/tmp}/baton-doctest.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
failed=0 ran=0

# split FILE: writes $work/split/N.cmd, N.want (N = 1, 2, ...) and
# N.line (the command's line in FILE).
split_doc() {
    rm -rf "$work/split"; mkdir -p "$work/split"
    awk -v dir="$work/split" '
        function flush() { if (n > 0) { close(cmd); close(want) } }
        /^```/ { if (inblock) { inblock = 0; incmd = 0; next }
                 if ($0 ~ /^```console[ \t]*$/) { inblock = 1 } ; next }
        !inblock { next }
        incmd { print > cmd; if ($0 !~ /\\$/) incmd = 0; next }
        /^\$ / { flush(); n++; cmd = dir "/" n ".cmd"; want = dir "/" n ".want"
                 printf "" > want; f = dir "/" n ".line"; print NR > f; close(f)
                 print substr($0, 3) > cmd
                 if ($0 ~ /\\$/) incmd = 1
                 next }
        n > 0 { print > want }
        END { flush() }' "$1"
}

# the command, with build/baton (not build/baton-cuda ...) as $BATON
run_one() {
    sed 's#build/baton\([^-._a-zA-Z0-9]\)#"$BATON"\1#g; s#build/baton$#"$BATON"#' "$1" > "$1.sh"
    (cd "$work/tree" && sh "$1.sh") > "$2" 2> "$2.err"
}

for doc in "$@"; do
    rm -rf "$work/tree"; mkdir -p "$work/tree"
    for f in "$root"/* "$root"/.ci; do [ -e "$f" ] && ln -s "$f" "$work/tree/$(basename "$f")"; done
    split_doc "$doc"
    i=1
    while [ -f "$work/split/$i.cmd" ]; do
        c=$work/split/$i.cmd line=$(cat "$work/split/$i.line")
        ran=$((ran + 1))
        if ! run_one "$c" "$work/split/$i.got"; then
            echo "FAIL $doc:$line: exit status not 0: \$ $(cat "$c")"
            sed 's/^/  stderr: /' "$work/split/$i.got.err" | head -20
            failed=$((failed + 1))
        elif [ $update = 0 ] && ! cmp -s "$work/split/$i.want" "$work/split/$i.got"; then
            echo "FAIL $doc:$line: \$ $(cat "$c")"
            diff -u "$work/split/$i.want" "$work/split/$i.got" | sed '1,2d; s/^/  /' | head -60
            failed=$((failed + 1))
        fi
        i=$((i + 1))
    done
    if [ $update = 1 ]; then
        # rewrite: keep every line outside a command's output, put got in its place
        awk -v dir="$work/split" '
            function emit(k,   f, l) { f = dir "/" k ".got"; while ((getline l < f) > 0) print l; close(f) }
            /^```/ { if (inblock) { inblock = 0; skip = 0; print; next }
                     if ($0 ~ /^```console[ \t]*$/) inblock = 1; print; next }
            !inblock { print; next }
            incmd { print; if ($0 !~ /\\$/) { incmd = 0; emit(n) } ; next }
            /^\$ / { n++; skip = 1; print; if ($0 ~ /\\$/) incmd = 1; else emit(n); next }
            skip { next }
            { print }' "$doc" > "$work/updated"
        cat "$work/updated" > "$doc"
    fi
done
if [ $failed -gt 0 ]; then
    echo "doctest: $failed of $ran commands differ from their documents (sh scripts/doctest.sh --update BATON FILE rewrites a page's outputs)"
    exit 1
fi
echo "doctest: $ran commands print what their documents show"
