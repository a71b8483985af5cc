/* import.c - `nvidia-smi topo -m` to a machine file (see import.h). */
#include "import.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT_MAX 64              /* devices in a matrix (GPUs and NICs) */

typedef enum { REL_X, REL_NV, REL_PIX, REL_PXB, REL_PHB, REL_NODE, REL_SYS } rel_t;

typedef struct {
    int n, ngpu;                    /* devices; GPUs are the first ngpu columns in order */
    char label[IMPORT_MAX][16];     /* GPU0, NIC0, ... */
    rel_t rel[IMPORT_MAX][IMPORT_MAX];
    int links[IMPORT_MAX][IMPORT_MAX];   /* NV#: # */
    int socket[IMPORT_MAX], sw[IMPORT_MAX];
} matrix_t;

static int is_device(const char *tok) {
    return (strncmp(tok, "GPU", 3) == 0 || strncmp(tok, "NIC", 3) == 0) && isdigit((unsigned char)tok[3]);
}

static int parse_rel(const char *tok, rel_t *r, int *links) {
    static const char *const names[] = {"X", "", "PIX", "PXB", "PHB", "NODE", "SYS"};
    *links = 0;
    if (strncmp(tok, "NV", 2) == 0 && isdigit((unsigned char)tok[2])) {
        char *end;
        long k = strtol(tok + 2, &end, 10);
        *r = REL_NV;
        *links = (int)k;
        return *end == '\0' && k > 0 && k < 100 ? 0 : -1;
    }
    for (int i = 0; i < 7; i++)
        if (i != REL_NV && strcmp(tok, names[i]) == 0) { *r = (rel_t)i; return 0; }
    return -1;
}

/* The header's device labels, in order; 0 if the line is not a header. */
static int read_header(char *line, matrix_t *m) {
    m->n = 0;
    if (!isspace((unsigned char)line[0])) return 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && m->n < IMPORT_MAX; tok = strtok(NULL, " \t\r\n")) {
        if (!is_device(tok)) break;
        snprintf(m->label[m->n++], sizeof m->label[0], "%s", tok);
    }
    return m->n >= 1 && strcmp(m->label[0], "GPU0") == 0 ? m->n : 0;
}

/* One matrix row: its label must be device `row`, then n cells. */
static int read_row(char *line, matrix_t *m, int row, const char *path, int lineno, baton_err_t *e) {
    char *tok = strtok(line, " \t\r\n");
    if (tok == NULL || strcmp(tok, m->label[row]) != 0)
        return err_set(e, BATON_EPARSE, "%s:%d: expected the row of %s", path, lineno, m->label[row]);
    for (int c = 0; c < m->n; c++) {
        tok = strtok(NULL, " \t\r\n");
        if (tok == NULL || parse_rel(tok, &m->rel[row][c], &m->links[row][c]) < 0)
            return err_set(e, BATON_EPARSE, "%s:%d: %s's column %s: '%s' is not X, NV#, PIX, PXB, PHB, NODE or SYS",
                           path, lineno, m->label[row], m->label[c], tok ? tok : "(missing)");
        if ((row == c) != (m->rel[row][c] == REL_X))
            return err_set(e, BATON_EPARSE, "%s:%d: X belongs on the diagonal only (%s, %s)", path, lineno, m->label[row],
                           m->label[c]);
    }
    return 0;
}

static int find(int *parent, int i) { return parent[i] == i ? i : (parent[i] = find(parent, parent[i])); }

/* Switches: PIX/PXB classes of two or more; sockets: the classes of
 * devices that are PIX, PXB, PHB or NODE apart, 2-coloured along SYS. */
static int group(matrix_t *m, const char *path, baton_err_t *e) {
    int sw[IMPORT_MAX], sock[IMPORT_MAX], color[IMPORT_MAX], size[IMPORT_MAX] = {0}, queue[IMPORT_MAX];
    for (int i = 0; i < m->n; i++) sw[i] = sock[i] = i, color[i] = -1;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            rel_t r = m->rel[i][j];
            if (r == REL_PIX || r == REL_PXB) sw[find(sw, i)] = find(sw, j);
            if (r == REL_PIX || r == REL_PXB || r == REL_PHB || r == REL_NODE) sock[find(sock, i)] = find(sock, j);
        }
    for (int i = 0; i < m->n; i++) size[find(sw, i)]++;
    for (int c = 0; c < m->n; c++) {
        if (find(sock, c) != c || color[c] >= 0) continue;
        int head = 0, tail = 0;
        color[c] = 0;
        queue[tail++] = c;
        while (head < tail) {                               /* breadth first over the classes */
            int x = queue[head++];
            for (int i = 0; i < m->n; i++)
                for (int j = 0; j < m->n && find(sock, i) == x; j++) {
                    int cj = find(sock, j);
                    if (m->rel[i][j] != REL_SYS) continue;
                    if (color[cj] < 0) color[cj] = !color[x], queue[tail++] = cj;
                    else if (color[cj] == color[x])
                        return err_set(e, BATON_EPARSE, "%s: %s and %s are SYS apart but on one socket by the rest of "
                                       "the matrix: more than two sockets are not supported", path, m->label[i], m->label[j]);
                }
        }
    }
    for (int i = 0; i < m->n; i++) {
        m->socket[i] = color[find(sock, i)] > 0;
        m->sw[i] = size[find(sw, i)] >= 2 ? find(sw, i) : -1;
    }
    return 0;
}

