/* msccl.h - MSCCL's XML algorithms, in and out.
 *
 * MSCCL (msccl-tools' MSCCLang, TACCL, ForestColl and RCCL all write it)
 * describes a collective as, per GPU, thread blocks (a send peer, a receive
 * peer, a channel) running steps in order:
 *
 *   <algo name nchunksperloop nchannels proto ngpus coll inplace>
 *     <gpu id i_chunks o_chunks s_chunks>
 *       <tb id send recv chan>
 *         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
 *
 * (attributes as msccl-executor-nccl's src/misc/msccl/msccl_parser.cc reads
 * them; msccl-tools' newer writer spells `s` as `step`: both are read).
 * A thread block is one of baton's streams (sched.h): stream (rank, tb id),
 * its messages to the peer's thread block on the same MSCCL channel; a
 * step's dependency on another thread block of its GPU is a message that
 * carries no data from that stream to this one (free: it never leaves the
 * GPU). docs/decisions/formats.md says what maps and what is refused. */
#ifndef BATON_MSCCL_H
#define BATON_MSCCL_H

#include <stdio.h>

#include "algo.h"

enum { MSCCL_NOP = 0, MSCCL_S, MSCCL_R, MSCCL_RCS, MSCCL_RRC, MSCCL_RRS, MSCCL_RRCS, MSCCL_CPY, MSCCL_RE,
       MSCCL_NTYPES };

typedef struct msccl_step {
    int type;                  /* MSCCL_* */
    char srcbuf, dstbuf;       /* 'i', 'o', 's' */
    int srcoff, dstoff, cnt;
    int depid, deps, hasdep;   /* the thread block and step this one waits for (-1: none) */
    int line;                  /* in the file, for errors */
} msccl_step_t;

typedef struct msccl_tb {
    int id, send, recv, chan, line;
    int nsteps;
    msccl_step_t *steps;
} msccl_tb_t;

typedef struct msccl_gpu {
    int id, i_chunks, o_chunks, s_chunks, line;
    int ntb;
    msccl_tb_t *tb;
} msccl_gpu_t;

typedef struct msccl_algo {
    char path[256];
    char name[128], proto[16], coll[32];
    int nchunksperloop, nchannels, ngpus, inplace, line;
    int blocks;                /* baton_blocks: all-reduce's buffer is that many blocks of
                                  equal chunk counts (baton's layout, sched.h; MSCCL ignores
                                  it), 0: not said */
    int ngpu;
    msccl_gpu_t *gpu;          /* in file order */
} msccl_algo_t;

/* Read an MSCCL XML file (msccl_xml.c, the one file that sees libexpat).
 * Errors name FILE:LINE and what is wrong. */
int msccl_xml_read(const char *path, msccl_algo_t *a, baton_err_t *e);
/* The same from text in memory (name: what errors call it). */
int msccl_xml_parse(const char *name, const char *text, size_t len, msccl_algo_t *a, baton_err_t *e);
void msccl_algo_free(msccl_algo_t *a);

/* A registry row for "msccl:FILE": read, checked and compiled once per
 * process (kept until exit); NULL and e set (FILE:LINE) if it cannot be. */
const algo_t *msccl_load(const char *spec, baton_err_t *e);
/* Read, check and compile FILE without keeping it (the fuzzer's entry). */
int msccl_check_file(const char *path, baton_err_t *e);
/* The row already loaded for name ("msccl:FILE") and coll, or NULL (what
 * algo_find asks once msccl_load has made a row: algo_find_made). */
const algo_t *msccl_find(coll_t coll, const char *name);
/* Is name an MSCCL reference ("msccl:...")? */
int msccl_is(const char *name);
/* The protocol a loaded row's file names (proto_t), or -1. */
int msccl_proto(const algo_t *a);

/* Write schedule s (built for some row) as MSCCL XML with protocol proto
 * ("Simple"); BATON_EUNSUP and why when the format cannot say it. *most
 * (if not NULL): the steps of its longest threadblock, which MSCCL's
 * executor bounds (MSCCL_MAX_NUM_STEPS). */
#define MSCCL_MAX_STEPS 256    /* msccl-executor-nccl, src/include/msccl/msccl_struct.h */
int msccl_export(const sched_t *s, const char *proto, FILE *out, int *most, baton_err_t *e);

#endif
