/* progress.c - the progress line: what it says, when it is drawn. */
#define _DEFAULT_SOURCE                       /* TIOCGWINSZ */
#include "progress.h"

#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_S 0.25          /* at most four redraws a second */

static struct {
    FILE *out;
    int mode;                  /* progress_wanted's: 0 off, 1 after PROGRESS_AFTER_S, 2 forced */
    int muted, drawn;
    int width;                 /* the terminal's columns less one (a full line would wrap); 0: any */
    double t0, last;           /* when the command began, when the line was last drawn */
    const char *what;          /* the outer loop: "row", "point"; NULL: none */
    long done, total, base;    /* items done, of total; base: done when the stage was set */
    char run[48];              /* progress_run's label, "": none */
    int run_k, run_n;
    int engine;                /* the engine's figures below are current */
    uint64_t events, messages;
    double msgs_total, sim_s, wall_s;
} P;

int progress_wanted(int tty, int json, const char *no_env, const char *force_env) {
    if (json) return 0;
    if (no_env && *no_env && strcmp(no_env, "0") != 0) return 0;
    if (force_env && strcmp(force_env, "1") == 0) return 2;
    return tty ? 1 : 0;
}

double progress_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_begin(FILE *out, int mode) {
    memset(&P, 0, sizeof P);
    if (mode <= 0 || out == NULL) return;
    struct winsize ws;
    P.out = out;
    P.mode = mode;
    P.t0 = progress_clock();
    if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) P.width = ws.ws_col - 1;
}

int progress_on(void) { return P.mode > 0 && !P.muted; }

void progress_mute(void) { P.muted = 1; }

void progress_touched(void) { if (P.mode > 0) P.drawn = 1; }

void progress_end(void) {
    if (P.mode > 0 && !P.muted && P.drawn) {
        fputs("\r\033[K", P.out);            /* back to the line's start, erase it */
        fflush(P.out);
    }
    P.mode = 0;
    P.drawn = 0;
}

/* 12.6 M, 840 k, 512. */
static void count(char *b, size_t n, double x) {
    if (x >= 1e9) snprintf(b, n, "%.3g G", x / 1e9);
    else if (x >= 1e6) snprintf(b, n, "%.3g M", x / 1e6);
    else if (x >= 1e4) snprintf(b, n, "%.3g k", x / 1e3);
    else snprintf(b, n, "%.0f", x);
}

/* 1.23 ms, 45.6 us. */
static void seconds(char *b, size_t n, double s) {
    if (s >= 1) snprintf(b, n, "%.3g s", s);
    else if (s >= 1e-3) snprintf(b, n, "%.3g ms", s * 1e3);
    else snprintf(b, n, "%.3g us", s * 1e6);
}

/* ~4 s, ~3 min, ~1.2 h: a wall-clock estimate, so coarse. */
static void left(char *b, size_t n, double s) {
    if (s < 90) snprintf(b, n, "~%.0f s left", s < 1 ? 1 : s);
    else if (s < 5400) snprintf(b, n, "~%.0f min left", s / 60);
    else snprintf(b, n, "~%.1f h left", s / 3600);
}

/* Time left: the outer loop's rate once an item is done, else the engine's
 * (messages delivered against the schedule's total); negative: unknown. */
static double eta(double now) {
    if (P.what && P.total > 0 && P.done > 0) return (now - P.t0) * (double)(P.total - P.done) / (double)P.done;
    if (!(P.engine && P.msgs_total > P.messages && P.messages > 0 && P.wall_s > 0)) return -1;
    double whole = P.wall_s * P.msgs_total / (double)P.messages;     /* this run, start to end */
    return whole - P.wall_s + (P.run_n > P.run_k ? P.run_n - P.run_k : 0) * whole;
}

static int line_at(char *buf, size_t n, double now) {
    char a[32], b[32], c[32];
    size_t at = 0;
#define PUT(...) do { int k_ = snprintf(buf + at, at < n ? n - at : 0, __VA_ARGS__); if (k_ > 0) at += (size_t)k_; } while (0)
    PUT("baton:");
    if (P.what && P.total > 0) PUT(" %s %ld/%ld", P.what, P.done + (P.done < P.total), P.total);
    else if (P.what) PUT(" %s %ld", P.what, P.done);
    if (P.run[0] && P.run_n > 1) PUT("%s %s (%d/%d)", P.what ? "," : "", P.run, P.run_k, P.run_n);
    else if (P.run[0]) PUT("%s %s", P.what ? "," : "", P.run);
    if (P.engine) {                           /* how far and how long first: a narrow terminal cuts the end */
        count(a, sizeof a, (double)P.messages);
        PUT("%s %s", P.what || P.run[0] ? "," : "", a);
        if (P.msgs_total >= (double)P.messages && P.msgs_total > 0) {
            count(b, sizeof b, P.msgs_total);
            PUT(" of ~%s messages (%.0f %%)", b, 100.0 * (double)P.messages / P.msgs_total);
        } else PUT(" messages");
    }
    double s = eta(now);
    if (s >= 0) { left(a, sizeof a, s); PUT(", %s", a); }
    if (P.engine) {
        count(b, sizeof b, (double)P.events);
        seconds(c, sizeof c, P.sim_s);
        PUT(", %s events, %s simulated", b, c);
    }
#undef PUT
    return (int)(at < n ? at : n ? n - 1 : 0);
}

int progress_format(char *buf, size_t n) { return line_at(buf, n, progress_clock()); }

static void redraw(void) {
    if (!progress_on()) return;
    double now = progress_clock();
    if (now - P.t0 < (P.mode == 2 ? 0 : PROGRESS_AFTER_S) || (P.drawn && now - P.last < REDRAW_S)) return;
    char buf[256];
    line_at(buf, P.width > 0 && (size_t)P.width < sizeof buf ? (size_t)P.width + 1 : sizeof buf, now);
    fprintf(P.out, "\r%s\033[K", buf);       /* over the last line, erasing what it left */
    fflush(P.out);
    P.drawn = 1;
    P.last = now;
}

void progress_stage(const char *what, long done, long total) {
    if (!progress_on()) return;
    P.what = what;
    P.done = P.base = done;
    P.total = total;
    P.engine = 0;                             /* the next run reports afresh */
    P.run[0] = '\0';
    redraw();
}

void progress_run(const char *label, int k, int n) {
    if (!progress_on()) return;
    snprintf(P.run, sizeof P.run, "%s", label ? label : "");
    P.run_k = k;
    P.run_n = n;
    P.engine = 0;
}

void progress_step(long k) {
    if (!progress_on() || P.what == NULL || P.total <= 0) return;   /* items of a counted loop only */
    P.done = P.base + k;
    P.engine = 0;
    redraw();
}

void progress_engine(uint64_t events, uint64_t messages, double total, double sim_s, double wall_s) {
    if (!progress_on()) return;
    P.engine = 1;
    P.events = events;
    P.messages = messages;
    P.msgs_total = total;
    P.sim_s = sim_s;
    P.wall_s = wall_s;
    redraw();
}
