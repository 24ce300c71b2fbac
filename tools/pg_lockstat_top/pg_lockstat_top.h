/*-------------------------------------------------------------------------
 *
 * pg_lockstat_top.h
 *	  Shared declarations of pg_lockstat_top's files
 *
 * The program is split by concern:
 *
 *	pg_lockstat_top.c	main loop: baseline, one report per interval,
 *						reconnection, and what the keys and a window size
 *						change do
 *	output.c			the screen, --batch, CSV, events
 *	render.c			the report as text
 *	layout.c			the lines of the screen each section gets
 *	legend.c			the legend of the columns and keys (the "?" key)
 *	rates.c				rates between two samples
 *	busy.c				the busy share and ceiling of a tranche over an
 *						interval
 *	order.c				the order of a report's rows
 *	sample.c			the query of one sample, driven by a table of the
 *						views it reads, and finding the extension
 *	texts.c				the query texts from pg_stat_statements, and the
 *						labels of the query and blocker rows
 *	rows.c				the readers of the views' rows, their order and
 *						keys, freeing a sample
 *	connect.c			the connection, setup errors, the notes for the
 *						main loop
 *	columns.c			the counters shown, from the extension's counter
 *						table (extension/lockstat_counters.h, compiled in)
 *	terminal.c			terminal modes, signals, the wait (which returns
 *						the key or signal that ended it), the exit after a
 *						setup failure
 *	options.c			command line, --help, the option variables
 *
 * Each file calls only files below it in this list: the wait returns
 * events to the main loop rather than redrawing, and sample.c and texts.c
 * queue their notes for the main loop to show; t/070 checks it.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/pg_lockstat_top.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_LOCKSTAT_TOP_H
#define PG_LOCKSTAT_TOP_H

#include <signal.h>

#include "fe_utils/connect_utils.h"
#include "libpq-fe.h"
#include "pqexpbuffer.h"

#define PG_LOCKSTAT_TOP_VERSION "1.0"

/* exit codes, as documented in --help and doc/pg_lockstat_top.md */
#define EXIT_OK			0
#define EXIT_USAGE		1
#define EXIT_SETUP		2

/* shortest and longest -i */
#define MIN_INTERVAL	0.1
#define MAX_INTERVAL	86400.0

/* sort keys of the tranche table (-s, and the keys b w s a) */
typedef enum SortKey
{
	SORT_BLOCKS,
	SORT_WAIT,
	SORT_SPIN_DELAYS,
	SORT_ACQUIRES,
} SortKey;

/* how the reports are written */
typedef enum OutputMode
{
	OUTPUT_SCREEN,				/* full-screen refresh on a terminal */
	OUTPUT_BATCH,				/* plain lines */
	OUTPUT_CSV,					/* CSV rows */
} OutputMode;

/*
 * The counters of extension/lockstat_counters.h that this program shows
 * (columns.c): those whose EXPORT() gives a top_name.  Counters with the
 * same top_name are one value, their sum, which the sample's query selects
 * under that name; values with the same top_label are one column, their
 * sum, on the screen.  A column is a rate per second, except those of the
 * section of sampled holds, which reads the values HOLD_SAMPLES and
 * HOLD_TIME.  MAX_TOP_VALUES, the number of lines of the table, bounds the
 * values and columns of each kind.
 */
enum
{
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	COUNTER_LINE_LWLOCK_##symbol,
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	COUNTER_LINE_SPIN_##field,
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
#undef LOCKSTAT_SPIN_COUNTER
	MAX_TOP_VALUES
};

typedef enum CounterKind
{
	COUNTERS_NONE,				/* a view without counters of the table */
	COUNTERS_LWLOCK,			/* the tranches: LOCKSTAT_LWLOCK_COUNTER */
	COUNTERS_SPIN,				/* the call sites: LOCKSTAT_SPIN_COUNTER */
} CounterKind;

#define HOLD_SAMPLES	"hold_samples"
#define HOLD_TIME		"hold_time"

/*
 * the other values that this program names: those of the shares and the
 * sort keys of the tranches (the column of ACQUIRES is the acquisitions),
 * the exclusive acquisitions of the busy share, and those that order the
 * call sites
 */
