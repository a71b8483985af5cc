/* import.c - `nvidia-smi topo -m` to a machine file (see import.h). */
#include "import.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/gpu.h"
#include "../models/arch.h"
#include "topo_write.h"

#define IMPORT_MAX 64              /* devices in a matrix (GPUs and NICs) */

typedef enum { REL_X, REL_NV, REL_PIX, REL_PXB, REL_PHB, REL_NODE, REL_SYS } rel_t;

typedef struct {
    int n, ngpu;                    /* devices; GPUs are the first ngpu columns in order */
    char label[IMPORT_MAX][16];     /* GPU0, NIC0, ... */
    rel_t rel[IMPORT_MAX][IMPORT_MAX];
    int links[IMPORT_MAX][IMPORT_MAX];   /* NV#: # */
    int socket[IMPORT_MAX], sw[IMPORT_MAX];
    int known;                      /* the GPU the file names (known_gpus), -1: none */
    char product[64];               /* as the file writes it */
    char unknown[64];               /* the first product named that baton does not know */
    char first[64];                 /* the first product named */
    char other[64];                 /* a product named after the first, and not it (mixed GPUs) */
    int listed;                     /* products the --gpus file names (0: none given) */
    int named;                      /* device lines seen (a product, known or not) */
} matrix_t;

/* GPUs by a word of their product names, as nccl-tests ("device 0 [0x4f]
 * Tesla V100-SXM2-16GB") and nvidia-smi -L ("GPU 0: NVIDIA H100 80GB HBM3")
 * print them: baton's GPU (models/gpu.c) and the generation of NCCL's tables
 * (sm75-sm89 use Volta's or Ampere's, as the shipped machines say); also
 * their PCIe generation (datasheets; x16 links) and whether they are GeForce
 * cards, which the driver gives no peer-to-peer access (pcie-box.yaml). */
static const struct {
    const char *word, *gpu;
    arch_t arch;
    int pcie_gen, geforce;
} known_gpus[] = {
    {"V100", "v100-sxm2", ARCH_VOLTA, 3, 0},    {"A100", "a100-sxm", ARCH_AMPERE, 4, 0},
    {"H100", "h100-sxm", ARCH_HOPPER, 5, 0},    {"H200", "h200-sxm", ARCH_HOPPER, 5, 0},
    {"B200", "b200", ARCH_BLACKWELL, 5, 0},     {"L40S", "l40s", ARCH_AMPERE, 4, 0},
    {"RTX 4090", "rtx4090", ARCH_AMPERE, 4, 1}, {"RTX 5090", "rtx5090", ARCH_BLACKWELL, 5, 1}};

/* The product name a device line gives, or NULL: nccl-tests' "... device 0
 * [0x4f] NAME", nvidia-smi -L's "GPU 0: NAME (UUID: ...)", nvidia-smi -q's
 * "Product Name : NAME" (whose "GPU 00000000:07:00.0" lines name a bus, not
 * a product: a name starts with a letter). */
static const char *product_of(const char *line) {
    const char *d = strstr(line, " device "), *g = strstr(line, "GPU "), *q = strstr(line, "Product Name");
    int at = 0;
    if (d && sscanf(d, " device %*d [%*[^]]] %n", &at) == 0 && at > 0) return d + at;
    at = 0;
    if (g && sscanf(g, "GPU %*d: %n", &at) == 0 && at > 0 && isalpha((unsigned char)g[at])) return g + at;
    at = 0;
    if (q && sscanf(q, "Product Name : %n", &at) == 0 && at > 0 && isalpha((unsigned char)q[at])) return q + at;
    return NULL;
}

/* A device line naming a product baton knows: the first such sets m->known
 * (and one it does not know is kept, to say so). */
static void note_product(matrix_t *m, const char *line) {
    const char *name = product_of(line);
    if (name == NULL) return;
    size_t n = strcspn(name, "\r\n(");
    while (n > 0 && isspace((unsigned char)name[n - 1])) n--;
    if (m->named++ == 0) snprintf(m->first, sizeof m->first, "%.*s", (int)n, name);
    else if (!m->other[0] && (strlen(m->first) != n || strncmp(m->first, name, n)))   /* the rest: the same GPU */
        snprintf(m->other, sizeof m->other, "%.*s", (int)n, name);
    if (m->known >= 0) return;
    for (int i = 0; i < (int)(sizeof known_gpus / sizeof known_gpus[0]); i++) {
        if (strstr(name, known_gpus[i].word) == NULL) continue;
        snprintf(m->product, sizeof m->product, "%.*s", (int)n, name);
        m->known = i;
        return;
    }
    if (!m->unknown[0]) snprintf(m->unknown, sizeof m->unknown, "%.*s", (int)n, name);
}

