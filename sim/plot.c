/* plot.c - write data and a gnuplot script into a private temporary
 * directory, run gnuplot there, then move the finished PNG into place (the
 * user's path never reaches a shell). */
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../topologies/units.h"

static void data_block(FILE *f, const select_table_t *tab, int first, int last, const algo_t *a) {
    for (int i = first; i <= last; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int k = 0; k < r->ncells; k++)
            if (r->cells[k].algo == a && r->cells[k].ok && r->cells[k].time_s > 0)
                fprintf(f, "%llu %.9g %.9g\n", (unsigned long long)r->bytes, r->cells[k].time_s * 1e6,
                        r->cells[k].busbw_GBps > 0 ? r->cells[k].busbw_GBps : 1e-12);
    }
    fprintf(f, "\n\n");
}

/* One collective: its data file (a block per algorithm) and two panels. */
static void panels(FILE *gp, const char *dir, const select_table_t *tab, int first, int last, int n) {
    const select_row_t *r0 = &tab->rows[first];
    char path[600];
    snprintf(path, sizeof path, "%s/c%d.dat", dir, n);
    FILE *d = fopen(path, "w");
    if (d == NULL) return;
    for (int k = 0; k < r0->ncells; k++) data_block(d, tab, first, last, r0->cells[k].algo);
    fclose(d);
    fprintf(gp, "unset arrow; unset label\n");
    for (int i = first + 1; i <= last; i++)
        if (select_is_crossover(tab, i))
            fprintf(gp, "set arrow from %llu, graph 0 to %llu, graph 1 nohead dt 2 lc rgb 'gray40'\n"
                        "set label '%s' at %llu, graph 0.97 rotate by 90 right font ',8'\n",
                    (unsigned long long)tab->rows[i].bytes, (unsigned long long)tab->rows[i].bytes,
                    tab->rows[i].cells[tab->rows[i].winner].algo->name, (unsigned long long)tab->rows[i].bytes);
    for (int panel = 0; panel < 2; panel++) {
        fprintf(gp, "set title '%s on %s (%d ranks): %s'\nset ylabel '%s'\nplot ", coll_name(r0->coll), tab->topo,
                tab->ranks, panel ? "bus bandwidth" : "time", panel ? "busbw (GB/s)" : "time (us)");
        for (int k = 0; k < r0->ncells; k++)
            fprintf(gp, "%s'%s' index %d using 1:%d with linespoints pt 7 ps 0.5 title '%s'", k ? ", " : "", path, k,
                    panel ? 3 : 2, r0->cells[k].algo->name);
        fprintf(gp, "\n");
    }
}

static int write_script(const char *dir, const select_table_t *tab) {
    char path[600];
    int ncoll = 0;
    for (int i = 0; i < tab->nrows; i++) ncoll += i == 0 || tab->rows[i].coll != tab->rows[i - 1].coll;
    snprintf(path, sizeof path, "%s/plot.gp", dir);
    FILE *gp = fopen(path, "w");
    if (gp == NULL) return -1;
    fprintf(gp, "set terminal pngcairo size 1400,%d noenhanced\nset output '%s/out.png'\n", 480 * ncoll, dir);
    fprintf(gp, "set logscale xy\nset format x '%%.0s%%cB'\nset format y '%%g'\nset xlabel 'size (bytes)'\nset grid\n"
                "set key left top font ',8'\nset multiplot layout %d,2\n", ncoll);
    for (int i = 0, n = 0; i < tab->nrows; n++) {
        int j = i;
        while (j + 1 < tab->nrows && tab->rows[j + 1].coll == tab->rows[i].coll) j++;
        panels(gp, dir, tab, i, j, n);
        i = j + 1;
    }
    fprintf(gp, "unset multiplot\n");
    return fclose(gp) == 0 ? 0 : -1;
}

/* Copy src to dst through a temporary name in dst's directory, then rename. */
static int install(const char *src, const char *dst) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", dst, (long)getpid());
    FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    if (ok && rename(tmp, dst) == 0) return 0;
    remove(tmp);
    return -1;
}

static void cleanup(const char *dir) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);     /* our own mkdtemp name: no quotes in it */
    if (system(cmd) != 0) { /* a leftover temporary directory is harmless */ }
}

int plot_select(const select_table_t *tab, const char *png, baton_err_t *e) {
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        return err_set(e, BATON_EUNSUP, "--plot needs gnuplot, which is not installed (Debian: apt-get install gnuplot-nox)");
    char dir[] = "/tmp/baton-plot-XXXXXX", cmd[700], out[600];
    if (mkdtemp(dir) == NULL) return err_set(e, BATON_EIO, "cannot make a temporary directory for the plot");
    int rc = 0;
    snprintf(cmd, sizeof cmd, "gnuplot '%s/plot.gp' 2>'%s/gnuplot.err'", dir, dir);
    snprintf(out, sizeof out, "%s/out.png", dir);
    if (write_script(dir, tab) < 0) rc = err_set(e, BATON_EIO, "cannot write the plot's files");
    else if (system(cmd) != 0) rc = err_set(e, BATON_EIO, "gnuplot failed (its messages are lost with the temporary files)");
    else if (install(out, png) < 0) rc = err_set(e, BATON_EIO, "%s: cannot write the plot", png);
    cleanup(dir);
    return rc;
}
