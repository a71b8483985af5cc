/* choice.c - the one choice of a collective for tp and step (choice.h). */
#include "choice.h"

#include <string.h>

int choice_covers(const char *algo, coll_t coll) {
    return algo == NULL || run_is_auto(algo) || algo_find(coll, algo) != NULL;
}

int choice_run(topo_t *t, coll_t coll, uint64_t bytes, const char *algo, int proto, contention_t contention, run_out_t *o,
               baton_err_t *e) {
    run_req_t q = {.coll = coll, .algo = algo ? algo : CHOICE_DEFAULT, .bytes = bytes, .proto = proto, .contention = contention};
    if (strcmp(q.algo, "auto") != 0) return run_collective(t, &q, o, e);   /* nccl chooses by simulating */
    q.predict = 1;                                          /* auto: choose by closed form ... */
    int rc = run_collective(t, &q, o, e);
    if (rc < 0) return rc;
    run_same_row(&q, o, 0, &q);                             /* the row, protocol and cut chosen */
    int picked = o->auto_picked, proto_auto = o->proto_auto;
    if ((rc = run_collective(t, &q, o, e)) < 0) return rc;   /* ... then simulate the choice */
    o->auto_picked = picked;
    o->proto_auto = proto_auto;
    return 0;
}
