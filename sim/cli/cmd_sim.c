/* cmd_sim.c - `baton sim` and `baton predict` (--explain's account of an
 * answer: cmd_sim_explain.c). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "../../util/par.h"
#include "../../validate/nccltests.h"
#include "cmd_sim.h"
#include "../teach/lesson.h"
#include "../answer/select.h"
#include "../answer/report.h"
#include "../nccl/nccl.h"
#include "../answer/run.h"
#include "../engine/trace.h"

/* Help: what both commands take, what only the simulator does, and the end. */
static const char help_common[] =
    "usage: baton %s -t TOPO -c COLLECTIVE -s SIZE [-a ALGORITHM] [options]\n"
    "\n"
    "%s\n"
    "\n"
    "  -t, --topo TOPO     a machine: a YAML file or a shipped name (hgx-h100)\n"
    "  -c, --coll NAME     allreduce, reducescatter, allgather, broadcast, reduce,\n"
    "                      alltoall\n"
    "  -a, --algo NAME     an algorithm (baton algos -c COLL lists them), auto (the\n"
    "                      default: the lowest closed-form time on this topology;\n"
    "                      sim: the fastest simulated of those within 1.5x of it)\n"
    "                      or nccl (what baton expects NCCL to run: of the\n"
    "                      algorithms NCCL has - ring, its trees, nvls, nvlstree -\n"
    "                      under NCCL's protocol rules and sizing, the lowest\n"
    "                      closed-form time; sim: the fastest simulated of those\n"
    "                      within 1.5x of it; all-to-all: NCCL's p2p schedule,\n"
    "                      pairwise or direct. NCCL's own cost model is `baton plan`'s)\n"
    "  -s, --size SIZE     bytes: 4, 1KiB, 1GiB, 1GB (GB = 1e9 B). As in nccl-tests,\n"
    "                      the whole buffer: the all-reduce/broadcast/reduce buffer,\n"
    "                      the reduce-scatter input and the all-gather output\n"
    "                      (each rank's block is 1/p of it)\n"
    "      --root R        root of broadcast and reduce (default 0)\n"
    "      --channels C    rings side by side over slices of each block (ring, the\n"
    "                      trees, chain, nvls, nvlstree, collnet; other rows run their\n"
    "                      own count; default: one per ring NCCL's search finds, `baton plan`)\n"
    "      --rank-order    rings in rank order, not the machine's searched rings\n"
    "      --pipeline K    chunks a pipelined algorithm (chain, bintree, dbtree) cuts\n"
    "                      the buffer into (default: one per MiB; -a auto and nccl:\n"
    "                      NCCL's steps and LL fill where it cuts the row, see plan)\n"
    "      --group G       ranks per group for hier and hier_leader (default: the\n"
    "                      topology's group_size)\n"
    "  -g, --gpus-per-thread N  GPUs one host thread launches the call on in turn,\n"
    "                      as nccl-tests -g N: each one after the first adds the\n"
    "                      machine's launch cost (default 1, a process per GPU;\n"
    "                      validate reads it from a log's nGpus)\n"
    "      --set K=V       override a topology parameter (repeatable)\n"
    "      --proto P       auto (the default: the fastest), LL, LL128, Simple, or\n"
    "                      none (plain alpha-beta): NCCL's protocols, each a latency per\n"
    "                      message, a bandwidth efficiency and a base latency\n"
    "                      (defaults from NCCL; a topology's `protocols:` overrides)\n"
    "      --json          one JSON object instead of the summary\n"
    "      --sizes SPEC    LO:HI[:xF] or a list instead of -s: one line per size,\n"
    "                      --format table (default) or nccl-tests (nccl-tests' own\n"
    "                      layout, to diff against a log line by line)\n"
    "      --explain       where the time goes: the formula's alpha/beta/gamma and\n"
    "                      per-call parts, what halving each would save%s\n";
static const char help_sim[] =
    "      --contention M  fifo (links reserved in order; default), fair (max-min\n"
    "                      fair sharing, recomputed as transfers start and end) or\n"
    "                      none (links never queue); a calibrated machine's\n"
    "                      default is the one it was fitted with, as for -a and\n"
    "                      --proto\n"
    "      --store-forward every hop receives a message whole before passing it on\n"
    "                      (default: cut-through; fifo and none only)\n"
    "      --verify        prove the result (data mode when small, else signatures)\n"
    "      --dump          print the schedule (GOAL text) instead of running it;\n"
    "                      with -a auto or nccl, predict's pick as it is cut (the\n"
    "                      run may answer another row: --explain names it)\n"
    "      --trace FILE    a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
    "      --link-stats FILE  bytes and busy time per link, CSV\n"
    "      --html FILE     a page to step through in a browser (one file, no\n"
    "                      network): every byte of every rank as the messages move\n"
    "                      (up to 16 ranks and 64 bytes); --states FILE adds the\n"
    "                      simulator's buffers after every step (JSON)\n"
    "      --symmetric     simulate one rank per class of interchangeable ranks (ring,\n"
    "                      twoshot, oneshot, pairwise, bruck on switches, rings and\n"
    "                      fat-trees): the full simulation's answer, p / G times\n"
    "                      faster; an error saying why where it would not be exact.\n"
    "                      Without it, runs of 64 ranks or more take it unasked where\n"
    "                      it is proven (and nothing needs every rank: no --verify,\n"
    "                      --trace, --explain, --link-stats, --contention fair)\n"
    "      --no-symmetric  simulate every rank, always\n";
