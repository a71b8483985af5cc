/* suggest.c - the closest spelling among candidates (see suggest.h). */
#include "suggest.h"

#include <stdio.h>
#include <string.h>

/* Edit distance counting a swap of neighbours as one edit ("rign" is one
 * from "ring"): optimal string alignment, on words of at most 63 bytes. */
static int distance(const char *a, const char *b, int limit) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63 || la - lb > limit || lb - la > limit) return limit + 1;
    static int d[64][64];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *suggest_closest(const char *word, const char *const *cands) {
    int limit = strlen(word) >= 5 ? 2 : 1, best = limit + 1;
    const char *pick = NULL;
    for (int i = 0; cands[i]; i++) {
        int d = distance(word, cands[i], limit);
        if (d < best) { best = d; pick = cands[i]; }
    }
    return pick;
}

const char *suggest_hint(const char *word, const char *const *cands) {
    static char buf[128];
    const char *s = suggest_closest(word, cands);
    if (s == NULL) return "";
    snprintf(buf, sizeof buf, "; did you mean '%.80s'?", s);
    return buf;
}
