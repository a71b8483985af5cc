/* plot.c - write data and a gnuplot script into a private temporary
 * directory, run gnuplot there, then move the finished PNG into place (the
 * user's path never reaches a shell). */
#include "plot.h"
#include "../../util/wfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../topologies/units.h"

/* Twenty colours far enough apart to tell the curves of one collective from
 * each other (all-reduce has 19 algorithms on a cluster), so no two share
 * one; past twenty the dash pattern differs too, and point types tell them
 * apart in grey. */
static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                                      "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#000075", "#800000", "#808000",
                                      "#469990", "#f032e6", "#8db600", "#604e97", "#f99379", "#b8860b"};
#define NCOLOURS (int)(sizeof colours / sizeof colours[0])

/* Algorithm a's points over rows first..last into its own file; how many. */
static int data_file(const char *path, const select_table_t *tab, int first, int last, const algo_t *a) {
    FILE *f = fopen(path, "w");
    int n = 0;
    if (f == NULL) return -1;
    for (int i = first; i <= last; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int k = 0; k < r->ncells; k++)
            if (r->cells[k].algo == a && r->cells[k].ok && r->cells[k].time_s > 0) {
                fprintf(f, "%llu %.9g %.9g\n", (unsigned long long)r->bytes, r->cells[k].time_s * 1e6,
                        r->cells[k].busbw_GBps > 0 ? r->cells[k].busbw_GBps : 1e-12);
                n++;
            }
    }
    return fclose(f) == 0 ? n : -1;
}

/* Binary size ticks (8 B, 1 KiB, 1 MiB, ...) over the rows' range: every
 * power of 1024, or of 32 when the range is short. */
static void size_tics(FILE *gp, const select_table_t *tab, int first, int last) {
    uint64_t lo = tab->rows[first].bytes ? tab->rows[first].bytes : 1, hi = tab->rows[last].bytes;
    int step = hi / lo >= (1ull << 30) ? 10 : 5, n = 0;
    fprintf(gp, "set xtics (");
    for (int e = 0; e < 64; e += step) {
        uint64_t v = 1ull << e;
        if (v < lo / 2 || v > hi * 2) continue;
        char lab[32];
        units_fmt_size(v, lab, sizeof lab);
        fprintf(gp, "%s'%s' %llu", n++ ? ", " : "", lab, (unsigned long long)v);
    }
    fprintf(gp, ")\n");
}

/* A crossover: a dashed line where row b's winner takes over from row a's,
 * labelled by the pair it separates ("ring/LL -> ring/Simple": the
 * algorithm, the protocol or both change) and drawn in the new winner's
 * curve colour. */
static void crossover(FILE *gp, const select_row_t *a, const select_row_t *b, const select_row_t *r0,
                      const int *shown, int nshown) {
    const select_cell_t *was = &a->cells[a->winner], *now = &b->cells[b->winner];
    const char *colour = "gray40";
    for (int i = 0; i < nshown; i++)
        if (r0->cells[shown[i]].algo == now->algo) colour = colours[i % NCOLOURS];
    fprintf(gp, "set arrow from %llu, graph 0 to %llu, graph 1 nohead dt 2 lw 1.2 lc rgb '%s'\n"
                "set label '%s/%s -> %s/%s' at %llu, graph 0.97 rotate by 90 right font ',8' tc rgb '%s' boxed front\n",
            (unsigned long long)b->bytes, (unsigned long long)b->bytes, colour, was->algo->name, proto_name(was->proto),
            now->algo->name, proto_name(now->proto), (unsigned long long)b->bytes, colour);
}

/* One collective: a data file per algorithm that ran (those that did not
 * apply get no file and no legend entry), and two panels. */
static void panels(FILE *gp, const char *dir, const select_table_t *tab, int first, int last, int n) {
    const select_row_t *r0 = &tab->rows[first];
    char path[64][600];
    int shown[64], nshown = 0;
    for (int k = 0; k < r0->ncells && k < 64; k++) {
        snprintf(path[k], sizeof path[k], "%s/c%d-%s.dat", dir, n, r0->cells[k].algo->name);
        if (data_file(path[k], tab, first, last, r0->cells[k].algo) > 0) shown[nshown++] = k;
    }
    fprintf(gp, "unset arrow; unset label\n");
    size_tics(gp, tab, first, last);
    for (int i = first + 1; i <= last; i++)
        if (select_is_crossover(tab, i)) crossover(gp, &tab->rows[i - 1], &tab->rows[i], r0, shown, nshown);
    for (int panel = 0; panel < 2; panel++) {
        fprintf(gp, "set title '%s on %s (%d ranks): %s'\nset ylabel '%s'\nplot ", coll_name(r0->coll), tab->topo,
                tab->ranks, panel ? "bus bandwidth" : "time", panel ? "busbw (GB/s)" : "time (us)");
        for (int i = 0; i < nshown; i++) {
            int k = shown[i];
            fprintf(gp, "%s'%s' using 1:%d with linespoints lw 1.5 dt %d pt %d ps 0.6 lc rgb '%s' title '%s'",
                    i ? ", " : "", path[k], panel ? 3 : 2, 1 + i / NCOLOURS, 1 + i % 13, colours[i % NCOLOURS],
                    r0->cells[k].algo->name);
        }
        fprintf(gp, "\n");
    }
}