#define ACQUIRES		"sh_acquires"
#define EX_ACQUIRES		"ex_acquires"
#define BLOCKS			"blocks"
#define SPIN_DELAYS		"spin_delays"
#define WAIT_TIME		"wait_time"
#define SITE_DELAYS		"delays"
#define SITE_SPINS		"spins"

/* one value: a top_name */
typedef struct TopValue
{
	const char *name;			/* top_name, the name the query selects */
	bool		in_ms;			/* milliseconds (unit NS_AS_MS), else a count */
	int			column;			/* its column in the set */
} TopValue;

/* one column: a top_label */
typedef struct TopColumn
{
	const char *label;			/* top_label, its heading */
	bool		in_ms;			/* its values are milliseconds */
	bool		held;			/* shown by the section of sampled holds */
	int			width;			/* of a rate column on the screen */
	const char *csv_name;		/* of a rate column in the CSV output */
} TopColumn;

/* the values and columns of one kind of counters */
typedef struct CounterSet
{
	int			nvalues;
	TopValue	values[MAX_TOP_VALUES];
	int			ncolumns;
	TopColumn	columns[MAX_TOP_VALUES];
} CounterSet;

/* one row of pg_lwlock_stats */
typedef struct TrancheCounters
{
	int			id;				/* tranche_id; -1 for the overflow row */
	char	   *name;
	double		values[MAX_TOP_VALUES]; /* of counter_set(COUNTERS_LWLOCK) */
	/* pg_lwlock_utilization's exclusive row, or all 0 if it has none */
	double		ex_util_acquires;	/* its acquires */
	double		ex_util_samples;	/* its samples */
	double		ex_util_est_ms; /* its est_hold_time */
} TrancheCounters;

/* one row of pg_spinlock_stats, in extension versions that have it */
typedef struct SiteCounters
{
	char	   *site;			/* "file:line function" */
	double		values[MAX_TOP_VALUES]; /* of counter_set(COUNTERS_SPIN) */
} SiteCounters;

/*
 * one row of pg_lwlock_query_stats, in extension versions that have it:
 * blocked calls of one (queryid, dbid, userid, backend_type) key in one
 * tranche; NULLs are 0 and ""
 */
typedef struct QueryCounters
{
	int64		queryid;		/* 0: none */
	unsigned int dbid;
	unsigned int userid;
	char	   *backend_type;	/* "" for a query's row and the residual row */
	char	   *tranche;
	int64		blocks;
	double		wait_ms;
} QueryCounters;

/*
 * the key of one row of pg_lwlock_blockers: the tranche, the waiter (as in
 * QueryCounters), the holder whose release ended the wait and the root
 * holder at the head of its chain of wake-ups; NULLs are 0 and "", and a
 * mode of "" means that the holder (and so the root) is not known
 */
typedef struct BlockerKey
{
	char	   *tranche;
	int64		queryid;		/* the waiter's; 0: none */
	unsigned int dbid;
	unsigned int userid;
	char	   *backend_type;	/* "" for a query's row and the residual row */
	int64		holder_queryid; /* 0: none, or holder not known */
	char	   *holder_backend_type;	/* "" unless holder_queryid is 0 */
	char	   *holder_mode;	/* "exclusive", "shared" or "" */
	int64		root_queryid;	/* likewise for the root holder */
	char	   *root_backend_type;
	char	   *root_mode;
} BlockerKey;

/*
 * one row of pg_lwlock_blockers, in extension versions that have it: the
 * blocked calls of one key
 */
typedef struct BlockerCounters
{
	BlockerKey	key;			/* first, see compare_blocker_key() */
	int64		blocks;
	double		wait_ms;
} BlockerCounters;

