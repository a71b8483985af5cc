#!/bin/sh
# cstring.sh NAME FILE: FILE as a C string constant NAME (the teaching page's
# CSS and script are kept as ordinary files and built into baton this way).
# Backslashes, quotes and question marks (no trigraphs) are escaped.
set -eu
printf 'const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/    "/' -e 's/$/\\n"/' "$2"
printf '    "";\n'