static const char help_fold[] =
    "      --fold N        a cluster of N nodes or more (default " CMD_FOLD_NODES_S ") is built only\n"
    "                      where its routes differ: a few witness nodes, at their\n"
    "                      places in the fat-tree, stand for the rest (the same answer;\n"
    "                      a row that needs every rank loads the whole); 0: never\n";
static const char help_end[] =
    "  -h, --help          this text\n"
    "\n"
    "algbw = size / time and busbw = algbw x 2(p-1)/p for all-reduce, as nccl-tests\n"
    "defines them (1 GB/s = 1e9 B/s).\n"
    "\n"
    "example:\n"
    "  baton %s -t hgx-h100 -c allreduce -s 1GiB%s\n";

typedef struct {
    const char *topo, *coll, *algo, *size, *sizes, *format;
    int verify, json, dump, store_forward, proto, explain, symmetric, algo_given, proto_given, fold;
    int off_rule;            /* 1: a calibrated machine asked another rule than its fit's */
    int contention_given;
    int gpus_per_thread;     /* -g: nccl-tests' nGpus */
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    const char *trace, *link_stats, *html, *states;
    int contention;          /* contention_t */
    algo_opts_t opts;
    cmd_sets_t sets;
} sim_args_t;

/* A whole number in [lo, hi] for option name; -1 after printing usage. */
static int parse(int argc, char **argv, const char *cmd, sim_args_t *a, int predict) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"coll", required_argument, 0, 'c'},
        {"algo", required_argument, 0, 'a'}, {"size", required_argument, 0, 's'},
        {"verify", no_argument, 0, 'V'},     {"json", no_argument, 0, 'j'},
        {"dump", no_argument, 0, 'D'},       {"help", no_argument, 0, 'h'},
        {"root", required_argument, 0, 'R'}, {"channels", required_argument, 0, 'C'},
        {"pipeline", required_argument, 0, 'P'}, {"group", required_argument, 0, 'G'},
        {"set", required_argument, 0, 'S'}, {"contention", required_argument, 0, 'M'},
        {"store-forward", no_argument, 0, 'F'}, {"proto", required_argument, 0, 'O'},
        {"explain", no_argument, 0, 'E'}, {"trace", required_argument, 0, 'T'},
        {"link-stats", required_argument, 0, 'L'}, {"symmetric", no_argument, 0, 'Y'},
        {"no-symmetric", no_argument, 0, 'N'},
        {"rank-order", no_argument, 0, 'K'}, {"sizes", required_argument, 0, 'Z'},
        {"format", required_argument, 0, 'f'}, {"html", required_argument, 0, 'W'},
        {"states", required_argument, 0, 'X'}, {"fold", required_argument, 0, 'U'},
        {"gpus-per-thread", required_argument, 0, 'g'}, {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:a:s:g:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'g': if (cmd_int_arg(cmd, "-g", optarg, 1, 1 << 20, &a->gpus_per_thread)) return EXIT_USAGE; break;
        case 'c': a->coll = optarg; break;
        case 'a': a->algo = optarg; a->algo_given = 1; break;
        case 's': a->size = optarg; break;
        case 'V': a->verify = 1; break;
        case 'j': a->json = 1; break;
        case 'D': a->dump = 1; break;
        case 'R':                    /* its upper end is the machine's, checked once it is loaded */
            if (cmd_root_arg(cmd, optarg, &a->opts.root)) return EXIT_USAGE;
            break;
        case 'C': if (cmd_int_arg(cmd, "--channels", optarg, 1, 64, &a->opts.channels)) return EXIT_USAGE; break;
        case 'P': if (cmd_int_arg(cmd, "--pipeline", optarg, 1, 1 << 20, &a->opts.pipeline)) return EXIT_USAGE; break;
        case 'G': if (cmd_int_arg(cmd, "--group", optarg, 1, 1 << 30, &a->opts.group)) return EXIT_USAGE; break;
        case 'S': if (cmd_add_set(cmd, &a->sets, optarg)) return EXIT_USAGE; break;
        case 'F': a->store_forward = 1; break;
        case 'Y': a->symmetric = 1; break;
        case 'N': a->symmetric = -1; break;
        case 'K': a->opts.rank_order = 1; break;
        case 'Z': a->sizes = optarg; break;
        case 'f':
            if (strcmp(optarg, "nccl-tests") && strcmp(optarg, "table"))
                return cmd_usage(cmd, "--format must be nccl-tests or table, not '%s'", optarg);
            a->format = optarg;
            break;
        case 'E': a->explain = 1; break;
        case 'T': if (cmd_out_file(cmd, "--trace", optarg, &a->trace)) return EXIT_USAGE; break;
        case 'L': if (cmd_out_file(cmd, "--link-stats", optarg, &a->link_stats)) return EXIT_USAGE; break;
        case 'W': if (cmd_out_file(cmd, "--html", optarg, &a->html)) return EXIT_USAGE; break;
        case 'X': if (cmd_out_file(cmd, "--states", optarg, &a->states)) return EXIT_USAGE; break;
        case 'U': if (cmd_fold_arg(cmd, optarg, &a->fold)) return EXIT_USAGE; break;
        case 'O':
            a->proto = cmd_parse_proto(optarg);
            a->proto_given = 1;
            if (a->proto < 0) return cmd_usage(cmd, "--proto must be none, LL, LL128, Simple or auto, not '%s'", optarg);
            break;
        case 'M':
            if (cmd_parse_contention(optarg) < 0) return cmd_usage(cmd, "--contention must be fifo, fair or none, not '%s'", optarg);
            a->contention = cmd_parse_contention(optarg);
            a->contention_given = 1;
            break;
        case 'h':
            printf(help_common, cmd,
                   predict ? "Answer from the algorithm's closed-form alpha-beta-gamma cost on the\n"
                             "topology's view of the links its messages share."
                           : "Simulate the collective's schedule on the topology, event by event.",
                   predict ? "" : ",\n                      the busiest link and the critical path");
            if (!predict) fputs(help_sim, stdout);
            else fputs(help_fold, stdout);
            printf(help_end, cmd, predict ? " --explain" : " -a ring --verify");
            return 1;
        case ':': return cmd_usage(cmd, "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!a->topo) return cmd_usage(cmd, "missing -t TOPO.yaml");
    if (!a->coll) return cmd_usage(cmd, "missing -c COLLECTIVE");
    if (!a->size && !a->sizes) return cmd_usage(cmd, "missing -s SIZE (or --sizes SPEC)");
    if (a->size && a->sizes) return cmd_usage(cmd, "-s and --sizes: one or the other");
    if (a->sizes && (a->verify || a->dump || a->explain || a->trace || a->link_stats || a->json))
        return cmd_usage(cmd, "--sizes prints one line per size: no --verify, --dump, --explain, --trace, --link-stats or --json");
    if (predict && (a->verify || a->dump || a->contention || a->store_forward || a->trace || a->link_stats ||
                    a->symmetric > 0))
        return cmd_usage(cmd, "--verify, --dump, --contention, --store-forward, --trace, --link-stats and "
                         "--symmetric need `baton sim`");
    if (a->symmetric > 0 && (a->verify || a->explain || a->trace || a->link_stats || a->contention == CONTENTION_FAIR))
        return cmd_usage(cmd, "--symmetric runs representatives only: not with --verify, --explain, --trace, "
                         "--link-stats or --contention fair");
    if (a->fold >= 0 && !predict) return cmd_usage(cmd, "--fold is predict's (the simulator needs every rank)");
    if (a->states && !a->html) return cmd_usage(cmd, "--states goes with --html FILE");
    if (a->html && (predict || a->sizes || a->symmetric > 0 || a->dump))
        return cmd_usage(cmd, "--html draws one simulated run: `baton sim` with -s, no --sizes, --symmetric or --dump");
    if (a->store_forward && a->contention == CONTENTION_FAIR)
        return cmd_usage(cmd, "--store-forward works with --contention fifo or none");
    return 0;
}

/* The time and how sure it is: a calibrated machine's interval where its
 * logs ran, or why there is none. */
static void time_line(const run_out_t *r, const topo_t *t, const char *tm) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    const char *how = r->simulated ? "simulated" : "closed form";
    char seen[512];
    if (r->time_hi_s > 0) {                          /* both ends in the time's own unit */
        double u = r->time_s >= 1 ? 1 : r->time_s >= 1e-3 ? 1e-3 : r->time_s >= 1e-6 ? 1e-6 : 1e-9;
        const char *un = u == 1 ? "s" : u == 1e-3 ? "ms" : u == 1e-6 ? "us" : "ns";
        printf("  time     %s (%s; %.3g-%.3g %s with 90 %% confidence, by the calibration's held-out errors%s", tm,
               how, r->time_lo_s / u, r->time_hi_s / u, un, r->band_large ? " at sizes >= 64 MiB" : "");
        if (r->band_widen > 1)
            printf(",\n           widened %.2fx: %.3g doublings from the rank counts its logs ran", r->band_widen,
                   (r->band_widen - 1) / RUN_BAND_PER_DOUBLING);
        printf(")\n");
    } else if (k->present && !(k->band_lo_pct < k->band_hi_pct))
        printf("  time     %s (%s; no interval: the calibration was not cross-validated, `calibrate --cv 0`)\n", tm, how);
    else if (r->band_outside == RUN_BAND_OTHER_RULE) {
        cmd_fitted_rule(k, seen, sizeof seen);
        printf("  time     %s (%s; no interval: the calibration's errors are those of %s)\n", tm, how, seen);
    }
    else if (r->band_outside && k->what_if[0])
        printf("  time     %s (%s; no interval: --set %s is not what the calibration's logs ran)\n", tm, how, k->what_if);
    else if (r->band_outside) {
        cmd_seen_text(k, seen, sizeof seen);
        printf("  time     %s (%s; no interval: the calibration's logs covered %s only)\n", tm, how, seen);
    } else
        printf("  time     %s (%s)\n", tm, how);
}