static int read_matrix(const char *path, matrix_t *m, baton_err_t *e) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open", path);
    char line[4096];
    int lineno = 0, row = -1, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        if (row < 0) { if (read_header(line, m)) row = 0; continue; }
        rc = read_row(line, m, row, path, lineno, e);
        if (++row == m->n) break;
    }
    fclose(f);
    if (rc < 0) return rc;
    if (row < 0) return err_set(e, BATON_EPARSE, "%s: no `nvidia-smi topo -m` matrix (a header line naming GPU0)", path);
    if (row < m->n) return err_set(e, BATON_EPARSE, "%s:%d: the matrix ends after %d of %d rows", path, lineno, row, m->n);
    for (m->ngpu = 0; m->ngpu < m->n && strncmp(m->label[m->ngpu], "GPU", 3) == 0;) m->ngpu++;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            if (m->rel[i][j] != m->rel[j][i] || m->links[i][j] != m->links[j][i])
                return err_set(e, BATON_EPARSE, "%s: the matrix is not symmetric at %s, %s", path, m->label[i], m->label[j]);
    return group(m, path, e);
}

static void lower(const char *s, char *out, size_t n) {
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = 0;
}

/* Write the machine. */
static void emit(const matrix_t *m, const char *path, const char *name, FILE *f) {
    int sockets = 1;
    for (int i = 0; i < m->n; i++) sockets += m->socket[i] && sockets == 1;
    fprintf(f, "# Imported by `baton topo import` from %s (nvidia-smi topo -m): %d GPUs, %d NICs, %d socket(s).\n"
               "# Bandwidths are parameters (--set): per NVLink and direction, PCIe x16 per direction\n"
               "# (Gen3 15.75 GB/s; Gen4 31.5, Gen5 63) and between the sockets.\n",
            path, m->ngpu, m->n - m->ngpu, sockets);
    fprintf(f, "name: %s\nparams:\n  nvlink_gbps: 25\n  pcie_bw: 15.75GB/s\n  sys_bw: 19.2GB/s\nports: 0\ngroup_size: %d\n"
               "nodes:\n", name, m->ngpu);
    char lab[16];
    for (int i = 0; i < m->n; i++) {
        lower(m->label[i], lab, sizeof lab);
        if (i < m->ngpu) fprintf(f, "  - {name: %s, rank: %d}\n", lab, i);
        else fprintf(f, "  - {name: %s, kind: nic}\n", lab);
    }
    for (int i = 0; i < m->n; i++) if (m->sw[i] == i) fprintf(f, "  - {name: pcie%d, kind: switch}\n", i);
    fprintf(f, "  - {name: cpu0, kind: cpu}\n%s", sockets > 1 ? "  - {name: cpu1, kind: cpu}\n" : "");
    fprintf(f, "links:\n");
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++)
            if (m->rel[i][j] == REL_NV) {
                char a[16], b[16];
                lower(m->label[i], a, sizeof a);
                lower(m->label[j], b, sizeof b);
                fprintf(f, "  - {a: %s, b: %s, bw: \"${nvlink_gbps*%d}GB/s\", latency: 0.5us}   # NV%d\n", a, b, m->links[i][j],
                        m->links[i][j]);
            }
    for (int i = 0; i < m->n; i++) {
        lower(m->label[i], lab, sizeof lab);
        if (m->sw[i] >= 0) fprintf(f, "  - {a: %s, b: pcie%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", lab, m->sw[i]);
        else fprintf(f, "  - {a: %s, b: cpu%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", lab, m->socket[i]);
        if (m->sw[i] == i) fprintf(f, "  - {a: pcie%d, b: cpu%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", i, m->socket[i]);
    }
    if (sockets > 1) fprintf(f, "  - {a: cpu0, b: cpu1, bw: \"${sys_bw}\", latency: 1us}\n");
}

int import_nvsmi(const char *path, const char *name, char **yaml, baton_err_t *e) {
    matrix_t *m = calloc(1, sizeof *m);
    if (m == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    int rc = read_matrix(path, m, e);
    size_t len = 0;
    FILE *f = rc == 0 ? open_memstream(yaml, &len) : NULL;
    if (rc == 0 && f == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    if (f) {
        emit(m, path, name, f);
        fclose(f);
    }
    free(m);
    return rc;
}
