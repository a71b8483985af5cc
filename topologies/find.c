/* find.c - the machine search path (see find.h). */
#define _GNU_SOURCE                 /* dladdr, readlink */
#include "find.h"

#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BATON_SHARE
#define BATON_SHARE "/usr/local/share/baton"
#endif

/* PREFIX/share/baton/topologies for the file at path, PREFIX/bin/baton or
 * PREFIX/lib/libbaton.so.N: the folder above the file's folder. */
static int share_beside(const char *file, char *buf, size_t n) {
    const char *slash = file ? strrchr(file, '/') : NULL;
    const char *up = slash;
    while (up && up > file && up[-1] != '/') up--;
    if (up == NULL || up == file) return 0;
    snprintf(buf, n, "%.*sshare/baton/topologies", (int)(up - file), file);
    return access(buf, R_OK) == 0;
}

/* The shared library's own install first (a program linked against an
 * installed libbaton.so finds that install's machines wherever it lives),
 * then the program's; dladdr names the executable in a static link. */
const char *topo_find_share(char *buf, size_t n) {
    Dl_info info;
    char exe[4096];
    if (dladdr((void *)topo_find_share, &info) && info.dli_fname && share_beside(info.dli_fname, buf, n)) return buf;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        if (share_beside(exe, buf, n)) return buf;
    }
    snprintf(buf, n, "%s/topologies", BATON_SHARE);
    return buf;
}

/* The machines of the clone the binary was built in, <exe dir>/../topologies
 * (build/baton, run from any directory, finds the repository's), as a last
 * resort; "" when there is no such directory. */
const char *topo_find_repo(char *buf, size_t n) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
    buf[0] = '\0';
    if (slash) {
        snprintf(buf, n, "%.*s/../topologies", (int)(slash - exe), exe);
        char *real = realpath(buf, NULL);
        if (real && access(real, R_OK) == 0) snprintf(buf, n, "%s", real);
        else buf[0] = '\0';
        free(real);
    }
    return buf;
}

/* Does dir/name or dir/name.yaml exist? Then path holds it (len 0: the name as given). */
static int try_dir(const char *dir, size_t len, const char *name, char *path, size_t n) {
    static const char *const ext[] = {"", ".yaml"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, n, "%.*s%s%s%s", (int)len, dir, len ? "/" : "", name, ext[k]);
        if (access(path, R_OK) == 0) return 1;
    }
    return 0;
}

/* Where the machines are kept apart from the current folder: $BATON_PATH,
 * the installed share, the clone beside the binary. */
static int find_kept(const char *name, char *path, size_t n) {
    for (const char *p = getenv("BATON_PATH"); p && *p;) {
        size_t len = strcspn(p, ":");
        if (len && try_dir(p, len, name, path, n)) return 1;
        p += len + (p[len] == ':');
    }
    char share[4096], repo[4096];
    if (try_dir(share, strlen(topo_find_share(share, sizeof share)), name, path, n)) return 1;
    return topo_find_repo(repo, sizeof repo)[0] && try_dir(repo, strlen(repo), name, path, n);
}

int topo_find_shipped(const char *name, char *path, size_t n) {
    if (strchr(name, '/')) return 0;                     /* a path, not a name */
    return try_dir("topologies", 10, name, path, n) || find_kept(name, path, n);
}

int topo_find(const char *name, char *path, size_t n) {
    return try_dir("", 0, name, path, n) || topo_find_shipped(name, path, n);
}

int topo_find_ref(const char *path, char *ref, size_t n) {
    char stem[256], shipped[4096];
    const char *slash = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : path);
    size_t len = strlen(stem);
    if (len > 5 && strcmp(stem + len - 5, ".yaml") == 0) stem[len - 5] = '\0';
    char *mine = realpath(path, NULL), *found = !strchr(stem, '/') && find_kept(stem, shipped, sizeof shipped) ? realpath(shipped, NULL) : NULL;
    int rc = mine ? 0 : -1;
    if (mine) snprintf(ref, n, "%s", found && strcmp(found, mine) == 0 ? stem : mine);
    free(mine);
    free(found);
    return rc;
}