static void summary(const run_out_t *r, const topo_t *t, coll_t coll, int verify) {
    const char *topo = topo_name(t);
    char sz[64], tm[64];
    units_fmt_size(r->bytes, sz, sizeof sz);
    units_fmt_time(r->time_s, tm, sizeof tm);
    printf("%s %s on %s (%d ranks), %s (%llu bytes)\n", coll_name(coll), r->algo->name, topo,
           r->ranks, sz, (unsigned long long)r->bytes);
    if (r->rule) {
        char lo[32], hi[32];
        units_fmt_size(r->rule->min, lo, sizeof lo);
        units_fmt_size(r->rule->max, hi, sizeof hi);
        printf("  chosen   by -a nccl: the machine's library rule for %s-%s on %d ranks (`baton plan` lists them)\n",
               lo, hi, r->rule->ranks);
    } else if (r->auto_picked == 2 && r->kernel)
        printf("  chosen   by -a nccl: NCCL's symmetric kernel %s, its own model's pick (registered buffers on one\n"
               "           NVLink domain), run as the row that moves its data\n", r->kernel);
    else if (r->auto_picked == 2 && r->tuner)
        printf("  chosen   by -a nccl: NCCL's own cost model's pick (the machine's nccl_tuner: true), timed by baton\n");
    else if (r->auto_picked == 2 && r->simulated)
        printf("  chosen   by -a nccl, what baton expects NCCL to run: the fastest simulated of the %s algorithms NCCL\n"
               "           has whose closed form is within %.3gx of the lowest\n", coll_name(coll), NCCL_SLACK);
    else if (r->auto_picked == 2)
        printf("  chosen   by -a nccl, what baton expects NCCL to run: the lowest closed-form time of the %s algorithms "
               "NCCL has\n", coll_name(coll));
    else if (r->auto_picked && r->simulated)
        printf("  chosen   by -a auto: the fastest simulated of the %s algorithms whose closed form is within\n"
               "           %.3gx of the lowest, or below that one's time with what its GPUs and hosts add\n",
               coll_name(coll), NCCL_SLACK);
    else if (r->auto_picked)
        printf("  chosen   by -a auto: the lowest closed-form time of the %s algorithms\n", coll_name(coll));
    int p2p = r->auto_picked == 2 && r->algo->nccl && strcmp(r->algo->nccl, "p2p") == 0;    /* ncclrule_runs_at */
    int net_simple = ncclrule_p2p_no_ll(t, ncclrule_p2p_network(t, r->ranks));
    if (r->proto != PROTO_NONE && p2p && r->proto_auto && !r->rule && net_simple)
        printf("  protocol %s (NCCL's p2p rule: Simple across nodes, whose connections have no LL buffers)\n",
               proto_name(r->proto));
    else if (r->proto != PROTO_NONE && p2p && r->proto_auto && !r->rule) {
        char most[32];
        units_fmt_size((uint64_t)topo_params_c(t)->p2p_ll_max, most, sizeof most);
        printf("  protocol %s (NCCL's p2p rule: LL while a peer's message is at most %s)\n", proto_name(r->proto), most);
    }
    else if (r->proto != PROTO_NONE)
        printf("  protocol %s%s\n", proto_name(r->proto), r->rule ? " (the rule's)" : r->kernel && r->proto_auto ? " (the kernel's)"
               : r->tuner && r->proto_auto ? " (NCCL's model's)"
               : r->proto_auto ? " (the fastest, by --proto auto)" : "");
    char env[320];
    if (r->auto_picked == 2 && cmd_nccl_env_text(t, env, sizeof env))
        printf("  within   the machine's nccl_env:%s (what its NCCL is told)\n", env);
    time_line(r, t, tm);
    if (r->launch_s > 0) {
        units_fmt_time(r->launch_s, tm, sizeof tm);
        printf("  launches %s of it: the further GPUs one host thread starts the call on in turn (-g)\n", tm);
    }
    printf("  algbw    %.4g GB/s    busbw %.4g GB/s\n", r->algbw_GBps, r->busbw_GBps);
    char on[40] = "";                     /* NCCL's channels for the size, where it counts them (rings, trees) */
    if (algo_nccl_ring_or_tree(r->algo)) snprintf(on, sizeof on, ", on %d channel%s", r->channels, r->channels == 1 ? "" : "s");
    if (r->nccl_steps > 0)
        printf("  pipeline %d step%s, as NCCL cuts %s at this size (its chunk per channel%s%s)\n", r->nccl_steps,
               r->nccl_steps == 1 ? "" : "s", r->algo->name, on,
               r->auto_picked != 1 ? "" : r->simulated ? "; -a auto: it simulates faster than the row's own cut"
                                                         : "; -a auto: it prices below the row's own cut");
    else if (r->auto_picked == 1 && r->cut == RUN_CUT_NCCL)       /* NCCL's channels for the size, or LL's fill */
        printf("  cut      as NCCL cuts %s at this size, on %d channel%s (-a auto: it %s the row's own cut)\n",
               r->algo->name, r->channels, r->channels == 1 ? "" : "s",
               r->simulated ? "simulates faster than" : "prices below");
    char switches[64];
    snprintf(switches, sizeof switches, " (%llu of them the reducing switches')", (unsigned long long)r->eng.switch_msgs);
    if (r->simulated)
        printf("  steps    %llu messages in all%s, at most %llu sent by one rank (%llu events)\n",
               (unsigned long long)r->eng.messages, r->eng.switch_msgs ? switches : "",
               (unsigned long long)r->eng.max_rank_msgs, (unsigned long long)r->eng.events);
    else
        printf("  formula  %s\n           alpha %.4g s, beta %.4g s/B, gamma %.4g s/B, %s\n",
               r->algo->cost_text, r->model.alpha, r->model.beta, r->model.gamma,
               r->model.ports == 1 ? "single-port" : "multi-port");
    if (!r->simulated && r->model.blind)
        printf("  caution  links between switches may carry several ranks' messages at once and %s's formula\n"
               "           does not look at them: `baton sim --contention fair` does\n", r->algo->name);
    if (r->simulated && r->eng.reps < r->ranks)
        printf("  symmetric %d representative%s simulated for %d ranks (ranks %d apart act alike)\n",
               r->eng.reps, r->eng.reps == 1 ? "" : "s", r->ranks, r->eng.reps);
    if (verify)
        printf("  verified %s (%s mode)\n", r->eng.verified ? "yes" : "no",
               r->verify_mode == VERIFY_DATA ? "data" : "signature");
}

