#!/bin/sh
# Layers: do the source files' #include "..." arrows run one way?
#
#   sh scripts/layers.sh [ROOT]      (default: the repository, .)
#
# Two rules (docs/DESIGN.md's layout; docs/decisions/layers.md):
#  1. No file includes a header of a room above its own. The rooms, from
#     the bottom up, are the list ROOMS below; tests/, bench/ and fuzz
#     harnesses stand outside and may include anything.
#  2. A room with a door is entered by it only: outside sim/nccl/, its one
#     interface sim/nccl/nccl.h is included, never its parts (NCCL's plan
#     for a call is one module: docs/decisions/nccl-plan.md). DOORS below.
#  3. No circle between modules. A module is foo.c with foo.h (and a private
#     foo_internal.h); foo and bar are in a circle when foo's files include
#     bar.h and bar's, by however many steps, include foo.h.
# Prints every arrow that breaks a rule and exits 1; silent and 0 when none.
set -eu
root=${1:-.}
cd "$root"

# Bottom first. A folder not named here is a mistake in this list: it fails.
DOORS="sim/nccl:nccl.h"
ROOMS="util models algorithms topologies sim/engine sim/form sim/nccl sim/answer sim/replay sim/teach validate include sim/lib tuner sim/cli"

files=$(find util models algorithms topologies sim validate include tuner -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "layers: no sources under $root" >&2; exit 2; }

# One line per arrow: "from-file to-file", paths relative to the root.
# shellcheck disable=SC2086
arrows=$(awk '
    function norm(p,   n, i, parts, out, k) {
        n = split(p, parts, "/"); k = 0
        for (i = 1; i <= n; i++) {
            if (parts[i] == "" || parts[i] == ".") continue
            if (parts[i] == "..") { if (k > 0) k--; continue }
            out[++k] = parts[i]
        }
        p = ""
        for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
        return p
    }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
        dir = FILENAME; if (dir ~ /\//) sub(/\/[^\/]*$/, "", dir); else dir = "."
        print FILENAME, norm(dir "/" inc)
    }' $files)

# The room of a file: the longest entry of ROOMS that is its folder.
room_awk='
    BEGIN { n = split(rooms, R, " "); for (i = 1; i <= n; i++) rank[R[i]] = i
            n = split(doors, D, " "); for (i = 1; i <= n; i++) { split(D[i], kv, ":"); door[kv[1]] = kv[2] } }
    function room(f,   d) {
        d = f; sub(/\/[^\/]*$/, "", d)
        while (d != "" && !(d in rank)) { if (d !~ /\//) return ""; sub(/\/[^\/]*$/, "", d) }
        return d
    }
    function module(f) { sub(/\.[ch]$/, "", f); sub(/_internal$/, "", f); return f }'

bad=0
# Rules 1 and 2: rooms and doors.
up=$(printf '%s\n' "$arrows" | awk -v rooms="$ROOMS" -v doors="$DOORS" "$room_awk"'
    { a = room($1); b = room($2)
      if (a == "") { print "layers: " $1 ": its folder is not a room (scripts/layers.sh ROOMS)"; next }
      if (b == "") next                       # a header outside the rooms (generated, system)
      if (rank[b] > rank[a]) print "layers: " $1 " includes " $2 ": " b "/ is above " a "/"
      if (a != b && (b in door) && $2 != b "/" door[b])
          print "layers: " $1 " includes " $2 ": outside " b "/ only its door " door[b] " is included" }')
[ -n "$up" ] && { printf '%s\n' "$up"; bad=1; }

# Rule 3: circles, found by tsort over module arrows (self-arrows dropped).
pairs=$(printf '%s\n' "$arrows" | awk -v rooms="$ROOMS" -v doors="$DOORS" "$room_awk"'
    { a = module($1); b = module($2); if (a != b) print a, b }' | LC_ALL=C sort -u)
loops=$(printf '%s\n' "$pairs" | tsort 2>&1 >/dev/null | sed "s/^tsort: -: input contains a loop:/--/" || true)
if [ -n "$loops" ]; then
    echo "layers: modules in a circle (each includes the next's header, around):"
    printf '%s\n' "$loops" | sed 's/^tsort: /  /'
    bad=1
fi
exit $bad
