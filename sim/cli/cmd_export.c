/* cmd_export.c - `baton export --msccl`: a catalogue algorithm as MSCCL XML;
 * `baton export --chakra`: baton's small Chakra trace (sim/replay/chakra_gen.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../algorithms/msccl.h"
#include "../../models/proto.h"
#include "../../topologies/topo.h"
#include "../../topologies/units.h"
#include "../replay/chakra_gen.h"
#include "../answer/run.h"
#include "cmd.h"
#include "../../util/wfile.h"

static const char help[] =
    "usage: baton export --msccl -c COLLECTIVE -a ALGORITHM (-p RANKS | -t TOPOLOGY) [options]\n"
    "       baton export --chakra -c COLLECTIVE -s SIZE -p RANKS -o DIR [options]\n"
    "\n"
    "Write a catalogue algorithm's schedule as MSCCL XML (msccl-executor-nccl's\n"
    "<algo>/<gpu>/<tb>/<step> format, as RCCL loads it): a thread block per rank\n"
    "and channel, a step per op. What MSCCL cannot say (a thread block that changes\n"
    "peers, switches that reduce, rooted collectives) is refused with the reason.\n"
    "`baton sim -a msccl:FILE.xml` reads it back.\n"
    "\n"
    "options:\n"
    "  -p, --ranks N          GPUs (without -t)\n"
    "  -t, --topology FILE    take the ranks, rings and groups from this machine\n"
    "      --set K=V          the machine's parameters and values (repeatable; with -t)\n"
    "  -s, --size SIZE        the size the schedule is cut for (pipelined rows' chunks; default 1MiB)\n"
    "      --channels C       rings side by side\n"
    "      --pipeline K       chunks of a pipelined row\n"
    "      --group G          ranks per group (hierarchical rows)\n"
    "      --proto P          the protocol the file names: simple (default), ll, ll128\n"
    "  -o, --output FILE      write there (default: stdout)\n"
    "\n"
    "--chakra writes a small Chakra execution trace of a training step, a file\n"
    "DIR/NAME.RANK.et per rank: a host node, the forward pass (each rank SKEW\n"
    "later than the one before), the collective of SIZE, the backward pass, a\n"
    "send of SIZE/RANKS to the next rank and a receive from the previous one,\n"
    "the optimizer (half the compute). `baton replay` reads it.\n"
    "      --compute T        the forward and backward passes (default 100us)\n"
    "      --skew T           each rank's forward pass this much longer (default 10us)\n"
    "      --host T           the host node (default 5us)\n"
    "      --name NAME        the files' prefix (default baton)\n"
    "      --overlap          the send and receive right after the forward pass, so\n"
    "                         they run beside the collective (replay shares the machine)\n"
    "\n"
    "examples:\n"
    "  baton export --msccl -c allreduce -a ring -p 8 -o ring8.xml\n"
    "  baton export --chakra -c allreduce -s 1MB -p 4 -o trace/\n";

typedef struct ex_args {
    int msccl, chakra, ranks, proto, overlap;
    const char *coll, *algo, *topo, *out, *name;
    double compute_s, skew_s, host_s;
    uint64_t bytes;
    algo_opts_t opts;
    cmd_sets_t sets;
} ex_args_t;

static int parse(int argc, char **argv, ex_args_t *a) {
    static const struct option opts[] = {
        {"msccl", no_argument, 0, 'm'}, {"coll", required_argument, 0, 'c'}, {"algo", required_argument, 0, 'a'},
        {"ranks", required_argument, 0, 'p'}, {"topology", required_argument, 0, 't'}, {"size", required_argument, 0, 's'},
        {"channels", required_argument, 0, 'C'}, {"pipeline", required_argument, 0, 'K'}, {"group", required_argument, 0, 'G'},
        {"proto", required_argument, 0, 'P'}, {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"chakra", no_argument, 0, 'k'}, {"compute", required_argument, 0, '1'}, {"skew", required_argument, 0, '2'},
        {"host", required_argument, 0, '3'}, {"name", required_argument, 0, 'N'}, {"set", required_argument, 0, 'S'},
        {"overlap", no_argument, 0, 'O'}, {0, 0, 0, 0}};
    int ch, rc = 0;
    const char *why;
    opterr = 0;
    while (rc == 0 && (ch = getopt_long(argc, argv, ":c:a:p:t:s:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'm': a->msccl = 1; break;
        case 'k': a->chakra = 1; break;
        case 'O': a->overlap = 1; break;
        case 'N': a->name = optarg; break;
        case '1': case '2': case '3': {
            double *v = ch == '1' ? &a->compute_s : ch == '2' ? &a->skew_s : &a->host_s;
            if (units_time(optarg, v, &why) < 0 || *v < 0 || *v > 1e6)
                return cmd_usage("export", "%s '%s': a time from 0 to 1e6 s (100us, 1ms)",
                                 ch == '1' ? "--compute" : ch == '2' ? "--skew" : "--host", optarg);
            break;
        }
        case 'c': a->coll = optarg; break;
        case 'a': a->algo = optarg; break;
        case 't': a->topo = optarg; break;
        case 'S': rc = cmd_add_set("export", &a->sets, optarg); break;
        case 'o': if (cmd_out_file("export", "-o", optarg, &a->out)) return EXIT_USAGE; break;
        case 'p': rc = cmd_int_arg("export", "-p", optarg, 1, 4096, &a->ranks); break;
        case 'C': rc = cmd_int_arg("export", "--channels", optarg, 1, 64, &a->opts.channels); break;
        case 'K': rc = cmd_int_arg("export", "--pipeline", optarg, 1, 1 << 20, &a->opts.pipeline); break;
        case 'G': rc = cmd_int_arg("export", "--group", optarg, 1, 1 << 20, &a->opts.group); break;
        case 's':
            if (units_size(optarg, &a->bytes, &why) < 0) return cmd_usage("export", "-s '%s': %s", optarg, why);
            break;
        case 'P':
            if ((a->proto = proto_parse(optarg)) <= PROTO_NONE)
                return cmd_usage("export", "--proto '%s': MSCCL's protocols are simple, ll and ll128", optarg);
            break;
        case 'h': fputs(help, stdout); return -1;
        case ':': return cmd_usage("export", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc) return rc;
    if (optind < argc) return cmd_usage("export", "unexpected argument '%s'", argv[optind]);
    if (a->msccl + a->chakra != 1) return cmd_usage("export", "say the format: --msccl or --chakra (one)");
    if (a->overlap && !a->chakra) return cmd_usage("export", "--overlap is --chakra's (the trace's send beside its collective)");
    if (a->chakra) {
        if (!a->coll || !a->ranks || !a->out) return cmd_usage("export", "--chakra needs -c COLLECTIVE, -p RANKS and -o DIR");
        if (a->algo || a->topo || a->sets.n)
            return cmd_usage("export", "--chakra takes no -a, -t or --set: the trace says what runs, replay chooses how");
        return 0;
    }
    if (!a->coll || !a->algo) return cmd_usage("export", "-c COLLECTIVE and -a ALGORITHM are needed");
    if (!a->ranks && !a->topo) return cmd_usage("export", "-p RANKS or -t TOPOLOGY is needed");
    if (a->sets.n && !a->topo) return cmd_usage("export", "--set needs -t: the machine whose values it sets");
    return 0;
}

/* Chakra's CollectiveCommType for a collective's name. */
static int64_t chakra_type(coll_t c) {
    switch (c) {
    case COLL_REDUCE: return CHAKRA_REDUCE;
    case COLL_ALLGATHER: return CHAKRA_ALL_GATHER;
    case COLL_BROADCAST: return CHAKRA_BROADCAST;
    case COLL_ALLTOALL: return CHAKRA_ALL_TO_ALL;
    case COLL_REDUCE_SCATTER: return CHAKRA_REDUCE_SCATTER;
    default: return CHAKRA_ALL_REDUCE;
    }
}