static int dump(const char *cmd, topo_t *t, coll_t coll, const char *algo, uint64_t bytes,
                const algo_opts_t *o_in) {
    baton_err_t e = {0};
    algo_opts_t opts = *o_in;
    const algo_opts_t *o = &opts;
    form_opts(t, &opts);
    const algo_t *a = run_is_auto(algo) ? NULL : algo_find(coll, algo);
    algo_opts_t tmp;
    const algo_opts_t *ro = a ? algo_row_opts(a, o, &tmp) : o;
    run_out_t r;
    if (run_is_auto(algo)) {            /* predict's pick, as it cut it (NCCL's channels and steps where it did) */
        run_req_t q = {.coll = coll, .algo = algo, .bytes = bytes, .opts = *o_in, .proto = RUN_PROTO_AUTO, .predict = 1};
        if (run_collective(t, &q, &r, &e) < 0) return cmd_fail(cmd, &e);
        a = r.algo, ro = &r.opts;
    }
    if (a == NULL) {
        err_set(&e, BATON_EINVAL, "no algorithm '%s' for %s%s (see `baton algos -c %s`)", algo, coll_name(coll),
                algo_hint(coll, algo), coll_name(coll));
        return cmd_fail(cmd, &e);
    }
    sched_t s;
    if (algo_build(a, topo_nranks(t), bytes, ro, &s, &e) < 0) return cmd_fail(cmd, &e);
    if (sched_dump_goal(&s, stdout) < 0) return cmd_fail(cmd, &(baton_err_t){BATON_EIO, "write error"});
    return EXIT_OK;
}

