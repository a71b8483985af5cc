/* cmd_doctor.h - the machine loader that `baton doctor` and `baton expect`
 * give validate/doctor.h: -t NAME with the user's --set, then a cause's. */
#ifndef BATON_CMD_DOCTOR_H
#define BATON_CMD_DOCTOR_H

#include "../../validate/doctor.h"
#include "cmd.h"

typedef struct cmd_doc_loader {
    const char *name;
    const cmd_sets_t *sets;
} cmd_doc_loader_t;

/* doc_load_fn: ctx is a cmd_doc_loader_t. A cause's --set replaces the
 * user's of the same name. */
topo_t *cmd_doc_load(void *ctx, const char *const *sets, int nsets, baton_err_t *e);

int cmd_expect(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
