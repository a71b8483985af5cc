/* wfile.h - a file written whole or not at all (every -o, --trace and
 * --plot): its bytes go to a temporary beside the destination, which is
 * then renamed over it, so a reader never sees half a file and a failed
 * write leaves the old one. What the destination already is decides:
 *   a symlink     its target is replaced (the link stays a link);
 *   a file        it keeps its permissions;
 *   a FIFO, a device or a socket (/dev/stdout, /dev/null, a pipe)
 *                 written in place: a stream cannot be swapped for a file
 *                 (nor should /dev/full become one);
 *   the file behind our stdout or stderr (-o /dev/stdout > f)
 *                 written to that stream after what it holds. */
#ifndef BATON_WFILE_H
#define BATON_WFILE_H

#include <stddef.h>

/* 0, or -1 with errno saying why (the temporary removed). */
int wfile_write(const char *path, const void *data, size_t len);

/* Whether wfile_write could write path now (a stream, or a file whose
 * directory takes new files): 0, or -1 with errno. A command that works
 * minutes before it writes asks first. */
int wfile_can_write(const char *path);

/* All len bytes to fd, through short writes and EINTR: 0, or -1 (errno). */
int wfile_write_all(int fd, const void *data, size_t len);

/* Several files, all or none (a trace's file per rank): each written to its
 * temporary as it comes (wfile_set_add), then all renamed (wfile_set_commit);
 * wfile_set_free removes what was not renamed. A destination that exists
 * and is not a regular file (a directory, a FIFO) is refused at its add
 * (EISDIR, or EEXIST for the rest). A rename that fails part way leaves the
 * files renamed before it (rename is atomic per file, not per set). */
typedef struct wfile_set {
    int n, cap;
    char **tmp, **dst;
} wfile_set_t;

int wfile_set_add(wfile_set_t *s, const char *path, const void *data, size_t len);
/* 0, or -1 with errno (files renamed before the failure stay renamed). */
int wfile_set_commit(wfile_set_t *s);
void wfile_set_free(wfile_set_t *s);

#endif