static char *link_csv(const topo_t *t, const run_out_t *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "link,from,to,bw_GBps,bytes,busy_s,utilisation\n");
    for (int l = 0; l < topo_nlinks(t); l++) {
        const topo_dlink_t *d = topo_dlink(t, l);
        fprintf(f, "%d,%s,%s,%.6g,%llu,%.9g,%.6f\n", l, topo_node(t, d->src)->name, topo_node(t, d->dst)->name, d->bw / 1e9,
                (unsigned long long)r->eng.link_bytes[l], r->eng.link_busy[l], r->time_s > 0 ? r->eng.link_busy[l] / r->time_s : 0);
    }
    fclose(f);
    return buf;
}


/* Outputs beyond the summary: trace, link statistics, explanation. A chosen
 * "auto" is resolved first so that the observed run is exactly one run. */
static int observed(const char *cmd, topo_t *t, run_req_t *q, run_out_t *r, const sim_args_t *a) {
    baton_err_t e = {0};
    trace_t *tr = a->trace ? trace_create(t) : NULL;
    engine_opts_t eo = {.link_stats = 1, .record = a->explain, .on_msg = tr ? trace_on_msg : NULL, .msg_ctx = tr};
    int picked = r->auto_picked, proto_auto = r->proto_auto;
    run_same_row(q, r, 0, q);                    /* sized as the choice was (NCCL's channels and pipeline) */
    q->engine = &eo;
    engine_result_free(&r->eng);
    int rc = a->trace && tr == NULL ? err_set(&e, BATON_ENOMEM, "out of memory") : run_collective(t, q, r, &e);
    r->auto_picked = picked;
    r->proto_auto = proto_auto;
    char *text = NULL;
    if (rc == 0 && a->trace && (text = trace_json(tr)) == NULL)
        rc = err_set(&e, BATON_EUNSUP, "the trace would hold more than %d messages", TRACE_MAX_MSGS);
    if (rc == 0 && text) rc = cmd_write_file(a->trace, text, strlen(text), &e);
    free(text);
    text = NULL;
    if (rc == 0 && a->link_stats && (text = link_csv(t, r)) == NULL) rc = err_set(&e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && a->link_stats) rc = cmd_write_file(a->link_stats, text, strlen(text), &e);
    free(text);
    trace_free(tr);
    return rc < 0 ? cmd_fail(cmd, &e) : 0;
}

