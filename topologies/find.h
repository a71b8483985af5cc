/* find.h - where a machine named NAME is: the search path `-t NAME` and a
 * calibrated machine's `extends: NAME` share, so a file that names a shipped
 * machine finds it wherever the file is kept. */
#ifndef BATON_FIND_H
#define BATON_FIND_H

#include <stddef.h>

/* NAME (or NAME.yaml) as given, then in topologies/ under the current
 * directory, in each directory of $BATON_PATH (colon-separated), then in the
 * installed share directory (topo_find_share), last the clone's topologies/
 * beside the binary (build/../topologies); a path with a '/' is only
 * tried as given. 1 and path, or 0. */
int topo_find(const char *name, char *path, size_t n);

/* The same search without the first step (NAME as given): where a shipped
 * machine of that name is, or 0. A file found only in the current directory
 * is the user's, not shipped. */
int topo_find_shipped(const char *name, char *path, size_t n);

/* The installed machines: PREFIX/share/baton/topologies beside the binary's
 * PREFIX/bin, else BATON_SHARE's (default /usr/local/share/baton). */
const char *topo_find_share(char *buf, size_t n);

/* The clone's machines beside the binary, <exe dir>/../topologies resolved,
 * or "" where there is no such directory. */
const char *topo_find_repo(char *buf, size_t n);

/* How a file kept anywhere refers to the machine at path (a calibrated
 * machine's `extends:`): its name where $BATON_PATH, the installed share
 * or the clone beside the binary holds this very file under that name (a
 * file in the current folder's topologies/ is the user's own unless one of
 * those holds it too), else its absolute path,
 * which survives moving the file that refers to it. 0, or -1 if path does
 * not resolve. */
int topo_find_ref(const char *path, char *ref, size_t n);

#endif