/* DIR/NAME.RANK.et for every rank. */
static int export_chakra(const ex_args_t *a) {
    int coll = coll_parse(a->coll);
    if (coll < 0) return cmd_usage("export", "unknown collective '%s'%s", a->coll, coll_hint(a->coll));
    chakra_gen_t g = {.ranks = a->ranks, .comm_type = chakra_type((coll_t)coll), .bytes = a->bytes,
                      .compute_us = (uint64_t)llround(a->compute_s * 1e6), .skew_us = (uint64_t)llround(a->skew_s * 1e6),
                      .host_us = (uint64_t)llround(a->host_s * 1e6), .overlap = a->overlap};
    if (mkdir(a->out, 0777) < 0 && errno != EEXIST) {
        fprintf(stderr, "baton export: %s: cannot make the directory: %s\n", a->out, strerror(errno));
        return EXIT_INPUT;
    }
    baton_err_t e = {0};
    wfile_set_t files = {0};                       /* every rank's file, or none */
    int rc = 0;
    for (int r = 0; r < a->ranks && rc == 0; r++) {
        chakra_et_t et;
        char path[4096], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s.%d.et", a->out, a->name ? a->name : "baton", r);
        if ((rc = chakra_gen_rank(&g, r, &et, &e)) < 0) break;
        FILE *mem = open_memstream(&text, &len);
        if (mem == NULL || chakra_write(mem, &et) < 0) rc = err_set(&e, BATON_ENOMEM, "out of memory");
        if (mem) fclose(mem);
        if (rc == 0 && wfile_set_add(&files, path, text, len) < 0)
            rc = err_set(&e, BATON_EIO, "%s: cannot write: %s (no file of the trace written)", path,
                         errno == EEXIST ? "something not a regular file is there" : strerror(errno));
        free(text);
        chakra_free(&et);
    }
    if (rc == 0 && wfile_set_commit(&files) < 0) rc = err_set(&e, BATON_EIO, "%s: cannot write: %s", a->out, strerror(errno));
    wfile_set_free(&files);
    if (rc < 0) return cmd_fail("export", &e);
    const char *name = a->name ? a->name : "baton", *coll_name = chakra_coll_name(g.comm_type);
    printf("wrote %s/%s.{0..%d}.et: %s %s of %llu bytes on %d rank%s (baton replay -t MACHINE %s/%s.*.et)\n", a->out, name,
           a->ranks - 1, coll_name[0] == 'a' ? "an" : "a", coll_name, (unsigned long long)g.bytes, a->ranks,
           a->ranks == 1 ? "" : "s", a->out, name);
    return EXIT_OK;
}

