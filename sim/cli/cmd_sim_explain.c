/* cmd_sim_explain.c - `baton sim --explain` and `baton predict --explain`:
 * where a run's time goes, in parts that add up to it (the simulated
 * time's critical path, waits and adds; the closed form's alpha, beta and
 * gamma; what every call adds) and what would move it. Apart from the
 * command (cmd_sim.c): an account of one answer, not a way to get one. */
#include <math.h>
#include <stdio.h>

#include "../../topologies/units.h"
#include "cmd_sim.h"

/* One part of a time, "name 1.2 us (3 %)", after a comma but the first;
 * parts that are zero are left out but where always. */
static int part(int n, const char *name, double v, double total, int always) {
    char tm[64];
    if (fabs(v) <= 1e-9 * fabs(total)) v = 0;             /* rounding, not a part */
    if (v == 0 && !always) return n;
    units_fmt_time(v, tm, sizeof tm);
    printf("%s%s%s %s (%.0f %%)", n == 0 ? "" : ",", n % 3 == 0 && n ? "\n             " : n ? " " : "", name, tm,
           total > 0 && fabs(v / total) >= 0.005 ? 100 * v / total : 0);
    return n + 1;
}

/* The proxy thread's floor, named by what it pays: the socket transport's
 * messages, or RDMA's operations and software matching's messages. */
static const char *proxy_part(const run_parts_t *x) {
    if (x->socket_tcp) return "socket proxy thread's messages";
    if (x->matching && x->operations) return "proxy's operations and matches, one at a time";
    return x->matching ? "proxy's tag matching, a message at a time" : "proxy's operations, one at a time";
}

/* What every run adds to its links' time: once per call, the switches'
 * synchronisation, the GPU's ceilings, the proxy thread's messages and operations,
 * NCCL's proxy scan and inline copies, the launches. */
static int parts_added(int n, const run_parts_t *x) {
    n = part(n, "once per call", x->once, x->total, 1);
    n = part(n, "switch sync", x->sync, x->total, 0);
    n = part(n, "GPU/host ceiling on busbw", x->ceiling, x->total, 0);
    n = part(n, proxy_part(x), x->socket, x->total, 0);
    n = part(n, "NCCL proxy's LL scan, inline copies", x->proxy, x->total, 0);
    return part(n, "-g launches", x->launches, x->total, 0);
}

/* The closed form's time c (what predict quotes) in parts that add up to it. */
static void explain_formula(topo_t *t, const run_out_t *c, const char *lead, run_parts_t *x) {
    char tm[64];
    run_parts(t, c, x);
    units_fmt_time(c->time_s, tm, sizeof tm);
    printf("%sthe %s formula's %s (predict's number) is\n             ", lead, c->algo->name, tm);
    int n = part(0, "alpha", x->alpha, x->total, 1);
    n = part(n, "beta", x->beta, x->total, 1);
    n = part(n, "gamma", x->gamma, x->total, 1);
    n = part(n, x->overlap < 0 ? "overlap of its terms" : "beyond its terms", x->overlap, x->total, 0);
    parts_added(n, x);
    printf("\n");
}

/* Rank ids, and the switches that reduce (helpers) by name. */
static const char *party(const topo_t *t, int id) {
    return id < topo_nranks(t) ? topo_rank_name(t, id) : topo_reducer_name(t, id - topo_nranks(t));
}

/* The simulated time r in parts that add up to it: its critical path, then
 * what every run adds; the busiest link; the closed form beside it. */
static void explain_run(topo_t *t, const run_out_t *r, const run_out_t *c) {
    char l[64], tm[64];
    run_parts_t x;
    run_parts(t, r, &x);
    units_fmt_time(r->time_s, tm, sizeof tm);
    engine_path_t cp;
    int path = engine_critical_path(&r->eng, &cp) == 0;
    printf("  explain  the simulated %s is\n             ", tm);
    int n = part(0, "moving bytes", x.transfer, x.total, 1);
    n = part(n, "waiting for a busy port or link", x.wait, x.total, 1);
    n = part(n, "adding", x.reduce, x.total, 1);
    n = part(n, path ? "idle between messages" : "the links (no record of where)", x.idle, x.total, 1);
    parts_added(n, &x);
    printf("\n");
    if (path) {
        const engine_rec_t *f = &r->eng.recs[cp.first], *z = &r->eng.recs[cp.last];
        printf("           critical path: %d message%s one after another, from %s -> %s to %s -> %s\n", cp.steps,
               cp.steps == 1 ? "" : "s", party(t, f->src), party(t, f->dst), party(t, z->src), party(t, z->dst));
    }
    int busiest = -1;
    for (int i = 0; i < topo_nlinks(t); i++)
        if (busiest < 0 || r->eng.link_busy[i] > r->eng.link_busy[busiest]) busiest = i;
    if (busiest >= 0 && r->eng.link_busy[busiest] > 0) {
        const topo_dlink_t *d = topo_dlink(t, busiest);
        char sz[64];
        units_fmt_size(r->eng.link_bytes[busiest], sz, sizeof sz);
        units_fmt_time(r->eng.link_busy[busiest], l, sizeof l);
        printf("           busiest link %s -> %s: %s in %s, busy %.0f %% of the time\n", topo_node(t, d->src)->name,
               topo_node(t, d->dst)->name, sz, l, 100 * r->eng.link_busy[busiest] / r->time_s);
    }
    if (c) printf("           the simulation took %.3g x the closed form's time:\n", c->time_s > 0 ? r->time_s / c->time_s : 0);
}

