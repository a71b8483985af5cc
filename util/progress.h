/* progress.h - one progress line on stderr while a long run works.
 *
 * A simulation of a large machine, or a selection table over many sizes,
 * can work for minutes; a person at a terminal should see that it moves,
 * how far it is and about how long is left. A script should see nothing:
 * the line is drawn only where stderr is a terminal and never beside
 * --json output (progress_wanted), and never on stdout, so what a command
 * prints is the same with or without it.
 *
 * One line per process, redrawn in place with \r and cleared at the end:
 *     baton: row 3/20, ring LL128 (2/3), 4.19 M of ~8.39 M messages (50 %), ~4 s left,
 *            12.6 M events, 1.23 ms simulated
 * (one line, cut at the terminal's width: what matters most comes first).
 * It appears once the command has run for PROGRESS_AFTER_S (a quick run
 * never shows one). The engine reports every ENGINE_TICK events, so its
 * hot loop pays one test per event, not a clock read. */
#ifndef BATON_PROGRESS_H
#define BATON_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

/* Seconds a command runs before the line appears (unless forced). */
#define PROGRESS_AFTER_S 2.0

/* Whether to draw: 0 never, 1 after PROGRESS_AFTER_S, 2 from the start
 * (forced). A pure function of what the command sees, so tests can ask it:
 * never with --json (json != 0) nor with BATON_NO_PROGRESS set to anything
 * but "" or "0" (no_env); forced with BATON_PROGRESS=1 (force_env), even
 * without a terminal (tests and curious users); else only where stderr is
 * a terminal (tty). */
int progress_wanted(int tty, int json, const char *no_env, const char *force_env);

/* Turn the line on for this process (mode as progress_wanted says; 0 does
 * nothing), drawn on out. */
void progress_begin(FILE *out, int mode);

/* Clear the line, if one may have been drawn, and turn it off. Before an
 * error message, so the message starts its own line. */
void progress_end(void);

/* Is the line on? Cheap: the engine asks it once a run. */
int progress_on(void);

/* Stop drawing in this process (a forked worker other than the first: one
 * line is drawn by one process). */
void progress_mute(void);

/* A worker drew on the line this process will clear at the end. */
void progress_touched(void);

/* The outer loop's position: item `done` of `total` (select's rows, sweep's
 * points; total 0: unknown, as a fit's trials), shown before the engine's
 * part; what NULL clears it. Redraws when due. */
void progress_stage(const char *what, long done, long total);

/* k more items of the current stage are done (a worker's view of the
 * items its siblings finished too, counted from the stage's `done`); par_map
 * says so. Nothing where the stage has no total (a fit's trials are not
 * its sizes). */
void progress_step(long k);

/* Which of n engine runs of one answer is running (k from 1): run_collective
 * times each protocol of --proto auto; label names it ("ring LL128"). The
 * time left counts the runs still to come as long as this one. Cleared by
 * progress_stage. */
void progress_run(const char *label, int k, int n);

/* The engine's position in its run: events handled, messages delivered of
 * about `total` (0: unknown), the simulated time reached, and the seconds
 * (progress_clock) since the run began. Redraws when due. */
void progress_engine(uint64_t events, uint64_t messages, double total, double sim_s, double wall_s);

/* A monotonic clock in seconds. */
double progress_clock(void);

/* The line as it would be drawn now, into buf (for the tests): its length. */
int progress_format(char *buf, size_t n);

#endif