/* A file of nvidia-smi -L or -q output beside the matrix: its GPUs' names. */
static int read_names(const char *path, matrix_t *m, baton_err_t *e) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open", path);
    char line[4096];
    int before = m->named;
    while (fgets(line, sizeof line, f)) note_product(m, line);
    fclose(f);
    m->listed += m->named - before;
    if (m->named == before && m->known < 0)
        return err_set(e, BATON_EPARSE, "%s: names no GPU (want nvidia-smi -L's \"GPU 0: NAME (UUID: ...)\" or nvidia-smi "
                       "-q's \"Product Name : NAME\" lines)", path);
    return 0;
}

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

/* Do labels a and b name one node? The machine's names are the labels in
 * lower case. */
static int same_label(const char *a, const char *b) {
    while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b)) a++, b++;
    return *a == '\0' && *b == '\0';
}

/* A header that names a device twice would give two nodes one name. */
static int unique_labels(const matrix_t *m, const char *path, int lineno, baton_err_t *e) {
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < i; j++)
            if (same_label(m->label[i], m->label[j]))
                return err_set(e, BATON_EPARSE, "%s:%d: the header names %s twice (columns %d and %d)", path, lineno,
                               m->label[i], j + 1, i + 1);
    return 0;
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
    int flip = m->n > 0 && color[find(sock, 0)] > 0;   /* cpu0 is GPU0's socket: nvidia-smi numbers NUMA nodes so */
    for (int i = 0; i < m->n; i++) {
        m->socket[i] = (color[find(sock, i)] > 0) != flip;
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
        note_product(m, line);
        if (row >= m->n) continue;                /* after the matrix: device names only */
        if (row < 0) {
            if (read_header(line, m)) row = 0, rc = unique_labels(m, path, lineno, e);
            continue;
        }
        rc = read_row(line, m, row, path, lineno, e);
        row++;
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

/* NVSwitch boxes (HGX A100 and H100, DGX-2) show NV# between every GPU
 * pair, # the GPU's links into the switches, not links to that peer. A GPU
 * has at most NV_MAX_LINKS NVLinks (Hopper's and Blackwell's 18), so more
 * than that summed over its peers can only go through switches: then each
 * such GPU's links (its largest NV#) go to one NVSwitch. */
#define NV_MAX_LINKS 18
static int nv_switched(const matrix_t *m) {
    for (int i = 0; i < m->ngpu; i++) {
        int sum = 0;
        for (int j = 0; j < m->ngpu; j++) sum += m->rel[i][j] == REL_NV ? m->links[i][j] : 0;
        if (sum > NV_MAX_LINKS) return 1;
    }
    return 0;
}

static int nv_links(const matrix_t *m, int i) {
    int most = 0;
    for (int j = 0; j < m->ngpu; j++)
        if (m->rel[i][j] == REL_NV && m->links[i][j] > most) most = m->links[i][j];
    return most;
}

/* Hopper's and Blackwell's NVSwitches add (NVLink SHARP: NCCL's NVLS). */
static int nv_reduces(const matrix_t *m) {
    return m->known >= 0 && known_gpus[m->known].arch >= ARCH_HOPPER;
}

/* What adding in the switch costs: hgx-h100.yaml's values, measured there. */
static void emit_nvls(FILE *f) {
    fprintf(f, "# Its NVSwitches add (NVLink SHARP, NCCL's NVLS) at hgx-h100.yaml's measured efficiency and cost.\n"
               "nvls_efficiency: 0.53375\nnvls_latency: 16us\n");
}

static void emit_nvlinks(const matrix_t *m, int switched, FILE *f) {
    char a[16], b[16];
    for (int i = 0; i < m->n && !switched; i++)
        for (int j = i + 1; j < m->n; j++)
            if (m->rel[i][j] == REL_NV) {
                lower(m->label[i], a, sizeof a);
                lower(m->label[j], b, sizeof b);
                fprintf(f, "  - {a: %s, b: %s, bw: \"${nvlink_gbps*%d}GB/s\", latency: 0.5us}   # NV%d\n", a, b, m->links[i][j],
                        m->links[i][j]);
            }
    for (int i = 0; i < m->ngpu && switched; i++) {
        if (nv_links(m, i) == 0) continue;
        lower(m->label[i], a, sizeof a);
        fprintf(f, "  - {a: %s, b: nvswitch, bw: \"${nvlink_gbps*%d}GB/s\", latency: 0.3us}   # NV%d to every peer\n", a,
                nv_links(m, i), nv_links(m, i));
    }
}

/* What the file does not say and the machine assumes: IMPORT_ASSUMED
 * lines in its header (the command prints them as warnings). NVLink at its
 * line rate and, with no GPU named, a free reduction made the DGX-1 log's
 * import 15.7 % off where the named import (V100: reduce_bw) was 15.0 %. */
static int nvlink_gbps_of(int arch);

static void emit_assumptions(const matrix_t *m, int switched, int sockets, FILE *f) {
    int nv = 0;
    if (m->listed > 0 && m->listed != m->ngpu)
        fprintf(f, IMPORT_ASSUMED "the matrix's GPUs are the list's, though it names %d GPU%s for the matrix's %d\n"
                   "#   (is it this machine's list?)\n", m->listed, m->listed == 1 ? "" : "s", m->ngpu);
    const char *used = m->known >= 0 ? m->product : m->first;
    if (m->other[0])             /* the name other than the one used: the first, where a later one was known */
        fprintf(f, IMPORT_ASSUMED "every GPU is %s, \"%s\"; the names also say \"%s\", which one\n"
                   "#   machine file cannot mix (name them apart in a file of your own)\n",
                m->known >= 0 ? "the first baton knows" : "the first named", used, strcmp(m->other, used) ? m->other : m->first);
    for (int i = 0; i < m->ngpu; i++) nv |= nv_links(m, i) > 0;
    if (nv)
        fprintf(f, IMPORT_ASSUMED "NVLink at its line rate, %d GB/s a link each way (nvlink_gbps%s); real links carry\n"
                   "#   less: calibrate on an nccl-tests log, or set link_efficiency\n",
                nvlink_gbps_of(m->known >= 0 ? (int)known_gpus[m->known].arch : -1),
                m->known >= 0 ? ", the GPU's NVLink generation" : "");
    if (sockets > 1) fprintf(f, IMPORT_ASSUMED "the sockets joined at 19.2 GB/s each way (sys_bw, one QPI link's)\n");
    if (m->known >= 0) return;
    if (m->unknown[0]) fprintf(f, "# The file names its GPUs \"%s\", which baton does not know.\n", m->unknown);
    fprintf(f, IMPORT_ASSUMED "a reduction costs nothing (no GPU named, so no reduce_bw); name the GPUs\n"
               "#   (nvidia-smi -L or -q output: --gpus FILE) or set reduce_bw\n");
    fprintf(f, IMPORT_ASSUMED "PCIe Gen3, 15.75 GB/s each way (pcie_bw), the oldest a GPU of NVLink has\n");
    fprintf(f, IMPORT_ASSUMED "NCCL's Ampere tables for its plan (no arch:)\n");
    if (switched) fprintf(f, IMPORT_ASSUMED "its NVSwitches do not add (no NVLS, which Hopper's and later do)\n");
}

/* An NVLink's rate each way, GB/s, by generation: 25 up to NVLink 4
 * (Hopper: 18 links, 900 GB/s both ways), 50 from NVLink 5 (Blackwell: 18
 * links, 1.8 TB/s). Unknown GPUs: 25. */
static int nvlink_gbps_of(int arch) { return arch >= ARCH_BLACKWELL ? 50 : 25; }

/* Write the machine. */
static void emit(const matrix_t *m, const char *path, const char *name, FILE *f) {
    int sockets = 1;
    for (int i = 0; i < m->n; i++) sockets += m->socket[i] && sockets == 1;
    fprintf(f, "# Imported by `baton topo import` from %s (nvidia-smi topo -m): %d GPUs, %d NICs, %d socket(s).\n"
               "# Bandwidths are parameters (--set): per NVLink and direction, PCIe x16 per direction\n"
               "# (Gen3 15.75 GB/s; Gen4 31.5, Gen5 63) and between the sockets.\n",
            path, m->ngpu, m->n - m->ngpu, sockets);
    emit_assumptions(m, nv_switched(m), sockets, f);
    int gen = m->known >= 0 ? known_gpus[m->known].pcie_gen : 3;     /* unnamed GPUs: Gen3, the least */
    fprintf(f, "name: "), topo_write_quoted(f, name);   /* --name may hold ": " or " #" */
    fprintf(f, "\nparams:\n  nvlink_gbps: %d\n  pcie_bw: %gGB/s   # Gen%d%s\n  sys_bw: 19.2GB/s\nports: 0\ngroup_size: %d\n"
               "protocols: {}   # NCCL's (an NVIDIA machine; a file without protocols: is plain alpha-beta)\n",
            nvlink_gbps_of(m->known >= 0 ? (int)known_gpus[m->known].arch : -1), 15.75 * (1 << (gen - 3)), gen,
            m->known >= 0 ? ", the GPU's" : "", m->ngpu);
    if (m->known >= 0 && known_gpus[m->known].geforce)
        fprintf(f, "# GeForce cards have no peer-to-peer access: NCCL stages through host memory, at\n"
                   "# pcie-box.yaml's rate (measured on RTX 4090 hosts); `--set stage_bw=...` for yours.\n"
                   "p2p: false\nstage_bw: 3.0GB/s\nstage_latency: 5us\n");
    const gpu_spec_t *g = m->known >= 0 ? gpu_find(known_gpus[m->known].gpu) : NULL;
    if (g)
        fprintf(f, "# The file names its GPUs \"%s\": baton's %s, NCCL's %s tables; a reduction\n"
                   "# reads two buffers and writes one, so about a third of HBM's %.0f GB/s (an estimate).\n"
                   "gpu: %s\narch: %s\nreduce_bw: %.0fGB/s\n",
                m->product, g->name, arch_name(known_gpus[m->known].arch), g->hbm_bw / 1e9, g->name,
                arch_name(known_gpus[m->known].arch),
                g->hbm_bw / 3e9);
    int switched = nv_switched(m);
    if (switched && nv_reduces(m)) emit_nvls(f);
    fprintf(f, "nodes:\n");
    char lab[16];
    for (int i = 0; i < m->n; i++) {
        lower(m->label[i], lab, sizeof lab);
        if (i < m->ngpu) fprintf(f, "  - {name: %s, rank: %d}\n", lab, i);
        else fprintf(f, "  - {name: %s, kind: nic}\n", lab);
    }
    for (int i = 0; i < m->n; i++) if (m->sw[i] == i) fprintf(f, "  - {name: pcie%d, kind: switch}\n", i);
    fprintf(f, "  - {name: cpu0, kind: cpu}\n%s", sockets > 1 ? "  - {name: cpu1, kind: cpu}\n" : "");
    if (switched)
        fprintf(f, "  - {name: nvswitch, kind: switch%s}   # NV# to every peer: the GPU's links, into NVSwitches\n",
                nv_reduces(m) ? ", reduce: true" : "");
    fprintf(f, "links:\n");
    emit_nvlinks(m, switched, f);
    for (int i = 0; i < m->n; i++) {
        lower(m->label[i], lab, sizeof lab);
        if (m->sw[i] >= 0) fprintf(f, "  - {a: %s, b: pcie%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", lab, m->sw[i]);
        else fprintf(f, "  - {a: %s, b: cpu%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", lab, m->socket[i]);
        if (m->sw[i] == i) fprintf(f, "  - {a: pcie%d, b: cpu%d, bw: \"${pcie_bw}\", latency: 0.5us}\n", i, m->socket[i]);
    }
    if (sockets > 1) fprintf(f, "  - {a: cpu0, b: cpu1, bw: \"${sys_bw}\", latency: 1us}\n");
}

int import_nvsmi(const char *path, const char *name, char **yaml, baton_err_t *e) {
    return import_nvsmi_gpus(path, NULL, name, yaml, e);
}

int import_nvsmi_gpus(const char *path, const char *gpus, const char *name, char **yaml, baton_err_t *e) {
    matrix_t *m = calloc(1, sizeof *m);
    if (m == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    m->known = -1;
    int rc = gpus ? read_names(gpus, m, e) : 0;          /* first: the names given for the purpose win */
    if (rc == 0) rc = read_matrix(path, m, e);
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

/* ---- NCCL's topology XML -------------------------------------------------- */

#define XML_MAX_NODES 1024
#define XML_MAX_DEPTH 32

typedef struct {
    char name[24], busid[32];
    char kind;                   /* 'g' gpu, 's' switch, 'n' nic, 'c' cpu */
    int rank;                    /* <gpu rank>, -1 if none */
} xnode_t;

typedef struct { int a, b; double bw; int nvl; } xlink_t;

typedef struct {
    xnode_t node[XML_MAX_NODES];
    xlink_t link[2 * XML_MAX_NODES];
    int nn, nl, ngpu, nswitch, nnic, ncpu;
    struct { int node, gpu_of; char tag[16]; } stack[XML_MAX_DEPTH];
    int depth;
    struct { int gpu; char target[32]; int count; int to_switch; } nvl[4 * XML_MAX_NODES];
    int nnvl;
    int sm_lo, sm_hi;            /* the GPUs' compute capabilities (<gpu sm="80">), 0: none given */
    const char *path;
    int line;
} xml_t;

/* One attribute's value of a tag's text ("busid" in `busid="0000:01:00.0"`). */
static int xml_attr(const char *tag, const char *key, char *out, size_t n) {
    size_t kl = strlen(key);
    for (const char *p = tag; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p > tag && !isspace((unsigned char)p[-1])) || p[kl] != '=' || p[kl + 1] != '"') continue;
        const char *v = p + kl + 2, *end = strchr(v, '"');
        if (!end) return 0;
        snprintf(out, n, "%.*s", (int)(end - v), v);
        return 1;
    }
    return 0;
}

/* Bus ids compare as NCCL compares them, as numbers (busIdToInt64): one
 * written "0000:C1:00.0" and one "0000:c1:00.0" are the same device. */
static void busid_lower(char *s) {
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

static int xml_add(xml_t *x, char kind, const char *busid, baton_err_t *e) {
    if (x->nn == XML_MAX_NODES)
        return err_set(e, BATON_EPARSE, "%s:%d: more than %d devices", x->path, x->line, XML_MAX_NODES);
    xnode_t *n = &x->node[x->nn];
    int *count = kind == 'g' ? &x->ngpu : kind == 's' ? &x->nswitch : kind == 'n' ? &x->nnic : &x->ncpu;
    snprintf(n->name, sizeof n->name, "%s%d", kind == 'g' ? "gpu" : kind == 's' ? "pcie" : kind == 'n' ? "nic" : "cpu", (*count)++);
    snprintf(n->busid, sizeof n->busid, "%s", busid ? busid : "");
    for (char *c = n->busid; *c; c++)                 /* it goes into a comment: printable ASCII only */
        if (*c < 0x20 || *c > 0x7e) *c = '?';
    busid_lower(n->busid);
    n->kind = kind;
    n->rank = -1;
    return x->nn++;
}

static int xml_link(xml_t *x, int a, int b, double bw, int nvl) {
    if (a < 0 || b < 0 || x->nl == 2 * XML_MAX_NODES) return 0;
    x->link[x->nl++] = (xlink_t){a, b, bw, nvl};
    return 0;
}

/* PCIe bytes/s from link_speed ("16 GT/s") and width; 0 if not stated. */
static double pcie_rate(const char *tag) {
    char sp[32], wd[16];
    if (!xml_attr(tag, "link_speed", sp, sizeof sp) || !xml_attr(tag, "link_width", wd, sizeof wd)) return 0;
    double gts = atof(sp), w = atof(wd), lane = gts <= 2.5 ? 0.25 : gts <= 5 ? 0.5 : gts * 128.0 / 130.0 / 8.0;
    if (!(gts <= 256 && w <= 32)) return -1;           /* PCIe 7 is 128 GT/s, x32 the widest link */
    return gts > 0 && w > 0 ? lane * w * 1e9 : 0;
}

/* The nearest enclosing element's node (a CPU, bridge or device), -1 if none. */
static int xml_parent(const xml_t *x) {
    for (int d = x->depth - 1; d >= 0; d--) if (x->stack[d].node >= 0) return x->stack[d].node;
    return -1;
}

/* One opening tag (name and its text), inside the elements on the stack. */
static int xml_open(xml_t *x, const char *name, const char *tag, baton_err_t *e) {
    char busid[32] = "", cls[16] = "", v[32];
    int node = -1, gpu_of = x->depth ? x->stack[x->depth - 1].gpu_of : -1;
    if (!strcmp(name, "cpu")) node = xml_add(x, 'c', NULL, e);
    else if (!strcmp(name, "pci")) {
        xml_attr(tag, "busid", busid, sizeof busid);
        xml_attr(tag, "class", cls, sizeof cls);
        char kind = !strncmp(cls, "0x0302", 6) || !strncmp(cls, "0x0300", 6) ? 'g'
                  : !strncmp(cls, "0x0207", 6) || !strncmp(cls, "0x0200", 6) ? 'n' : 's';
        int parent = xml_parent(x);
        if (parent < 0) return err_set(e, BATON_EPARSE, "%s:%d: <pci busid=\"%s\"> is not inside a <cpu>", x->path, x->line, busid);
        if (x->node[parent].kind == 'g' || x->node[parent].kind == 'n')
            return err_set(e, BATON_EPARSE, "%s:%d: <pci busid=\"%s\"> inside a GPU or NIC: devices hang off bridges and CPUs",
                           x->path, x->line, busid);
        double rate = pcie_rate(tag);
        if (rate < 0) return err_set(e, BATON_EPARSE, "%s:%d: <pci busid=\"%s\">: link_speed or link_width out of range",
                                     x->path, x->line, busid);
        if ((node = xml_add(x, kind, busid, e)) >= 0) xml_link(x, node, parent, rate, 0);
        if (kind == 'g') gpu_of = node;
    } else if (!strcmp(name, "gpu") && gpu_of >= 0) {
        if (xml_attr(tag, "rank", v, sizeof v)) x->node[gpu_of].rank = atoi(v);
        int sm = xml_attr(tag, "sm", v, sizeof v) ? atoi(v) : 0;
        if (sm > 0 && (x->sm_lo == 0 || sm < x->sm_lo)) x->sm_lo = sm;
        if (sm > x->sm_hi) x->sm_hi = sm;
    } else if (!strcmp(name, "nvlink") && gpu_of >= 0 && x->nnvl < 4 * XML_MAX_NODES) {
        char cnt[16] = "1", tc[16] = "";
        xml_attr(tag, "count", cnt, sizeof cnt);
        xml_attr(tag, "tclass", tc, sizeof tc);
        x->nvl[x->nnvl].gpu = gpu_of;
        if (atoi(cnt) > 64) return err_set(e, BATON_EPARSE, "%s:%d: <nvlink count=\"%s\">: at most 64 links", x->path, x->line, cnt);
        x->nvl[x->nnvl].count = atoi(cnt) > 0 ? atoi(cnt) : 1;
        x->nvl[x->nnvl].to_switch = !strncmp(tc, "0x0680", 6);
        xml_attr(tag, "target", x->nvl[x->nnvl].target, sizeof x->nvl[0].target);
        busid_lower(x->nvl[x->nnvl].target);
        x->nnvl++;
    } else if (!strcmp(name, "net")) {
        int parent = xml_parent(x);
        if (parent < 0) return err_set(e, BATON_EPARSE, "%s:%d: <net> is not inside a <cpu>", x->path, x->line);
        if (x->node[parent].kind != 'n') {                  /* a NIC hung off the CPU itself */
            if ((node = xml_add(x, 'n', NULL, e)) >= 0) xml_link(x, node, parent, 0, 0);
        }
    }
    if (node < -1) return node;
    if (x->depth == XML_MAX_DEPTH) return err_set(e, BATON_EPARSE, "%s:%d: elements nested too deep", x->path, x->line);
    x->stack[x->depth].node = node;
    x->stack[x->depth].gpu_of = gpu_of;
    snprintf(x->stack[x->depth].tag, sizeof x->stack[0].tag, "%s", name);
    x->depth++;
    return 0;
}

static int xml_close(xml_t *x, const char *name, baton_err_t *e) {
    if (x->depth == 0 || strcmp(x->stack[x->depth - 1].tag, name))
        return err_set(e, BATON_EPARSE, "%s:%d: </%s> closes %s%s%s", x->path, x->line, name,
                       x->depth ? "<" : "nothing", x->depth ? x->stack[x->depth - 1].tag : "", x->depth ? ">" : "");
    x->depth--;
    return 0;
}

/* Walk the text tag by tag: comments and <?...?> skipped, text ignored. */
static int xml_parse(xml_t *x, const char *s, baton_err_t *e) {
    x->line = 1;
    for (const char *p = s; *p;) {
        if (*p != '<') { x->line += *p++ == '\n'; continue; }
        const char *end = !strncmp(p, "<!--", 4) ? strstr(p, "-->") : strchr(p, '>');
        if (end == NULL) return err_set(e, BATON_EPARSE, "%s:%d: a tag that never ends", x->path, x->line);
        if (p[1] != '!' && p[1] != '?') {
            char tag[1024], name[16];
            snprintf(tag, sizeof tag, "%.*s", (int)(end - p - 1), p + 1);
            int closing = tag[0] == '/', selfclose = end > p && end[-1] == '/';
            if (sscanf(tag + closing, "%15[A-Za-z_]", name) != 1)
                return err_set(e, BATON_EPARSE, "%s:%d: a tag without a name", x->path, x->line);
            int rc = closing ? xml_close(x, name, e) : xml_open(x, name, tag, e);
            if (rc == 0 && selfclose && !closing) rc = xml_close(x, name, e);
            if (rc < 0) return rc;
        }
        for (const char *q = p; q < end; q++) x->line += *q == '\n';
        p = end + (!strncmp(p, "<!--", 4) ? 3 : 1);
    }
    if (x->depth) return err_set(e, BATON_EPARSE, "%s:%d: <%s> is never closed", x->path, x->line, x->stack[x->depth - 1].tag);
    if (x->ngpu == 0) return err_set(e, BATON_EPARSE, "%s: no GPU (a <pci> of class 0x0302 or 0x0300)", x->path);
    return 0;
}

static int by_busid(const void *a, const void *b) {
    const xnode_t *const *x = a, *const *y = b;
    return strcmp((*x)->busid, (*y)->busid);
}

/* Ranks: the file's, else PCI bus order (CUDA's PCI_BUS_ID order); each
 * GPU is then named by its rank. */
static int xml_ranks(xml_t *x, baton_err_t *e) {
    xnode_t *g[XML_MAX_NODES];
    int n = 0, given = 0, seen[XML_MAX_NODES] = {0};
    for (int i = 0; i < x->nn; i++) if (x->node[i].kind == 'g') g[n++] = &x->node[i], given += x->node[i].rank >= 0;
    if (given != n) {
        qsort(g, (size_t)n, sizeof *g, by_busid);
        for (int i = 0; i < n; i++) g[i]->rank = i;
    }
    for (int i = 0; i < n; i++) {
        if (g[i]->rank >= n || seen[g[i]->rank]++)
            return err_set(e, BATON_EPARSE, "%s: GPU %s has rank %d: the ranks must be 0..%d, each once", x->path,
                           g[i]->busid, g[i]->rank, n - 1);
        snprintf(g[i]->name, sizeof g[i]->name, "gpu%d", g[i]->rank);
    }
    return 0;
}

/* NVLinks: to a peer GPU by its bus id (each pair once), else to one
 * NVSwitch. NCCL's dump has an <nvlink> per target bus id, so a GPU of an
 * HGX H100 lists each of its four NVSwitches (4 + 5 + 4 + 5 links): baton
 * models them as one switch, so a GPU's links to switches are summed into
 * one link (kept apart, a route took one of them: 125 of its 450 GB/s). */
static void xml_nvlinks(xml_t *x, baton_err_t *e) {
    int nvs = -1, to_switch[XML_MAX_NODES] = {0};
    for (int k = 0; k < x->nnvl; k++) {
        int peer = -1;
        for (int i = 0; i < x->nn && !x->nvl[k].to_switch; i++)
            if (x->node[i].kind == 'g' && !strcmp(x->node[i].busid, x->nvl[k].target)) peer = i;
        if (peer == x->nvl[k].gpu) continue;              /* a link to itself: nothing */
        if (peer < 0) {
            to_switch[x->nvl[k].gpu] += x->nvl[k].count;
            continue;
        }
        if (peer < x->nvl[k].gpu) {
            int listed = 0;                               /* the peer named this pair already */
            for (int j = 0; j < x->nnvl; j++) listed |= x->nvl[j].gpu == peer && !strcmp(x->nvl[j].target, x->node[x->nvl[k].gpu].busid);
            if (listed) continue;
        }
        int count = 0, first = 1;                         /* the pair named twice by this GPU: one link, summed */
        for (int j = 0; j < x->nnvl; j++)
            if (x->nvl[j].gpu == x->nvl[k].gpu && !x->nvl[j].to_switch && !strcmp(x->nvl[j].target, x->nvl[k].target)) {
                if (j < k) first = 0;
                count += x->nvl[j].count;
            }
        if (first) xml_link(x, x->nvl[k].gpu, peer, -count, 1);
    }
    for (int g = 0; g < x->nn; g++) {
        if (to_switch[g] == 0) continue;
        if (nvs < 0 && (nvs = xml_add(x, 's', NULL, e)) >= 0) snprintf(x->node[nvs].name, sizeof x->node[0].name, "nvswitch");
        if (nvs >= 0) xml_link(x, g, nvs, -to_switch[g], 1);
    }
}

static int xml_has_nvswitch(const xml_t *x) {
    for (int i = 0; i < x->nn; i++)
        if (x->node[i].kind == 's' && !strcmp(x->node[i].name, "nvswitch")) return 1;
    return 0;
}

static void xml_emit(const xml_t *x, const char *name, FILE *f) {
    fprintf(f, "# Imported by `baton topo import nccl-xml` from %s (NCCL's topology XML): %d GPUs, %d NICs,\n"
               "# %d PCIe switches, %d CPUs. PCIe links at the file's link_speed x link_width\n"
               "# (pcie_bw where it gives none), NVLinks at nvlink_gbps each, CPUs joined by sys_bw.\n",
            x->path, x->ngpu, x->nnic, x->nswitch, x->ncpu);
    if (x->nnvl == 0 && x->ngpu > 1)
        fprintf(f, IMPORT_NO_NVLINK ": NCCL adds NVLinks from the driver to a NCCL_TOPO_FILE, so files\n"
                   "# written for one leave them out, and this machine is PCIe only. If its GPUs have NVLink,\n"
                   "# import NCCL's own dump (NCCL_TOPO_DUMP_FILE) or `nvidia-smi topo -m` instead.\n");
    int sm = x->sm_lo, one_arch = sm > 0 && sm == x->sm_hi;
    fprintf(f, "name: "), topo_write_quoted(f, name);
    fprintf(f, "\nparams:\n  nvlink_gbps: %d%s\n  pcie_bw: 15.75GB/s\n  sys_bw: 19.2GB/s\nports: 0\ngroup_size: %d\n"
               "protocols: {}   # NCCL's (an NVIDIA machine; a file without protocols: is plain alpha-beta)\n",
            nvlink_gbps_of(one_arch ? (int)arch_of_sm(sm) : -1), one_arch ? "   # the GPUs' NVLink generation" : "", x->ngpu);
    if (sm > 0 && sm == x->sm_hi)             /* NCCL's tables by generation: below sm80 Volta's, and so on */
        fprintf(f, "arch: %s   # the file's GPUs are sm%d (NCCL's tables)\n",
                arch_name(arch_of_sm(sm)), sm);
    int nvls = x->sm_lo >= 90 && xml_has_nvswitch(x);   /* Hopper's NVSwitches add (NVLink SHARP: NCCL's NVLS) */
    if (nvls) emit_nvls(f);
    fprintf(f, "nodes:\n");
    for (int i = 0; i < x->nn; i++) {
        const xnode_t *n = &x->node[i];
        int adds = nvls && !strcmp(n->name, "nvswitch");
        if (n->kind == 'g') fprintf(f, "  - {name: %s, rank: %d}   # %s\n", n->name, n->rank, n->busid);
        else fprintf(f, "  - {name: %s, kind: %s%s}\n", n->name, n->kind == 's' ? "switch" : n->kind == 'n' ? "nic" : "cpu",
                     adds ? ", reduce: true" : "");
    }
    int ncpu_links = x->ncpu * (x->ncpu - 1) / 2;
    fprintf(f, "links:%s\n", x->nl + ncpu_links ? "" : " []");
    for (int i = 0; i < x->nl; i++) {
        const xlink_t *l = &x->link[i];
        if (l->nvl) fprintf(f, "  - {a: %s, b: %s, bw: \"${nvlink_gbps*%d}GB/s\", latency: 0.5us}   # NV%d\n", x->node[l->a].name,
                            x->node[l->b].name, (int)-l->bw, (int)-l->bw);
        else if (l->bw > 0) fprintf(f, "  - {a: %s, b: %s, bw: %.6gGB/s, latency: 0.5us}\n", x->node[l->a].name, x->node[l->b].name,
                                    l->bw / 1e9);
        else fprintf(f, "  - {a: %s, b: %s, bw: \"${pcie_bw}\", latency: 0.5us}\n", x->node[l->a].name, x->node[l->b].name);
    }
    for (int i = 0; i < x->nn; i++)
        for (int j = i + 1; j < x->nn; j++)
            if (x->node[i].kind == 'c' && x->node[j].kind == 'c')
                fprintf(f, "  - {a: %s, b: %s, bw: \"${sys_bw}\", latency: 1us}\n", x->node[i].name, x->node[j].name);
}

int import_nccl_xml(const char *path, const char *name, char **yaml, baton_err_t *e) {
    FILE *in = fopen(path, "rb");
    if (in == NULL) return err_set(e, BATON_EIO, "%s: cannot open", path);
    char *text = malloc(4 << 20);
    size_t n = text ? fread(text, 1, (4 << 20) - 1, in) : 0;
    int big = !feof(in);
    fclose(in);
    xml_t *x = calloc(1, sizeof *x);
    int rc = !text || !x ? err_set(e, BATON_ENOMEM, "out of memory")
           : big ? err_set(e, BATON_EPARSE, "%s: larger than 4 MiB", path) : 0;
    if (rc == 0) {
        text[n] = 0;
        x->path = path;
        rc = xml_parse(x, text, e);
    }
    if (rc == 0) rc = xml_ranks(x, e);
    if (rc == 0) xml_nvlinks(x, e);
    size_t len = 0;
    FILE *out = rc == 0 ? open_memstream(yaml, &len) : NULL;
    if (rc == 0 && out == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    if (out) {
        xml_emit(x, name, out);
        fclose(out);
    }
    free(text);
    free(x);
    return rc;
}