/* predict's answer beside the simulator's where its formula is only
 * approximate here: the simulator's time where the two differ beyond the
 * band (the number to quote), or why it was not checked. */
static void check_line(const run_out_t *r, const run_check_t *c) {
    char tm[64];
    if (c->state == RUN_CHECK_DONE && c->beyond) {
        units_fmt_time(c->sim_s, tm, sizeof tm);
        printf("  simulated %s, %.0f %% %s the formula: beyond its %.0f %% band%s;\n"
               "           %s's formula is approximate here, the simulator ran its schedule (same row, protocol, sizing)\n",
               tm, 100 * fabs(c->sim_s - r->time_s) / r->time_s, c->sim_s > r->time_s ? "above" : "below",
               100 * RUN_FORMULA_BAND, c->pick ? "" : ", so quote this (as `sim` and `select` do)", r->algo->name);
    } else if (c->state == RUN_CHECK_LARGE)
        printf("  unchecked %s's formula is approximate here and %d ranks are too many to simulate unasked: "
               "`baton sim` gives the simulator's time\n", r->algo->name, r->ranks);
    else if (c->state == RUN_CHECK_FAILED)
        printf("  unchecked %s's formula is approximate here and the simulator cannot run it: %s\n", r->algo->name, c->why);
    if (c->pick) {                /* another row simulates faster: that is sim's answer, and the one to quote */
        units_fmt_time(c->pick_s, tm, sizeof tm);
        printf("  sim      answers %s/%s in %s: it simulates every row whose formula is within %.3gx of the\n"
               "           lowest, and a formula can misjudge a row; quote that\n",
               c->pick->name, proto_name((proto_t)c->pick_proto), tm, NCCL_SLACK);
    }
}

/* predict's check of its answer r (run_check): where a folded cluster
 * answered and the check is cheap, on the whole cluster, so that folded
 * and whole say the same. */
static int predict_check(const sim_args_t *a, topo_t *t, const run_req_t *q, const run_out_t *r, run_check_t *c) {
    if (!topo_fold_ranks(t) || !run_formula_approx(r) || !run_check_cheap(r)) return run_check(t, q, r, c);
    baton_err_t e = {0};
    topo_t *whole = cmd_load_topo_folded(a->topo, a->sets.v, a->sets.n, 0, &e);
    if (whole == NULL) {
        *c = (run_check_t){.state = RUN_CHECK_FAILED};
        snprintf(c->why, sizeof c->why, "%s", e.msg);
        return e.code == BATON_ENOMEM ? e.code : 0;
    }
    int rc = run_check(whole, q, r, c);
    topo_free(whole);
    return rc;
}

/* Say that a folded cluster answered, and from how few nodes. */
static void folded_note(const topo_t *t) {
    char line[192];
    if (cmd_folded_line(t, "  folded   ", line, sizeof line)) fputs(line, stdout);
}

typedef struct {
    const algo_t *algo, *pick;     /* pick: the row sim answers instead, where its formula misjudged (run_check) */
    proto_t proto, pick_proto;
    double time_s, busbw, sim_s, pick_s;
} sweep_row_t;

/* Every size's answer into rows[]; BATON_EWHOLE where a folded cluster
 * cannot answer one (a row needs every rank). */
static int sweep_run(topo_t *t, run_req_t *q, const uint64_t *sizes, int n, sweep_row_t *rows, baton_err_t *e) {
    for (int i = 0; i < n; i++) {
        run_out_t r;
        q->bytes = sizes[i];
        int rc = run_collective(t, q, &r, e);
        if (rc < 0) return rc;
        rows[i] = (sweep_row_t){.algo = r.algo, .proto = r.proto, .time_s = r.time_s, .busbw = r.busbw_GBps};
        engine_result_free(&r.eng);
    }
    return 0;
}

/* predict's table: each size's simulator check (run_check), its time kept
 * where beyond the band. */
static int sweep_check(const sim_args_t *a, topo_t *t, run_req_t *q, const uint64_t *sizes, int n, sweep_row_t *rows) {
    for (int i = 0; i < n; i++) {
        run_out_t r;
        run_check_t c;
        baton_err_t e = {0};
        q->bytes = sizes[i];
        if (run_collective(t, q, &r, &e) < 0) continue;        /* answered before: cannot fail now */
        int rc = predict_check(a, t, q, &r, &c);
        if (rc < 0) return rc;
        if (c.state == RUN_CHECK_DONE && c.beyond) rows[i].sim_s = c.sim_s;
        if (c.pick)
            rows[i].pick = c.pick, rows[i].pick_proto = c.pick_proto, rows[i].pick_s = c.pick_s;
    }
    return 0;
}

/* The sizes' rows, printed once all are known (an nccl-tests log with
 * --format nccl-tests). */