int cmd_export(int argc, char **argv) {
    ex_args_t a = {.proto = PROTO_SIMPLE, .bytes = 1 << 20, .compute_s = 100e-6, .skew_s = 10e-6, .host_s = 5e-6};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    if (a.chakra) return export_chakra(&a);
    int coll = coll_parse(a.coll);
    if (coll < 0) return cmd_usage("export", "unknown collective '%s'%s", a.coll, coll_hint(a.coll));
    const algo_t *row = algo_find((coll_t)coll, a.algo);
    if (row == NULL) return cmd_usage("export", "no algorithm '%s' for %s%s", a.algo, a.coll, algo_hint((coll_t)coll, a.algo));
    baton_err_t e = {0};
    topo_t *t = NULL;
    if (a.topo) {
        if ((t = cmd_load_topo(a.topo, a.sets.v, a.sets.n, &e)) == NULL) return cmd_fail("export", &e);
        form_opts(t, &a.opts);
        if (a.ranks && a.ranks != topo_whole_ranks(t)) {
            topo_free(t);
            return cmd_usage("export", "-p %d, but the machine has %d ranks", a.ranks, topo_whole_ranks(t));
        }
        a.ranks = topo_whole_ranks(t);
    }
    sched_t s;
    algo_opts_t tmp;
    int most = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL) rc = err_set(&e, BATON_ENOMEM, "out of memory");
    else if ((rc = algo_build(row, a.ranks, a.bytes, algo_row_opts(row, &a.opts, &tmp), &s, &e)) == 0)
        rc = msccl_export(&s, proto_name((proto_t)a.proto), mem, &most, &e);
    if (mem) fclose(mem);
    if (rc == 0 && most > MSCCL_MAX_STEPS)          /* baton reads it back; MSCCL's executor would refuse it */
        fprintf(stderr, "baton export: warning: a threadblock of %d steps: MSCCL's executor takes at most %d "
                "(MSCCL_MAX_NUM_STEPS, msccl_struct.h) and would refuse this file; baton reads it back\n",
                most, MSCCL_MAX_STEPS);
    if (rc == 0 && a.out) rc = cmd_write_file(a.out, text, len, &e);
    else if (rc == 0) fwrite(text, 1, len, stdout);
    free(text);
    topo_free(t);
    return rc < 0 ? cmd_fail("export", &e) : EXIT_OK;
}
