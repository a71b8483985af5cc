/* chakra.h - Chakra execution traces (MLCommons' ET format): one rank's file.
 *
 * A file NAME.RANK.et is a stream of protobuf messages, each preceded by
 * its length as a varint: a GlobalMetadata, then Nodes (chakra's
 * schema/protobuf/et_def.proto and src/third_party/utils/protolib.py
 * encodeMessage, read at mlcommons/chakra 21585d8f2d65603d791d2121e3d4632351120262).
 * chakra.c is the only file that knows the wire format, both ways: it reads
 * the fields replay uses and skips the rest, and writes what the generator
 * (chakra_gen.c) builds. docs/decisions/chakra.md says why by hand. */
#ifndef BATON_CHAKRA_H
#define BATON_CHAKRA_H

#include <stdint.h>
#include <stdio.h>

#include "../../util/err.h"

/* NodeType, as et_def.proto numbers it. */
enum {
    CHAKRA_INVALID = 0, CHAKRA_METADATA = 1, CHAKRA_MEM_LOAD = 2, CHAKRA_MEM_STORE = 3,
    CHAKRA_COMP = 4, CHAKRA_SEND = 5, CHAKRA_RECV = 6, CHAKRA_COLL = 7
};
/* CollectiveCommType, as et_def.proto numbers it. */
enum {
    CHAKRA_ALL_REDUCE = 0, CHAKRA_REDUCE = 1, CHAKRA_ALL_GATHER = 2, CHAKRA_GATHER = 3, CHAKRA_SCATTER = 4,
    CHAKRA_BROADCAST = 5, CHAKRA_ALL_TO_ALL = 6, CHAKRA_REDUCE_SCATTER = 7, CHAKRA_REDUCE_SCATTER_BLOCK = 8,
    CHAKRA_BARRIER = 9
};

/* Which attributes a node carried (chakra_node_t.has). */
enum { CHAKRA_HAS_TYPE = 1, CHAKRA_HAS_SIZE = 2, CHAKRA_HAS_SRC = 4, CHAKRA_HAS_DST = 8, CHAKRA_HAS_TAG = 16 };

#define CHAKRA_PG_LEN 64

typedef struct chakra_node {
    uint64_t id;
    char *name;                /* malloc'd, never NULL after a read */
    int type;                  /* CHAKRA_COMP, ... (other numbers kept as read) */
    uint64_t *deps;            /* ctrl_deps, then data_deps (malloc'd) */
    uint32_t nctrl, ndeps;
    uint64_t duration_us;      /* duration_micros */
    /* attributes (attr, by name): any integer encoding is taken */
    int64_t comm_type, comm_src, comm_dst, comm_tag;
    uint64_t comm_size;        /* bytes */
    int is_cpu_op;
    unsigned has;              /* CHAKRA_HAS_* */
    char pg[CHAKRA_PG_LEN];    /* pg_name, "" when none */
} chakra_node_t;

typedef struct chakra_et {
    char version[32];          /* GlobalMetadata.version */
    chakra_node_t *nodes;
    uint32_t n, cap;
} chakra_et_t;

/* Decode len bytes of a rank's file; errors name the file and the node:
 * "NAME: node 3: truncated (the length says 40 bytes, 12 are left)". */
int chakra_decode(const uint8_t *buf, size_t len, const char *name, chakra_et_t *out, baton_err_t *e);
/* Read and decode the file at path. */
int chakra_read(const char *path, chakra_et_t *out, baton_err_t *e);
/* Encode et (metadata, then its nodes) to f, as Chakra's own writers do:
 * proto3 (zero scalars left out), deps packed, comm_type and comm_size as
 * int64_val, comm_src, comm_dst and comm_tag as int32_val, is_cpu_op as
 * bool_val, pg_name as string_val (et_feeder_node.cpp reads them so).
 * 0, or -1 when f fails. */
int chakra_write(FILE *f, const chakra_et_t *et);
/* Append a node (copies name and deps); 0 or BATON_ENOMEM. */
int chakra_add(chakra_et_t *et, const chakra_node_t *n, baton_err_t *e);
void chakra_free(chakra_et_t *et);

/* "all-reduce", ... for a CollectiveCommType; NULL for numbers it has not. */
const char *chakra_coll_name(int64_t comm_type);
/* "COMP_NODE", ...; "node type N" for others (into buf). */
const char *chakra_type_name(int type, char *buf, int len);

#endif