static int sweep_print(const topo_t *t, const run_req_t *q, int p, const uint64_t *sizes, int n, const sweep_row_t *rows,
                       int nccl) {
    coll_t coll = q->coll;
    if (nccl) {
        nt_log_t log = {.coll = coll, .ranks = p, .type = "float", .gpus_per_thread = q->gpus_per_thread,
                        .per_host = cmd_node_ranks(t), .rows = calloc((size_t)n + 1, sizeof *log.rows)};
        if (log.rows == NULL) return BATON_ENOMEM;
        nt_set_step(&log, sizes, n);
        for (int i = 0; i < n; i++) {      /* the simulator's time where predict says to quote it (sweep_check) */
            double us = (rows[i].pick ? rows[i].pick_s : rows[i].sim_s > 0 ? rows[i].sim_s : rows[i].time_s) * 1e6;
            log.rows[log.nrows++] = (nt_row_t){.bytes = sizes[i], .count = sizes[i] / 4, .oop_us = us, .ip_us = us};
        }
        (void)nt_write(&log, stdout);       /* a failed write: main.c's output_written says it */
        free(log.rows);
        return 0;
    }
    printf("%s on %s (%d ranks)\n%12s  %-18s %12s %12s\n", coll_name(coll), topo_name(t), p, "size", "algorithm", "time",
           "busbw");
    int simulated = 0, picked = 0;
    for (int i = 0; i < n; i++) {
        char sz[32], tm[32], name[48], st[32];
        units_fmt_size(sizes[i], sz, sizeof sz);
        units_fmt_time(rows[i].time_s, tm, sizeof tm);
        units_fmt_time(rows[i].sim_s, st, sizeof st);
        snprintf(name, sizeof name, "%s%s%s", rows[i].algo->name, rows[i].proto ? "/" : "",
                 rows[i].proto ? proto_name(rows[i].proto) : "");
        printf("%12s  %-18s %12s %7.2f GB/s", sz, name, tm, rows[i].busbw);
        if (rows[i].sim_s > 0) printf("   simulated %s", st), simulated = 1;
        if (rows[i].pick) {
            picked = 1;
            units_fmt_time(rows[i].pick_s, st, sizeof st);
            printf("; sim answers %s/%s in %s", rows[i].pick->name, proto_name(rows[i].pick_proto), st);
        }
        printf("\n");
    }
    if (simulated)
        printf("simulated: the simulator's time where the formula is approximate here and more than %.0f %% off it\n",
               100 * RUN_FORMULA_BAND);
    if (picked)
        printf("sim answers: the row `sim` answers with, simulating every row whose formula is within %.3gx of the\n"
               "           lowest: the time to quote\n", NCCL_SLACK);
    folded_note(t);
    return 0;
}

/* --sizes: one row a size, from the folded cluster where it can answer
 * them all, else from the whole (*t is then the whole). */
static int sweep_sizes(const char *cmd, topo_t **t, run_req_t *q, const sim_args_t *a) {
    uint64_t *sizes;
    int n;
    const char *why;
    baton_err_t e = {0};
    if (select_parse_sizes(a->sizes, &sizes, &n, &why) < 0) return cmd_usage(cmd, "--sizes %s: %s", a->sizes, why);
    cmd_sizes_note(cmd, a->sizes, sizes, n);
    if (a->format && strcmp(a->format, "nccl-tests") == 0 && cmd_sizes_ascend(cmd, a->sizes, sizes, n)) {
        free(sizes);
        return EXIT_USAGE;
    }
    sweep_row_t *rows = calloc((size_t)n + 1, sizeof *rows);
    int rc = rows ? sweep_run(*t, q, sizes, n, rows, &e) : err_set(&e, BATON_ENOMEM, "out of memory");
    int whole = cmd_unfold(rc, t, a->topo, a->sets.v, a->sets.n, &e);     /* a size needs every rank */
    if (whole) rc = whole > 0 ? sweep_run(*t, q, sizes, n, rows, &e) : e.code;
    int nccl = a->format && strcmp(a->format, "nccl-tests") == 0;
    if (rc == 0 && q->predict && sweep_check(a, *t, q, sizes, n, rows) < 0)
        rc = err_set(&e, BATON_ENOMEM, "out of memory");
    int p = *t ? topo_whole_ranks(*t) : 0;
    if (rc == 0 && (rc = sweep_print(*t, q, p, sizes, n, rows, nccl)) < 0)
        err_set(&e, rc, "%s", rc == BATON_ENOMEM ? "out of memory" : "cannot write the log");
    free(rows);
    free(sizes);
    return rc < 0 ? cmd_fail(cmd, &e) : EXIT_OK;
}

