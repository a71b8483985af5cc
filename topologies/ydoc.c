/* ydoc.c - a YAML document held whole (ydoc.h). The only file that includes
 * <yaml.h>: libyaml's document API keeps every node's line and column, which
 * every error names. A ynode_t is libyaml's yaml_node_t seen from outside
 * (Y and N convert); the document is needed to follow a sequence's items
 * and a mapping's pairs, which libyaml stores as node ids. */
#include "ydoc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct ydoc { yaml_document_t doc; };

static yaml_node_t *Y(const ynode_t *n) { return (yaml_node_t *)n; }
static ynode_t *N(yaml_node_t *n) { return (ynode_t *)n; }

typedef struct ykey {
    const char *k;
    const yaml_node_t *n;
} ykey_t;

static int ykey_cmp(const void *a, const void *b) {
    const ykey_t *x = a, *y = b;
    int c = strcmp(x->k, y->k);
    if (c) return c;
    return (x->n->start_mark.index > y->n->start_mark.index) - (x->n->start_mark.index < y->n->start_mark.index);
}

/* A key twice in one mapping: YAML calls it an error, libyaml keeps both,
 * and which one a lookup then takes is an accident of the code that looks.
 * The second's place, naming the first's line (sorted, so a large mapping
 * costs n log n); 0 if none. */
static int duplicate_keys(ydoc_t *d, const char *path, baton_err_t *e) {
    int rc = 0;
    for (yaml_node_t *n = d->doc.nodes.start; n < d->doc.nodes.top && rc == 0; n++) {
        if (n->type != YAML_MAPPING_NODE) continue;
        size_t k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), m = 0;
        if (k < 2) continue;
        ykey_t *v = malloc(k * sizeof *v);
        if (v == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *key = yaml_document_get_node(&d->doc, p->key);
            if (key && key->type == YAML_SCALAR_NODE) v[m++] = (ykey_t){(const char *)key->data.scalar.value, key};
        }
        qsort(v, m, sizeof *v, ykey_cmp);
        for (size_t i = 1; i < m && rc == 0; i++)
            if (strcmp(v[i].k, v[i - 1].k) == 0)
                rc = err_set(e, BATON_EPARSE, "%s:%lu:%lu: '%s' again in this mapping (line %lu has it): say it once", path,
                             (unsigned long)v[i].n->start_mark.line + 1, (unsigned long)v[i].n->start_mark.column + 1,
                             v[i].k, (unsigned long)v[i - 1].n->start_mark.line + 1);
        free(v);
    }
    return rc;
}

/* Load a YAML file's document; 0 or an error naming the place. */
int ydoc_load(const char *path, ydoc_t **out, baton_err_t *e) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
    ydoc_t *d = calloc(1, sizeof *d);
    if (d == NULL) { fclose(f); return err_set(e, BATON_ENOMEM, "out of memory"); }
    yaml_parser_t parser;
    int rc = 0;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    errno = 0;
    if (!yaml_parser_load(&parser, &d->doc) && parser.error == YAML_READER_ERROR && ferror(f))
        rc = err_set(e, BATON_EIO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));   /* a directory */
    else if (parser.error != YAML_NO_ERROR)
        rc = err_set(e, BATON_EPARSE, "%s:%lu:%lu: YAML syntax error: %s", path,
                     (unsigned long)parser.problem_mark.line + 1, (unsigned long)parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "unknown");
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc < 0) { free(d); return rc; }   /* libyaml deleted what it had loaded */
    if ((rc = duplicate_keys(d, path, e)) < 0) { ydoc_free(d); return rc; }
    *out = d;
    return 0;
}

void ydoc_free(ydoc_t *d) {
    if (d == NULL) return;
    yaml_document_delete(&d->doc);
    free(d);
}

ynode_t *ydoc_root(ydoc_t *d) { return N(yaml_document_get_root_node(&d->doc)); }

const char *ydoc_scalar(const ynode_t *n) {
    return (n && Y(n)->type == YAML_SCALAR_NODE) ? (const char *)Y(n)->data.scalar.value : NULL;
}

int ydoc_is_map(const ynode_t *n) { return n && Y(n)->type == YAML_MAPPING_NODE; }
int ydoc_is_seq(const ynode_t *n) { return n && Y(n)->type == YAML_SEQUENCE_NODE; }

int ydoc_len(const ynode_t *n) {
    if (ydoc_is_seq(n)) return (int)(Y(n)->data.sequence.items.top - Y(n)->data.sequence.items.start);
    if (ydoc_is_map(n)) return (int)(Y(n)->data.mapping.pairs.top - Y(n)->data.mapping.pairs.start);
    return 0;
}

ynode_t *ydoc_item(ydoc_t *d, const ynode_t *s, int i) {
    return N(yaml_document_get_node(&d->doc, Y(s)->data.sequence.items.start[i]));
}

ynode_t *ydoc_key(ydoc_t *d, const ynode_t *m, int i) {
    return N(yaml_document_get_node(&d->doc, Y(m)->data.mapping.pairs.start[i].key));
}

ynode_t *ydoc_value(ydoc_t *d, const ynode_t *m, int i) {
    return N(yaml_document_get_node(&d->doc, Y(m)->data.mapping.pairs.start[i].value));
}

/* Look up key in mapping m; NULL if absent. */
ynode_t *ydoc_get(ydoc_t *d, const ynode_t *m, const char *key) {
    for (yaml_node_pair_t *p = Y(m)->data.mapping.pairs.start; p < Y(m)->data.mapping.pairs.top; p++) {
        const char *k = ydoc_scalar(N(yaml_document_get_node(&d->doc, p->key)));
        if (k && strcmp(k, key) == 0) return N(yaml_document_get_node(&d->doc, p->value));
    }
    return NULL;
}

unsigned long ydoc_line(const ynode_t *n) { return (unsigned long)Y(n)->start_mark.line + 1; }
unsigned long ydoc_col(const ynode_t *n) { return (unsigned long)Y(n)->start_mark.column + 1; }
