/* plot.h - a selection table as a PNG or SVG, drawn by gnuplot (an
 * external program; a clear error when it is not installed). */
#ifndef BATON_PLOT_H
#define BATON_PLOT_H

#include "select.h"

/* The gnuplot script (dir/plot.gp, writing dir/out.png) and one data file
 * per collective and algorithm that has points (size, time us, busbw GB/s),
 * each plotted under its own name: an algorithm that does not apply has no
 * file and no legend entry. 0 or -1. */
int plot_write_files(const char *dir, const select_table_t *tab);

/* Time and busbw against size, log-log, one line per algorithm, crossovers
 * marked, one pair of panels per collective. The picture appears whole at
 * `png` or not at all, in the format its name ends with (.png or .svg; any
 * other name is an error, not a PNG under another name). */
int plot_select(const select_table_t *tab, const char *png, baton_err_t *e);
/* The picture's format by its name's end: 1 .svg, 0 .png, -1 neither. */
int plot_format_of(const char *path);

#endif