int cmd_sim(int argc, char **argv, int predict) {
    const char *cmd = predict ? "predict" : "sim";
    sim_args_t a = {.algo = "auto", .proto = RUN_PROTO_AUTO, .fold = -1, .gpus_per_thread = 1};   /* the same defaults as every command */
    int rc = parse(argc, argv, cmd, &a, predict);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    int coll = coll_parse(a.coll);
    if (coll < 0) return cmd_usage(cmd, "unknown collective '%s'%s", a.coll, coll_hint(a.coll));
    uint64_t bytes = 0;
    const char *why;
    if (a.size && units_size(a.size, &bytes, &why) < 0) return cmd_usage(cmd, "bad size '%s': %s", a.size, why);
    if (a.size && bytes == 0) return cmd_usage(cmd, "-s %s: %s", a.size, SELECT_ZERO_WHY);
    baton_err_t e = {0};
    int fold = predict ? (a.fold >= 0 ? a.fold : CMD_FOLD_NODES) : 0;
    topo_t *t = cmd_load_topo_folded(a.topo, a.sets.v, a.sets.n, fold, &e);
    if (t == NULL) return cmd_fail(cmd, &e);
    if (topo_params_c(t)->plain && a.proto_given && a.proto == RUN_PROTO_AUTO)
        topo_params(t)->no_protocols = 0;                    /* asked for by name: NCCL's protocols */
    if (topo_params_c(t)->plain && !a.proto_given)
        fprintf(stderr, "baton %s: note: %s says no protocols:, arch: or gpu:, so plain alpha-beta "
                "(--proto none, %d channel%s unless --channels); --proto auto asks for NCCL's protocols\n",
                cmd, topo_name(t), topo_params_c(t)->channels, topo_params_c(t)->channels == 1 ? "" : "s");
    cmd_rule_t rule = {.algo = &a.algo, .algo_given = a.algo_given, .proto = &a.proto, .proto_given = a.proto_given,
                       .model = predict ? "closed" : "des", .contention = predict ? NULL : &a.contention,
                       .contention_given = a.contention_given,
                       .fair_ok = a.symmetric <= 0 && !a.store_forward,   /* fair sharing needs every rank, and not
                                                                               store and forward */
                       .keep = a.fitted_algo};
    a.off_rule = cmd_calibrated_rule(cmd, t, &rule);
    if (topo_whole_ranks(t) % a.gpus_per_thread) {           /* nccl-tests: ranks = processes x threads x -g */
        cmd_usage(cmd, "-g %d does not divide the %d ranks of %s", a.gpus_per_thread, topo_whole_ranks(t), topo_name(t));
        topo_free(t);
        return EXIT_USAGE;
    }
    if (a.sizes) {
        run_req_t sq = {.coll = (coll_t)coll, .algo = a.algo, .opts = a.opts, .predict = predict, .contention = (contention_t)a.contention,
                        .store_forward = a.store_forward, .proto = a.proto, .symmetric = a.symmetric,
                        .gpus_per_thread = a.gpus_per_thread};
        rc = sweep_sizes(cmd, &t, &sq, &a);
        topo_free(t);
        return rc;
    }
    if (a.dump) { rc = dump(cmd, t, (coll_t)coll, a.algo, bytes, &a.opts); topo_free(t); return rc; }
    if (a.html) {
        run_req_t hq = {.coll = (coll_t)coll, .algo = a.algo, .bytes = bytes, .opts = a.opts, .contention = (contention_t)a.contention,
                        .store_forward = a.store_forward, .proto = a.proto};
        lesson_out_t l;
        rc = lesson_run(t, &hq, &l, &e);
        topo_free(t);
        return rc < 0 ? cmd_fail(cmd, &e) : cmd_write_lesson(cmd, &l, a.html, a.states);
    }
    run_req_t q = {.coll = (coll_t)coll, .algo = a.algo, .bytes = bytes, .opts = a.opts,
                   .verify = a.verify, .predict = predict, .contention = (contention_t)a.contention,
                   .store_forward = a.store_forward, .proto = a.proto, .symmetric = a.symmetric,
                   .gpus_per_thread = a.gpus_per_thread, .jobs = par_jobs()};   /* a large run's protocols side by side */
    run_out_t r;
    rc = run_collective(t, &q, &r, &e);
    int whole = cmd_unfold(rc, &t, a.topo, a.sets.v, a.sets.n, &e);      /* a row needs every rank */
    if (whole < 0) return cmd_fail(cmd, &e);
    if (whole) rc = run_collective(t, &q, &r, &e);
    if (rc < 0) { topo_free(t); return cmd_fail(cmd, &e); }
    run_error_bars(t, &q, a.off_rule, &r);
    if ((a.trace || a.link_stats || (a.explain && !predict)) && (rc = observed(cmd, t, &q, &r, &a)) != 0) {
        engine_result_free(&r.eng);
        topo_free(t);
        return rc;
    }
    run_check_t check = {0};
    if (predict && predict_check(&a, t, &q, &r, &check) < 0) {
        topo_free(t);
        return cmd_fail(cmd, &(baton_err_t){BATON_ENOMEM, "out of memory"});
    }
    if (a.json) {
        run_parts_t parts;
        if (a.explain) run_parts(t, &r, &parts);
        char *s = report_run_json(&r, topo_name(t), (coll_t)coll, a.verify, a.explain ? &parts : NULL,
                                  predict ? &check : NULL);
        if (s == NULL) { topo_free(t); return cmd_fail(cmd, &(baton_err_t){BATON_ENOMEM, "out of memory"}); }
        puts(s);
        free(s);
    } else {
        summary(&r, t, (coll_t)coll, a.verify);
        if (predict) check_line(&r, &check);
        folded_note(t);
        if (a.explain) rc = cmd_sim_explain(cmd, t, &q, &r);
    }
    engine_result_free(&r.eng);
    topo_free(t);
    return rc ? rc : EXIT_OK;
}

