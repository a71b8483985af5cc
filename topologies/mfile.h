/* mfile.h - a machine file being read: the reading's state and the value
 * readers every section of the file shares (prefix mf_, machine file).
 *
 * topo_yaml.c loads a machine file; the sections are read by one file each
 * (mfile_params.c, mfile_graph.c, mfile_include.c, mfile_machine.c,
 * mfile_library.c, mfile_calib.c, mfile_fold.c), over this layer, which
 * reads a value as the file means it: ${...} substituted, in its unit,
 * every error "file:line:col: what" at the node that is wrong. None of them
 * sees libyaml: nodes come from ydoc.h. */
#ifndef BATON_MFILE_H
#define BATON_MFILE_H

#include <stddef.h>
#include <stdint.h>

#include "ydoc.h"
#include "topo.h"
#include "expand.h"
#include "fold.h"

#define MF_TEXT 1024                        /* a value, substituted, at most */
#define MF_FOLD_MAX 64                      /* witnesses of a folded cluster, at most */
#define MF_INCLUDE_MAX_COPIES 1048576L     /* copies of included files, all includes together */
#define MF_INCLUDE_MAX_COPIES_S "1048576"

typedef struct mfile {
    ydoc_t *doc;
    const char *file;
    topo_t *t;
    baton_err_t *e;
    int *next_rank;          /* shared with included files: ranks in declaration order */
    int own_next_rank;
    long *copies_left;       /* shared: included copies still allowed, against include bombs */
    long own_copies_left;
    expand_params_t params;
    char prefix[128];        /* an included copy's names start with this */
    int depth;               /* of includes */
    int fold_min;            /* fold a cluster of at least this many nodes (0: never) */
    int fold_nodes, fold_nw; /* folded: the nodes it stands for, the witnesses built */
    int fold_w[MF_FOLD_MAX];    /* the witnesses, ascending */
    char fold_text[MF_FOLD_MAX * 10 + 2];  /* "[0,1,...]": what the node bracket becomes (nodes < 2^24) */
    char fold_count[64];     /* folded: the parameter that counts its copies (nodes, racks) */
    const char *fold_why;    /* a cluster of enough copies that still loads whole: why (static text) */
    char fold_bracket[80];   /* folded: the bracket that numbers its copies, "[0-${nodes-1}]" or "[0-${racks-1}]" */
    fold_map_t *fold_map;    /* folded: which witnesses stand for two nodes (the topology's once loaded) */
    int fabric_first;        /* folded: the first node the fat_tree made */
} mfile_t;

/* A node name as declared in this file, as the topology knows it. */
void mf_prefixed(const mfile_t *c, const char *name, char *out, size_t len);
/* "file:line:col: " + fmt (with a and b, NULL as "") at node n; BATON_EPARSE. */
int mf_fail(mfile_t *c, ynode_t *n, const char *fmt, const char *a, const char *b);
/* Look up key in mapping m; NULL if absent. */
ynode_t *mf_get(mfile_t *c, ynode_t *m, const char *key);
/* Every key of m must be in the NULL-terminated list: typos are errors. */
int mf_only_keys(mfile_t *c, ynode_t *m, const char *const *keys, const char *what);
/* The scalar v with its ${...} substituted, into buf (MF_TEXT bytes). */
int mf_text(mfile_t *c, ynode_t *v, const char *key, char *buf);
/* "; did you mean 'nvlink_gbps'?" among the file's parameters and the
 * engine's keys, or "" (a static buffer: one message at a time). */
const char *mf_param_hint(const expand_params_t *ps, const char *name);
/* Required key, as substituted text; *vn its node, if vn. */
int mf_need(mfile_t *c, ynode_t *m, const char *key, char *buf, ynode_t **vn);
/* Required keys in their units: a bandwidth, a size ("64KiB", "80GB", a
 * number of bytes), a time. */
int mf_get_bw(mfile_t *c, ynode_t *m, const char *key, double *out);
int mf_get_size(mfile_t *c, ynode_t *m, const char *key, uint64_t *out);
int mf_get_time(mfile_t *c, ynode_t *m, const char *key, double *out);
/* Value v as a whole number of at least lo (0 or 1). */
int mf_get_int(mfile_t *c, ynode_t *v, const char *key, int lo, int *out);
/* A boolean key's value: 1, 0, `absent` if missing, negative on error. */
int mf_get_bool(mfile_t *c, ynode_t *m, const char *key, int absent);
/* `if:` / `unless:` decide whether an entry exists: 1 yes, 0 no, negative error. */
int mf_wanted(mfile_t *c, ynode_t *m);
/* Node ids named by a pattern (or a list of patterns); malloc'd into *ids. */
int mf_resolve(mfile_t *c, ynode_t *v, const char *key, int **ids, int *n);
/* fn on every item of list `key` of root (an error if it is missing and required). */
int mf_each(mfile_t *c, ynode_t *root, const char *key, int required, int (*fn)(mfile_t *, ynode_t *));

#endif
