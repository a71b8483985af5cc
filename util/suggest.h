/* suggest.h - "did you mean ...?" for misspelt keys, collectives and
 * algorithms: the closest candidate by edit distance, if close enough. */
#ifndef BATON_SUGGEST_H
#define BATON_SUGGEST_H

/* The candidate nearest to word (edit distance at most 1 for short
 * words, 2 for words of 5 or more characters), the first on ties; NULL when
 * none is that close; a swap of two neighbours counts as one edit. cands
 * ends with NULL. */
const char *suggest_closest(const char *word, const char *const *cands);

/* "; did you mean 'x'?" for the closest candidate, or "" (a static buffer:
 * for composing one error message at a time). */
const char *suggest_hint(const char *word, const char *const *cands);

#endif
