/* main.c - libbaton from a program of your own: the closed form's time of
 * a 1 GiB all-reduce on an HGX H100, with the ring and with what NCCL
 * would run (as `baton predict -t hgx-h100 -c allreduce -s 1GiB -a ring`
 * and `-a nccl`). Built against an installed prefix:
 *
 *   cc -o predict main.c $(pkg-config --cflags --libs baton)          # libbaton.so
 *   cc -o predict main.c $(pkg-config --cflags --libs baton-static)   # libbaton.a
 *
 * Usage: predict [MACHINE [SET...]]   (default hgx-h100; SET as --set, nodes=4) */
#include <stdio.h>

#include <baton.h>

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "hgx-h100";
    const char *const *sets = (const char *const *)(argv + 2);
    int nsets = argc > 2 ? argc - 2 : 0;
    baton_error err;
    baton_machine *m = baton_machine_load(name, sets, nsets, &err);
    if (m == NULL) {
        fprintf(stderr, "predict: %s\n", err.message);
        return 1;
    }
    printf("libbaton %s: allreduce of 1 GiB on %s (%d ranks), closed form\n", baton_version(), baton_machine_name(m),
           baton_machine_ranks(m));
    const char *algos[] = {"ring", "nccl"};
    for (int i = 0; i < 2; i++) {
        baton_call call = {.coll = "allreduce", .algo = algos[i], .bytes = 1ull << 30};
        baton_result r;
        if (baton_predict(m, &call, &r, &err) < 0) {
            fprintf(stderr, "predict: -a %s: %s\n", algos[i], err.message);
            baton_machine_free(m);
            return 1;
        }
        printf("-a %s: %s/%s time_s %.9g algbw_GBps %.9g busbw_GBps %.9g\n", algos[i], r.algo, r.proto, r.time_s,
               r.algbw_GBps, r.busbw_GBps);
    }
    baton_machine_free(m);
    return 0;
}