/* everything read in one round trip */
typedef struct Sample
{
	double		epoch;			/* server clock_timestamp(), seconds */
	char	   *time_text;		/* the same, for the header line */
	char	   *time_csv;		/* the same, ISO 8601 with milliseconds */
	char	   *spin_strategy;
	char	   *stats_reset;	/* text, compared between samples */
	double		stats_reset_epoch;
	bool		have_xacts;		/* false if pg_stat_database gave NULL */
	int64		xacts;			/* commits + rollbacks of all databases */
	int			active;			/* active client backends but ours */
	int			ntranches;
	TrancheCounters *tranches;	/* sorted by id */
	bool		have_sites;		/* pg_spinlock_stats was read */
	int			nsites;
	SiteCounters *sites;		/* sorted by site */
	bool		have_queries;	/* pg_lwlock_query_stats was read */
	int			nqueries;
	QueryCounters *queries;		/* sorted by key, then tranche */
	bool		have_blockers;	/* pg_lwlock_blockers was read */
	int			nblockers;
	BlockerCounters *blockers;	/* sorted by key */
} Sample;

/* one tranche's activity over an interval */
typedef struct TrancheRate
{
	int			id;
	char	   *name;
	double		counts[MAX_TOP_VALUES]; /* each value's count in the interval */
	double		per_s[MAX_TOP_VALUES];	/* each rate column's sum, per second */
	double		blk_pct;		/* share of the interval's blocks, or -1 */
	double		spin_delay_pct; /* likewise for spin delays */
	double		mean_hold_us;	/* the sampled holds' mean in us, or -1 */
	double		held_ms_per_s;	/* estimated hold time per second: the mean
								 * hold times the acquisitions per second, or
								 * -1 */
	double		ex_est_hold_ms; /* the interval's estimated exclusive hold
								 * time, or -1: not known */
	double		busy_pct;		/* it in percent of the interval, or -1 */
	double		ceiling_tps;	/* tps / busy, or -1: not known or none */
} TrancheRate;

/* one spinlock call site's activity over an interval */
typedef struct SiteRate
{
	char	   *site;
	double		per_s[MAX_TOP_VALUES];	/* each column's sum, per second */
} SiteRate;

/* one key's blocked calls over an interval, summed over its tranches */
typedef struct QueryRate
{
	int64		queryid;		/* 0: none */
	unsigned int dbid;
	unsigned int userid;
	char	   *backend_type;	/* "" for a query's row and the residual row */
	char	   *top_tranche;	/* the tranche it waited on most */
	double		blocks_per_s;
	double		wait_ms_per_s;
	char	   *text;			/* what the row shows: query text or label */
} QueryRate;

/* one key's blocked calls under one holder and root over an interval */
typedef struct BlockerRate
{
	BlockerKey	key;			/* first, see compare_blocker_key() */
	double		blocks_per_s;
	double		wait_ms_per_s;
	char	   *waiter_text;	/* what the rows show (see label_blockers()), */
	char	   *holder_text;	/* or NULL before they are labelled */
	char	   *root_text;
} BlockerRate;

/* what is shown for one interval */
typedef struct Report
{
	char	   *time_text;
	char	   *time_csv;
	char	   *spin_strategy;
	double		interval;		/* seconds between the two samples */
	double		rate_interval;	/* seconds the rates are over */
	bool		reset;			/* counters were reset in the interval */
	bool		have_tps;
	double		tps;
	int			active;
	int			nrows;
	TrancheRate *rows;
	bool		have_sites;		/* the spinlock section is shown */
	int			nsites;
	SiteRate   *sites;
	bool		have_queries;	/* the query section is shown */
	int			nqueries;
	QueryRate  *queries;		/* keys that blocked in the interval */
	bool		have_blockers;	/* the blocker section is shown */
	int			nblockers;
	BlockerRate *blockers;		/* keys that blocked in the interval */
} Report;

/* options.c: the options, set once by parse_options (sort_key by keys too) */
extern const char *progname;
extern double interval_s;
extern int	report_count;
extern int	top_n;
extern SortKey sort_key;
extern OutputMode output_mode;
extern const char *const sort_key_names[];

extern void parse_options(int argc, char **argv, ConnParams *cparams);
extern int	top_rows(int nrows);

/* sample.c */
extern void open_sampling(const ConnParams *cparams, Sample *baseline);
extern bool reopen_sampling(Sample *baseline);
extern bool take_sample(Sample *sample, char **error);

/* texts.c */
extern void set_text_schema(const char *schema);
extern void label_queries(Report *report);
extern void label_blockers(Report *report);