/* The advice where RDMA's proxy thread is slower than the links: its
 * operations, its software matching, or both, and what lowers each. */
static void proxy_advice(const run_parts_t *x) {
    char a[64];
    int both = x->matching && x->operations;
    units_fmt_time(x->socket, a, sizeof a);
    printf("           proxy-bound: the busiest rank's proxy thread runs, one at a time,\n"
           "           %s,\n"
           "           %s more than the links and ceilings take, so faster links save nothing until\n"
           "           it goes: %s\n",
           both ? "its network operations (proxy_op_latency each) and each message's tag match\n"
                  "           (software matching, FI_CXI_RX_MATCH_MODE=software)"
           : x->matching ? "each network message's tag match (software matching, FI_CXI_RX_MATCH_MODE=software)"
                         : "its network operations (proxy_op_latency each: a channel, peer and direction)",
           a,
           both ? "fewer peers on other nodes a rank, or the NIC's matching (hardware), lower it"
           : x->matching ? "the NIC's matching (hardware) removes it"
                         : "fewer peers on other nodes a rank lower it");
}

/* What would move this run, in numbers: halving each part of the formula;
 * where the socket transport's proxy thread is slower still, none of them
 * does until it goes. */
static void explain_advice(const run_out_t *r, const run_parts_t *x) {
    char a[64], b[64], c[64];
    if (x->socket > 0 && x->socket_tcp) {
        units_fmt_time(x->socket, a, sizeof a);
        printf("           socket-bound: NCCL's socket transport's proxy thread handles the busiest rank's network\n"
               "           messages one after another, %s more than the links and ceilings take, so faster or\n"
               "           lower-latency links save nothing until it goes: a cheaper message (socket_latency) lowers\n"
               "           it, helper threads (NCCL_SOCKET_NTHREADS, --set socket_threads=N) or RDMA remove it\n", a);
        return;
    }
    if (x->socket > 0) {
        proxy_advice(x);
        return;
    }
    units_fmt_time(x->half_alpha, a, sizeof a);
    units_fmt_time(x->half_beta, b, sizeof b);
    units_fmt_time(x->once / 2, c, sizeof c);
    int latency = x->half_alpha + x->once / 2 >= x->half_beta;
    printf("           %s: half the per-message latency saves %s, twice the bandwidth %s, half the\n"
           "           per-call latency %s%s\n", latency ? "latency-bound" : "bandwidth-bound", a, b, c,
           r->tuner ? " (NCCL's model picked the algorithm and protocol; they need not be the fastest)"
           : r->auto_picked == 2 ? " (the fastest of the algorithms NCCL has; -a auto may know a faster one)"
           : r->auto_picked ? " (the algorithm and protocol are already the fastest the formulas know)" : "");
    if (!r->auto_picked && latency)
        printf("           with -a auto the formulas pick the lowest-latency algorithm and protocol for this size\n");
    else if (!r->auto_picked)
        printf("           with -a auto the formulas pick the algorithm that moves the fewest bytes per link here\n");
}

/* The closed form of r's row as predict answers it (r itself where r is
 * one); 0, or an error in e. */
static int closed_of(topo_t *t, const run_req_t *q, const run_out_t *r, run_out_t *c, baton_err_t *e) {
    run_req_t cq;
    if (!r->simulated) { *c = *r; return 0; }
    run_same_row(q, r, 1, &cq);
    cq.engine = NULL, cq.verify = 0;
    return run_collective(t, &cq, c, e);
}

int cmd_sim_explain(const char *cmd, topo_t *t, const run_req_t *q, const run_out_t *r) {
    run_out_t c;
    run_parts_t x;
    baton_err_t e = {0};
    int closed = closed_of(t, q, r, &c, &e) == 0;   /* none where a row has no closed form on a whole machine */
    if (r->simulated) explain_run(t, r, closed ? &c : NULL);
    if (!closed) return cmd_fail(cmd, &e);
    explain_formula(t, &c, r->simulated ? "           " : "  explain  ", &x);
    explain_advice(r, &x);
    return 0;
}
