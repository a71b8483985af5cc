/* page.c - write the teaching page and the states a browser test checks.
 *
 * The page's CSS and script live in sim/teach/page/ as ordinary files; the build
 * turns them into the strings below (Makefile: page_assets.c), so they can be
 * read, linted and edited as what they are. */
#include "page.h"

#include <stdio.h>
#include <stdlib.h>

extern const char page_css[], page_js[];

/* Text in HTML: the five characters that could end or open markup. */
static void html_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* A JSON string that is also safe inside <script>: no '<' (so no </script>). */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c < 0x20 || c == '<') fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_u64s(FILE *f, const uint64_t *v, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    fputc(']', f);
}

static void json_names(FILE *f, const char *const *v, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        json_str(f, v[i]);
    }
    fputc(']', f);
}

/* One move: [sent, arrived, src, dst, reduce, [places], [values after]]. */
static void json_move(FILE *f, const tape_t *tp, const tape_move_t *m) {
    fprintf(f, "[%.17g,%.17g,%d,%d,%d,[", m->t0, m->t1, m->src, m->dst, m->reduce);
    for (uint32_t j = 0; j < m->n; j++) fprintf(f, "%s%u", j ? "," : "", tp->place[m->first + j]);
    fputs("],", f);
    json_u64s(f, tp->value + m->first, m->n);
    fputc(']', f);
}

static void json_tape(FILE *f, const tape_t *tp) {
    size_t cells = (size_t)tp->p * tp->width;
    fputs("{\"title\":", f);
    json_str(f, tp->title);
    fprintf(f, ",\"coll\":\"%s\",\"time\":%.17g,\"p\":%d,\"rows\":%d,\"width\":%llu,\n\"start\":", coll_name(tp->coll),
            tp->time_s, tp->p, tp->rows, (unsigned long long)tp->width);
    json_u64s(f, tp->start, (size_t)tp->rows * tp->width);
    fputs(",\"want\":", f);
    json_u64s(f, tp->want, cells);
    fputs(",\"fixed\":[", f);
    for (size_t i = 0; i < cells; i++) fprintf(f, "%s%d", i ? "," : "", tp->fixed[i]);
    fputs("],\n\"steps\":[", f);
    for (int k = 0; k < tp->nsteps; k++)
        fprintf(f, "%s[%.17g,%d,%d]", k ? "," : "", tp->steps[k].t, tp->steps[k].first, tp->steps[k].n);
    fputs("],\n\"moves\":[", f);
    for (int i = 0; i < tp->nmoves; i++) {
        fputs(i ? ",\n" : "", f);
        json_move(f, tp, &tp->moves[i]);
    }
    fputs("]}", f);
}

static void json_player(FILE *f, const page_player_t *pl) {
    fputs("{\"title\":", f);
    json_str(f, pl->title);
    fputs(",\"text\":", f);
    json_str(f, pl->text);
    fputs(",\"cols\":", f);
    json_names(f, pl->cols, pl->cols ? pl->ncols : 0);
    fprintf(f, ",\"pick\":%d,\"chosen\":%d,\"contract\":%d,\"tapes\":[\n", pl->pick, pl->chosen, pl->contract);
    for (int i = 0; i < pl->ntapes; i++) {
        fputs(i ? ",\n" : "", f);
        json_tape(f, pl->tapes[i]);
    }
    fputs("]}", f);
}

/* Do all runs of the page read with a digit place per rank? */
static int digits(const page_t *pg) {
    for (int i = 0; i < pg->nplayers; i++)
        for (int j = 0; j < pg->players[i].ntapes; j++)
            if (pg->players[i].tapes[j]->p > TAPE_DIGITS) return 0;
    return 1;
}

static void json_page(FILE *f, const page_t *pg) {
    fputs("{\"names\":", f);
    json_names(f, pg->names, pg->nnames);
    fprintf(f, ",\"candy\":%d,\"digits\":%d,\"scale\":%.17g,\"unit\":", pg->candy, digits(pg), pg->scale);
    json_str(f, pg->unit);
    fputs(",\"players\":[\n", f);
    for (int i = 0; i < pg->nplayers; i++) {
        fputs(i ? ",\n" : "", f);
        json_player(f, &pg->players[i]);
    }
    fputs("]}", f);
}

/* The page's frame: no network (the policy allows inline style and script
 * and nothing else), an arrowhead the diagrams share, the text at the end. */
char *page_html(const page_t *pg) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>", f);
    html_text(f, pg->title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", page_css);
    html_text(f, pg->title);
    fputs(pg->intro_fixed ? "</h1>\n<pre class=\"intro\">" : "</h1>\n<p class=\"intro\">", f);
    html_text(f, pg->intro);
    fputs(pg->intro_fixed ? "</pre>\n" : "</p>\n", f);
    fputs("<noscript><p>The players need scripts; the same story is told as text below.</p></noscript>\n"
          "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
          "<marker id=\"baton-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
          "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1a1a1a\"/></marker>"
          "<marker id=\"baton-flying\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
          "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#b0b0b0\"/></marker></defs></svg>\n"
          "<main id=\"players\"></main>\n<section class=\"text\">\n<h2>The same, as text</h2>\n<pre>", f);
    html_text(f, pg->text);
    fputs("</pre>\n</section>\n<script type=\"application/json\" id=\"baton-data\">\n", f);
    json_page(f, pg);
    fprintf(f, "\n</script>\n<script>\n%s</script>\n</body>\n</html>\n", page_js);
    return fclose(f) == 0 ? buf : (free(buf), NULL);
}

static void states_tape(FILE *f, const tape_t *tp) {
    fputs("{\"title\":", f);
    json_str(f, tp->title);
    fputs(",\"times\":[", f);
    for (int k = 0; k < tp->nsteps; k++) fprintf(f, "%s%.17g", k ? "," : "", tp->steps[k].t);
    fputs("],\n\"buffers\":[", f);
    for (int k = 0; k <= tp->nsteps; k++) {
        fputs(k ? ",\n[" : "[", f);
        for (int r = 0; r < tp->rows; r++) {
            if (r) fputc(',', f);
            json_u64s(f, tape_row(tp, k, r), tp->width);
        }
        fputc(']', f);
    }
    fputs("],\n\"load\":[", f);
    for (int r = 0; r < tp->rows; r++) {
        uint64_t said, heard;
        tape_load(tp, r, &said, &heard);
        fprintf(f, "%s[%llu,%llu]", r ? "," : "", (unsigned long long)said, (unsigned long long)heard);
    }
    fputs("]}", f);
}

char *page_states(const page_t *pg) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fputs("{\"players\":[\n", f);
    for (int i = 0; i < pg->nplayers; i++) {
        fprintf(f, "%s{\"pick\":%d,\"chosen\":%d,\"tapes\":[\n", i ? ",\n" : "", pg->players[i].pick,
                pg->players[i].chosen);
        for (int j = 0; j < pg->players[i].ntapes; j++) {
            fputs(j ? ",\n" : "", f);
            states_tape(f, pg->players[i].tapes[j]);
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
    return fclose(f) == 0 ? buf : (free(buf), NULL);
}
