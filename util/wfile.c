/* wfile.c - a file written whole or not at all (wfile.h). */
#define _GNU_SOURCE
#include "wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int wfile_write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n;
    }
    return 0;
}

/* A stream (or anything not a regular file): opened and written as it is. */
static int in_place(const char *path, const void *data, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return -1;
    int rc = wfile_write_all(fd, data, len), why = errno;
    if (close(fd) != 0 && rc == 0) rc = -1, why = errno;
    errno = why;
    return rc;
}

/* Data into tmp, a new file with the mode of the file it will replace
 * (st, where have), else the default; -1 with errno (tmp removed). A file
 * of that name is removed first and the new one made exclusively, never
 * followed: a link planted there cannot point the write elsewhere. */
static int stage(const char *tmp, const void *data, size_t len, int have, const struct stat *st) {
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666), rc, why;
    if (fd < 0) return -1;
    rc = wfile_write_all(fd, data, len);
    if (rc == 0 && have && fchmod(fd, st->st_mode & 07777) != 0) rc = -1;
    why = errno;
    if (close(fd) != 0 && rc == 0) rc = -1, why = errno;
    if (rc < 0) remove(tmp);
    errno = why;
    return rc;
}

/* The standard stream (1 or 2) whose file st is, or -1: -o /dev/stdout
 * with stdout sent to a file would otherwise unlink (renamed over) or
 * truncate (opened again) the file the stream still writes. */
static int std_stream(const struct stat *st) {
    struct stat f;
    for (int fd = 1; fd <= 2; fd++)
        if (fstat(fd, &f) == 0 && f.st_dev == st->st_dev && f.st_ino == st->st_ino) return fd;
    return -1;
}

/* Where a whole file for path goes: path, or its symlink's target (malloc'd
 * into *real); *have and *st say what is there now. 1: not a regular file
 * (or a dangling link), to be written in place. */
static int destination(const char *path, char **real, int *have, struct stat *st) {
    struct stat lst;
    *have = stat(path, st) == 0;
    int link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    *real = NULL;
    if ((*have && !S_ISREG(st->st_mode)) || (link && !*have)) return 1;
    if (*have && link && (*real = realpath(path, NULL)) == NULL) return -1;
    return 0;
}

int wfile_can_write(const char *path) {
    struct stat st;
    char *real, dir[4096];
    int have, d = destination(path, &real, &have, &st);
    if (d < 0) return -1;
    if (have && S_ISDIR(st.st_mode)) return free(real), errno = EISDIR, -1;
    if (d > 0 || (have && std_stream(&st) > 0)) return free(real), 0;   /* a stream, a device: written in place */
    const char *dst = real ? real : path, *slash = strrchr(dst, '/');  /* the link's target, as wfile_write */
    size_t n = slash ? (size_t)(slash - dst) : 0;
    int rc = n < sizeof dir ? 0 : (errno = ENAMETOOLONG, -1);
    if (rc == 0 && slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (rc == 0 && n == 0) snprintf(dir, sizeof dir, "/");
    else if (rc == 0) snprintf(dir, sizeof dir, "%.*s", (int)n, dst);
    if (rc == 0) rc = access(dir, W_OK | X_OK);     /* the new file is made beside it, then renamed over */
    free(real);
    return rc;
}

int wfile_write(const char *path, const void *data, size_t len) {
    struct stat st;
    char *real, tmp[4200];
    int have, why = 0, rc, d = destination(path, &real, &have, &st), fd = have ? std_stream(&st) : -1;
    if (d < 0) return -1;                          /* a link whose target cannot be named: errno says why */
    if (fd > 0) {                                  /* after what the stream holds, at its own offset */
        free(real);
        fflush(NULL);
        return wfile_write_all(fd, data, len);
    }
    if (d > 0) return in_place(path, data, len);
    const char *dst = real ? real : path;
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", dst, (long)getpid());
    if ((rc = stage(tmp, data, len, have, &st)) < 0) why = errno;
    if (rc == 0 && rename(tmp, dst) != 0) rc = -1, why = errno, remove(tmp);
    free(real);
    errno = why;
    return rc;
}

int wfile_set_add(wfile_set_t *s, const char *path, const void *data, size_t len) {
    struct stat st;
    char *real, tmp[4200];
    int have, d = destination(path, &real, &have, &st);
    if (d < 0) return -1;
    if (d > 0) {                                   /* a directory, a FIFO, a stream: not one of a set of files */
        errno = have && S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
        return -1;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **t = realloc(s->tmp, (size_t)cap * sizeof *t), **u = t ? realloc(s->dst, (size_t)cap * sizeof *u) : NULL;
        if (t) s->tmp = t;
        if (u) s->dst = u;
        if (t == NULL || u == NULL) { free(real); errno = ENOMEM; return -1; }
        s->cap = cap;
    }
    const char *dst = real ? real : path;
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", dst, (long)getpid());
    int rc = stage(tmp, data, len, have, &st), why = errno;
    if (rc == 0 && ((s->tmp[s->n] = strdup(tmp)) == NULL || (s->dst[s->n] = strdup(dst)) == NULL)) {
        free(s->tmp[s->n]);
        remove(tmp);
        rc = -1, why = ENOMEM;
    }
    if (rc == 0) s->n++;
    free(real);
    errno = why;
    return rc;
}

int wfile_set_commit(wfile_set_t *s) {
    for (int i = 0; i < s->n; i++) {
        if (rename(s->tmp[i], s->dst[i]) != 0) return -1;
        free(s->tmp[i]);
        s->tmp[i] = NULL;
    }
    return 0;
}

void wfile_set_free(wfile_set_t *s) {
    for (int i = 0; i < s->n; i++) {
        if (s->tmp[i]) remove(s->tmp[i]);
        free(s->tmp[i]);
        free(s->dst[i]);
    }
    free(s->tmp);
    free(s->dst);
    *s = (wfile_set_t){0};
}
