/* report.c - JSON documents built with cJSON. */
#include "report.h"

#include <cjson/cJSON.h>

static const char *verify_name(verify_mode_t m) {
    return m == VERIFY_DATA ? "data" : m == VERIFY_SIGNATURE ? "signature" : "none";
}

static char *finish(cJSON *o) {
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

char *report_run_json(const run_out_t *r, const char *topo_name, coll_t coll, int verify_asked) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddStringToObject(o, "topology", topo_name);
    cJSON_AddStringToObject(o, "collective", coll_name(coll));
    cJSON_AddStringToObject(o, "algorithm", r->algo->name);
    if (r->auto_picked) cJSON_AddBoolToObject(o, "auto", 1);
    cJSON_AddStringToObject(o, "protocol", proto_name(r->proto));
    if (r->proto_auto) cJSON_AddBoolToObject(o, "protocol_auto", 1);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddStringToObject(o, "model", r->simulated ? "des" : "closed");
    cJSON_AddNumberToObject(o, "time_s", r->time_s);
    cJSON_AddNumberToObject(o, "algbw_GBps", r->algbw_GBps);
    cJSON_AddNumberToObject(o, "busbw_GBps", r->busbw_GBps);
    if (r->simulated) {
        static const char *const modes[] = {"fifo", "fair", "none"};
        cJSON_AddStringToObject(o, "contention", modes[r->contention]);
        cJSON_AddNumberToObject(o, "messages", (double)r->eng.messages);
        cJSON_AddNumberToObject(o, "max_rank_messages", (double)r->eng.max_rank_msgs);
        cJSON_AddNumberToObject(o, "events", (double)r->eng.events);
    } else {
        cJSON_AddNumberToObject(o, "alpha_s", r->model.alpha);
        cJSON_AddNumberToObject(o, "beta_s_per_byte", r->model.beta);
        cJSON_AddNumberToObject(o, "gamma_s_per_byte", r->model.gamma);
        cJSON_AddStringToObject(o, "cost", r->algo->cost_text);
    }
    cJSON_AddStringToObject(o, "port_model", r->model.ports == 1 ? "single-port" : "multi-port");
    if (verify_asked) {
        cJSON_AddBoolToObject(o, "verified", r->eng.verified);
        cJSON_AddStringToObject(o, "verify_mode", verify_name(r->verify_mode));
    }
    return finish(o);
}

char *report_algos_json(int coll_filter) {
    cJSON *a = cJSON_CreateArray();
    const algo_t *const *rows = algo_all();
    for (int i = 0; a && rows[i]; i++) {
        if (coll_filter >= 0 && (int)rows[i]->coll != coll_filter) continue;
        cJSON *o = cJSON_CreateObject();
        if (o == NULL) break;
        cJSON_AddStringToObject(o, "collective", coll_name(rows[i]->coll));
        cJSON_AddStringToObject(o, "algorithm", rows[i]->name);
        cJSON_AddStringToObject(o, "cost", rows[i]->cost_text);
        cJSON_AddStringToObject(o, "requires", rows[i]->requires);
        cJSON_AddStringToObject(o, "port_model", rows[i]->port_model);
        cJSON_AddStringToObject(o, "idea", rows[i]->idea);
        cJSON_AddItemToArray(a, o);
    }
    return finish(a);
}