/* connect.c */
extern void connect_or_exit(const ConnParams *cparams);
extern PGconn *sampling_conn(void);
extern void close_sampling(void);
extern const char *sampling_dbname(void);
extern bool connection_lost(void);
extern void check_setup_error(const PGresult *res);
extern const char *column_value(const PGresult *res, const char *name);
extern char *first_line(const char *msg);
extern void add_sampling_note(const char *fmt,...) pg_attribute_printf(1, 2);
extern char *next_sampling_note(void);

/* rows.c */
extern void read_status(const PGresult *res, Sample *sample);
extern void read_tranches(const PGresult *res, Sample *sample);
extern void read_utilization(const PGresult *res, Sample *sample);
extern void read_sites(const PGresult *res, Sample *sample);
extern void read_queries(const PGresult *res, Sample *sample);
extern void read_blockers(const PGresult *res, Sample *sample);
extern void free_sample(Sample *sample);
extern int	compare_tranche_id(const void *a, const void *b);
extern int	compare_site(const void *a, const void *b);
extern int	compare_query_key(const void *a, const void *b);
extern int	compare_query_row(const void *a, const void *b);
extern int	compare_blocker_key(const void *a, const void *b);
extern void copy_blocker_key(BlockerKey *dst, const BlockerKey *src);
extern void free_blocker_key(BlockerKey *key);

/* columns.c */
extern const CounterSet *counter_set(CounterKind kind);
extern int	counter_value(CounterKind kind, const char *name);
extern int	counter_column(CounterKind kind, const char *name);
extern void append_counter_select(PQExpBuffer sql, CounterKind kind);

/* rates.c */
extern bool make_report(const Sample *prev, const Sample *cur,
						Report *report);
extern void free_report(Report *report);

/* busy.c */
extern void make_busy(const TrancheCounters *cur, const TrancheCounters *prev,
					  const Report *report, TrancheRate *r);

/* order.c */
extern void sort_report(Report *report);
extern double column_rate(const TrancheRate *r, const char *name);

/* output.c */
extern void show_report(const Report *report);
extern void show_screen(const Report *report);
extern void toggle_legend(void);
extern void hide_legend(void);
extern void note_event(const char *fmt,...) pg_attribute_printf(1, 2);
extern void clear_event(void);

/* render.c */
extern void render_report(const Report *report, PQExpBuffer out,
						  int max_lines);

/* layout.c */

/* the sections of a report, in their order on the screen */
typedef enum ReportSection
{
	SECTION_TRANCHES,
	SECTION_HOLDS,
	SECTION_QUERIES,
	SECTION_BLOCKERS,
	SECTION_SITES,
} ReportSection;

#define NUM_SECTIONS	(SECTION_SITES + 1)

/* what a section has to show, and how much of it fits */
typedef struct SectionSize
{
	int			rows;			/* its rows (the top -t); -1: not shown */
	int			row_lines;		/* lines each row takes */
	int			shown;			/* rows shown, set by fit_sections() */
} SectionSize;

extern void fit_sections(SectionSize *sections, int nsections, int lines);

/* legend.c */
extern void render_legend(PQExpBuffer out, int width);

/* terminal.c */

/* what ended a wait_until() */
typedef enum WaitEvent
{
	WAIT_DEADLINE,				/* the deadline passed */
	WAIT_STOP,					/* a stop signal or "q" */
	WAIT_RESIZE,				/* the window changed: redraw */
	WAIT_SORT_KEY,				/* a sort key was typed: re-sort, redraw */
	WAIT_LEGEND,				/* "?" was typed: show or hide the legend */
} WaitEvent;

extern volatile sig_atomic_t got_stop_signal;
extern void terminal_enter(void);
extern void terminal_leave(void);
extern void setup_failure(const char *fmt,...) pg_attribute_printf(1, 2);
extern void terminal_size(int *rows, int *cols);
extern void install_signal_handlers(void);
extern WaitEvent wait_until(double deadline, SortKey *key);
extern double monotonic_seconds(void);


#endif							/* PG_LOCKSTAT_TOP_H */