/* The script drawing tab into dir/out.png, or with svg dir/out.svg. */
static int write_script(const char *dir, const select_table_t *tab, int svg) {
    char path[600];
    int ncoll = 0;
    for (int i = 0; i < tab->nrows; i++) ncoll += i == 0 || tab->rows[i].coll != tab->rows[i - 1].coll;
    snprintf(path, sizeof path, "%s/plot.gp", dir);
    FILE *gp = fopen(path, "w");
    if (gp == NULL) return -1;
    fprintf(gp, "set terminal %s size 1400,%d noenhanced\nset output '%s/out.%s'\n", svg ? "svg" : "pngcairo", 480 * ncoll,
            dir, svg ? "svg" : "png");
    fprintf(gp, "set logscale xy\nset format y '%%g'\nset xlabel 'size (bytes)'\nset grid\n"
                "set key left top font ',8'\nset style textbox opaque noborder\nset multiplot layout %d,2\n", ncoll);
    for (int i = 0, n = 0; i < tab->nrows; n++) {
        int j = i;
        while (j + 1 < tab->nrows && tab->rows[j + 1].coll == tab->rows[i].coll) j++;
        panels(gp, dir, tab, i, j, n);
        i = j + 1;
    }
    fprintf(gp, "unset multiplot\n");
    return fclose(gp) == 0 ? 0 : -1;
}

int plot_write_files(const char *dir, const select_table_t *tab) { return write_script(dir, tab, 0); }

int plot_format_of(const char *path) {
    size_t n = strlen(path);
    if (n > 4 && !strcasecmp(path + n - 4, ".svg")) return 1;
    return n > 4 && !strcasecmp(path + n - 4, ".png") ? 0 : -1;
}

/* Copy src (gnuplot's output) to dst whole (util/wfile.h). */
static int install(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    int ok = in != NULL;
    while (ok) {
        if (len == cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (b == NULL) { ok = 0; break; }
            buf = b;
        }
        if ((n = fread(buf + len, 1, cap - len, in)) == 0) break;
        len += n;
    }
    if (in && ferror(in)) ok = 0;
    if (in) fclose(in);
    int rc = ok && wfile_write(dst, buf, len) == 0 ? 0 : -1;
    free(buf);
    return rc;
}

static void cleanup(const char *dir) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);     /* our own mkdtemp name: no quotes in it */
    if (system(cmd) != 0) { /* a leftover temporary directory is harmless */ }
}

int plot_select(const select_table_t *tab, const char *png, baton_err_t *e) {
    int svg = plot_format_of(png);
    if (svg < 0) return err_set(e, BATON_EINVAL, "--plot %s: name the picture FILE.png or FILE.svg (its format)", png);
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        return err_set(e, BATON_EUNSUP, "--plot needs gnuplot, which is not installed (Debian: apt-get install gnuplot-nox)");
    char dir[] = "/tmp/baton-plot-XXXXXX", cmd[700], out[600];
    if (mkdtemp(dir) == NULL) return err_set(e, BATON_EIO, "cannot make a temporary directory for the plot");
    int rc = 0;
    snprintf(cmd, sizeof cmd, "gnuplot '%s/plot.gp' 2>'%s/gnuplot.err'", dir, dir);
    snprintf(out, sizeof out, "%s/out.%s", dir, svg ? "svg" : "png");
    if (write_script(dir, tab, svg) < 0) rc = err_set(e, BATON_EIO, "cannot write the plot's files");
    else if (system(cmd) != 0) rc = err_set(e, BATON_EIO, "gnuplot failed (its messages are lost with the temporary files)");
    else if (install(out, png) < 0) rc = err_set(e, BATON_EIO, "%s: cannot write the plot", png);
    cleanup(dir);
    return rc;
}
