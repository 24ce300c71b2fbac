/*-------------------------------------------------------------------------
 *
 * pg_lockstat_top.c
 *	  Live LWLock contention rates from pg_lockstat, in the manner of top
 *
 * Every interval the program reads pg_lockstat_status, pg_lwlock_stats,
 * pg_stat_database and pg_stat_activity in one round trip ("a sample") and
 * shows the difference to the previous sample as rates per second: a
 * full-screen display on a terminal, blocks of plain lines with --batch, or
 * CSV rows with --csv.  The first sample after start-up or after a
 * reconnection is only a baseline.
 *
 * Time base: rates divide the counter differences by the time between the
 * two samples' clock_timestamp() on the server, which is read in the same
 * round trip as the counters, so that network delays do not distort the
 * rates.  The client's monotonic clock only schedules the samples.
 *
 * Resets: pg_lockstat_reset() moves pg_lockstat_status.stats_reset, and the
 * counters start again from zero.  The status is read before the counters, so
 * a reset that happens between the two reads is seen either as a counter
 * that went down or, in the next sample, as a moved stats_reset.  Either way
 * the interval is marked as reset and its values are the counts since the
 * reset; when stats_reset lies inside the interval, rates are over the time
 * since the reset.  No rate is ever negative.
 *
 * Spinlock call sites: from pg_lockstat 1.1 on, the view pg_spinlock_stats
 * (func, file, line, contended, spins, delays, wait_time, ...); when the
 * extension's schema has it, its rates are shown below the tranches, and if
 * it cannot be read it is left out with a note.
 *
 * Exit status: 0 after -n reports, "q", SIGINT or SIGTERM; 1 for bad
 * options; 2 when the server cannot be reached at start-up or pg_lockstat
 * cannot be read (extension missing, library not preloaded, permission
 * denied).  A connection lost later is retried at every interval.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/pg_lockstat_top.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/logging.h"
#include "common/string.h"
#include "fe_utils/connect_utils.h" /* enum trivalue only */
#include "getopt_long.h"
#include "libpq-fe.h"
#include "portability/instr_time.h"
#include "pqexpbuffer.h"

#define PG_LOCKSTAT_TOP_VERSION "1.1"

/* exit codes, as documented in --help and README */
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

static const char *const sort_key_names[] = {
	[SORT_BLOCKS] = "blocks",
	[SORT_WAIT] = "wait",
	[SORT_SPIN_DELAYS] = "spin_delays",
	[SORT_ACQUIRES] = "acquires",
};

/* how the reports are written */
typedef enum OutputMode
{
	OUTPUT_SCREEN,				/* full-screen refresh on a terminal */
	OUTPUT_BATCH,				/* plain lines */
	OUTPUT_CSV,					/* CSV rows */
} OutputMode;

/* one row of pg_lwlock_stats */
typedef struct TrancheCounters
{
	int			id;				/* tranche_id; -1 for the overflow row */
	char	   *name;
	int64		sh_acquires;
	int64		ex_acquires;
	int64		blocks;
	int64		spin_delays;
	double		wait_ms;
} TrancheCounters;

/* one row of pg_spinlock_stats, in extension versions that have it */
typedef struct SiteCounters
{
	char	   *site;			/* "file:line function" */
	int64		contended;
	int64		spins;
	int64		delays;
	double		wait_ms;
} SiteCounters;

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
	int			nsites;
	SiteCounters *sites;		/* sorted by site */
} Sample;

/* one tranche's activity over an interval */
typedef struct TrancheRate
{
	int			id;
	char	   *name;
	int64		sh_acquires;	/* counts in the interval */
	int64		ex_acquires;
	int64		blocks;
	int64		spin_delays;
	double		wait_ms;
	double		acquires_per_s; /* rates */
	double		blocks_per_s;
	double		spin_delays_per_s;
	double		wait_ms_per_s;
	double		blk_pct;		/* share of the interval's blocks, or -1 */
	double		spin_delay_pct; /* likewise for spin delays */
} TrancheRate;

/* one spinlock call site's activity over an interval */
typedef struct SiteRate
{
	char	   *site;
	double		contended_per_s;
	double		spins_per_s;
	double		delays_per_s;
	double		wait_ms_per_s;
} SiteRate;

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
	int			nsites;
	SiteRate   *sites;
} Report;

/* options */
static const char *progname;
static double interval_s = 1.0;
static int	report_count = 0;	/* 0: unlimited */
static int	top_n = 15;			/* 0: all */
static SortKey sort_key = SORT_BLOCKS;
static OutputMode output_mode;

/* the connection and what was found in its database */
static PGconn *conn;
static char *ext_schema;		/* quoted schema of the extension */
static bool have_spinlock_view;
static bool spinlock_view_failed = false;	/* not read again after an error */

/* terminal state */
static bool keys_enabled;		/* reading keys from a terminal on stdin */
static struct termios saved_termios;
static volatile sig_atomic_t terminal_active = false;

/* signals */
static volatile sig_atomic_t got_stop_signal = false;
static volatile sig_atomic_t got_winch = false;
static PGcancel *volatile cancel_handle = NULL;

/* state of the screen */
static char *status_line = NULL;	/* event shown on a terminal */
static bool csv_header_done = false;

static void usage(void);
static void parse_options(int argc, char **argv, const char **dbname,
						  const char **host, const char **port,
						  const char **user, enum trivalue *prompt);
static double parse_interval(const char *arg);
static int	parse_int(const char *arg, const char *what, int min);
static void connect_or_exit(const char *dbname, const char *host,
							const char *port, const char *user,
							enum trivalue prompt);
static void refresh_cancel_handle(void);
static void notice_processor(void *arg, const char *message);
static bool find_extension(void);
static void setup_failure(const char *fmt,...) pg_attribute_printf(1, 2);
static void check_setup_error(const PGresult *res);
static bool take_sample(Sample *sample, char **error);
static bool connection_lost(void);
static bool take_baseline(Sample *sample, char **error);
static void read_status(const PGresult *res, Sample *sample);
static void read_tranches(const PGresult *res, Sample *sample);
static void read_sites(const PGresult *res, Sample *sample);
static void free_sample(Sample *sample);
static int	compare_tranche_id(const void *a, const void *b);
static int	compare_site(const void *a, const void *b);
static bool make_report(const Sample *prev, const Sample *cur,
						Report *report);
static void make_site_rates(const Sample *prev, const Sample *cur,
							double seconds, Report *report);
static int	compare_site_rates(const void *a, const void *b);
static void sort_report(Report *report);
static int	compare_rates(const void *a, const void *b);
static void free_report(Report *report);
static void render_report(const Report *report, PQExpBuffer out,
						  int max_rows);
static void format_pct(char *buf, size_t len, double pct);
static void show_report(const Report *report);
static void show_screen(const Report *report);
static void write_csv(const Report *report);
static void write_csv_text(const char *text);
static void note_event(const char *fmt,...) pg_attribute_printf(1, 2);
static char *first_line(const char *msg);
static char *client_time(void);
static void terminal_enter(void);
static void terminal_leave(void);
static void terminal_leave_atexit(void);
static void handle_stop_signal(int signo);
static void handle_winch(int signo);
static void handle_tstp(int signo);
static void set_signal_handler(int signo, void (*handler) (int));
static void install_signal_handlers(void);
static void wait_until(double deadline, Report *report);
static double monotonic_seconds(void);


/*
 * usage
 *		Print --help.
 */
static void
usage(void)
{
	printf("%s shows LWLock contention from pg_lockstat live, as rates per second.\n\n",
		   progname);
	printf("Usage:\n");
	printf("  %s [OPTION]... [DBNAME]\n", progname);
	printf("\nOptions:\n");
	printf("  -i, --interval=SECONDS   seconds between samples (default 1, at least %.1f,\n"
		   "                           fractions allowed)\n", MIN_INTERVAL);
	printf("  -n, --count=COUNT        stop after COUNT reports (default: run until \"q\" or\n"
		   "                           Ctrl-C); the first sample is a baseline, so this\n"
		   "                           takes COUNT intervals\n");
	printf("  -t, --top=N              show the top N tranches (default 15, 0 for all)\n");
	printf("  -s, --sort=KEY           sort by blocks (default), wait, spin_delays or\n"
		   "                           acquires, all per second\n");
	printf("      --batch              plain lines per interval, even on a terminal\n");
	printf("      --csv                CSV rows per interval (implies --batch)\n");
	printf("  -V, --version            output version information, then exit\n");
	printf("  -?, --help               show this help, then exit\n");
	printf("\nConnection options:\n");
	printf("  -d, --dbname=DBNAME      database name, connection string or URI\n");
	printf("  -h, --host=HOSTNAME      database server host or socket directory\n");
	printf("  -p, --port=PORT          database server port\n");
	printf("  -U, --username=USERNAME  database user name\n");
	printf("  -w, --no-password        never prompt for password\n");
	printf("  -W, --password           force password prompt\n");
	printf("The PG* environment variables (PGHOST, PGDATABASE, ...) apply as in psql.\n");
	printf("\nKeys on a terminal:\n");
	printf("  b, w, s, a               sort by blocks, wait, spin delays, acquisitions\n");
	printf("  q                        quit (Ctrl-C too)\n");
	printf("\nThe role needs pg_read_all_stats (or superuser), and the database needs\n"
		   "CREATE EXTENSION pg_lockstat, on a server that preloads pg_lockstat.\n");
	printf("\nExit status: 0 when done, 1 for bad options, 2 when the server cannot be\n"
		   "reached at start-up or pg_lockstat cannot be read.  A connection lost later\n"
		   "is retried at every interval.\n");
}

/*
 * parse_options
 *		Read the command line into the option variables and the connection
 *		parameters.  Bad options end the program with EXIT_USAGE.
 */
static void
parse_options(int argc, char **argv, const char **dbname, const char **host,
			  const char **port, const char **user, enum trivalue *prompt)
{
	static struct option long_options[] = {
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"top", required_argument, NULL, 't'},
		{"sort", required_argument, NULL, 's'},
		{"batch", no_argument, NULL, 1},
		{"csv", no_argument, NULL, 2},
		{"dbname", required_argument, NULL, 'd'},
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"username", required_argument, NULL, 'U'},
		{"no-password", no_argument, NULL, 'w'},
		{"password", no_argument, NULL, 'W'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 3},
		{NULL, 0, NULL, 0}
	};
	bool		batch = false;
	bool		csv = false;
	int			c;
	int			optindex;

	if (argc > 1)
	{
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-?") == 0)
		{
			usage();
			exit(EXIT_OK);
		}
		if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		{
			puts("pg_lockstat_top (pg_lockstat) " PG_LOCKSTAT_TOP_VERSION);
			exit(EXIT_OK);
		}
	}

	while ((c = getopt_long(argc, argv, "d:h:i:n:p:s:t:U:VwW?",
							long_options, &optindex)) != -1)
	{
		switch (c)
		{
			case 'd':
				*dbname = optarg;
				break;
			case 'h':
				*host = optarg;
				break;
			case 'p':
				*port = optarg;
				break;
			case 'U':
				*user = optarg;
				break;
			case 'w':
				*prompt = TRI_NO;
				break;
			case 'W':
				*prompt = TRI_YES;
				break;
			case 'i':
				interval_s = parse_interval(optarg);
				break;
			case 'n':
				report_count = parse_int(optarg, "-n/--count", 1);
				break;
			case 't':
				top_n = parse_int(optarg, "-t/--top", 0);
				break;
			case 's':
				{
					int			k;

					for (k = 0; k < lengthof(sort_key_names); k++)
						if (strcmp(optarg, sort_key_names[k]) == 0)
							break;
					if (k == lengthof(sort_key_names))
					{
						pg_log_error("invalid sort key \"%s\": use blocks, wait, spin_delays or acquires",
									 optarg);
						pg_log_error_hint("Try \"%s --help\" for more information.", progname);
						exit(EXIT_USAGE);
					}
					sort_key = (SortKey) k;
				}
				break;
			case 1:
				batch = true;
				break;
			case 2:
				csv = true;
				break;
			case 'V':
				puts("pg_lockstat_top (pg_lockstat) " PG_LOCKSTAT_TOP_VERSION);
				exit(EXIT_OK);
			case 3:
				usage();
				exit(EXIT_OK);
			case '?':
				/* "-?" itself, or an option getopt_long complained about */
				if (optind <= argc && strcmp(argv[optind - 1], "-?") == 0)
				{
					usage();
					exit(EXIT_OK);
				}
				pg_log_error_hint("Try \"%s --help\" for more information.", progname);
				exit(EXIT_USAGE);
			default:
				pg_log_error_hint("Try \"%s --help\" for more information.", progname);
				exit(EXIT_USAGE);
		}
	}

	/* one optional non-option argument: the database, as psql takes it */
	if (optind < argc && *dbname == NULL)
		*dbname = argv[optind++];
	if (optind < argc)
	{
		pg_log_error("too many command-line arguments (first is \"%s\")",
					 argv[optind]);
		pg_log_error_hint("Try \"%s --help\" for more information.", progname);
		exit(EXIT_USAGE);
	}

	if (csv)
		output_mode = OUTPUT_CSV;
	else if (batch || !isatty(fileno(stdout)))
		output_mode = OUTPUT_BATCH;
	else
		output_mode = OUTPUT_SCREEN;
}

/*
 * parse_interval
 *		The argument of -i: seconds, fractions allowed, between MIN_INTERVAL
 *		and MAX_INTERVAL.
 */
static double
parse_interval(const char *arg)
{
	char	   *end;
	double		val;

	errno = 0;
	val = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || isnan(val) ||
		val < MIN_INTERVAL || val > MAX_INTERVAL)
	{
		pg_log_error("invalid interval \"%s\": must be a number of seconds from %.1f to %.0f",
					 arg, MIN_INTERVAL, MAX_INTERVAL);
		pg_log_error_hint("Try \"%s --help\" for more information.", progname);
		exit(EXIT_USAGE);
	}
	return val;
}

/*
 * parse_int
 *		An integer option argument of at least min.
 */
static int
parse_int(const char *arg, const char *what, int min)
{
	char	   *end;
	long		val;

	errno = 0;
	val = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || val < min || val > INT_MAX)
	{
		pg_log_error("invalid value \"%s\" for %s: must be an integer of at least %d",
					 arg, what, min);
		pg_log_error_hint("Try \"%s --help\" for more information.", progname);
		exit(EXIT_USAGE);
	}
	return (int) val;
}

/*
 * connect_or_exit
 *		Open the connection, asking for a password only if the server wants
 *		one and none was given (or always with -W).  Failure ends the program
 *		with EXIT_SETUP.
 */
static void
connect_or_exit(const char *dbname, const char *host, const char *port,
				const char *user, enum trivalue prompt)
{
	char	   *password = NULL;

	if (prompt == TRI_YES)
		password = simple_prompt("Password: ", false);

	for (;;)
	{
		const char *keywords[] = {"host", "port", "user", "password",
		"dbname", "fallback_application_name", NULL};
		const char *values[] = {host, port, user, password, dbname,
		progname, NULL};

		/* expand_dbname: dbname may be a connection string or URI */
		conn = PQconnectdbParams(keywords, values, true);
		if (conn == NULL)
		{
			pg_log_error("could not connect to the server: out of memory");
			exit(EXIT_SETUP);
		}
		if (PQstatus(conn) == CONNECTION_BAD &&
			PQconnectionNeedsPassword(conn) && password == NULL &&
			prompt != TRI_NO)
		{
			PQfinish(conn);
			password = simple_prompt("Password: ", false);
			continue;
		}
		break;
	}

	if (PQstatus(conn) == CONNECTION_BAD)
	{
		pg_log_error("%s", PQerrorMessage(conn));
		exit(EXIT_SETUP);
	}
	if (password)
		free(password);
	PQsetNoticeProcessor(conn, notice_processor, NULL);
	refresh_cancel_handle();
}

/*
 * notice_processor
 *		Server notices and warnings (such as pg_lockstat's warning about the
 *		overflow row) go to stderr, except on the screen, which they would
 *		garble.  PQreset keeps this processor.
 */
static void
notice_processor(void *arg, const char *message)
{
	if (output_mode != OUTPUT_SCREEN)
		fprintf(stderr, "%s: %s", progname, message);
}

/*
 * refresh_cancel_handle
 *		Make the signal handler's cancel object point at the current backend
 *		(after connecting and after every reconnection).
 */
static void
refresh_cancel_handle(void)
{
	PGcancel   *old = cancel_handle;

	cancel_handle = NULL;
	if (old)
		PQfreeCancel(old);
	cancel_handle = PQgetCancel(conn);
}

/*
 * setup_failure
 *		Leave the terminal, print one line saying what to do, and exit with
 *		EXIT_SETUP.
 */
static void
setup_failure(const char *fmt,...)
{
	va_list		ap;
	char		msg[1024];

	terminal_leave();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pg_log_error("%s", msg);
	exit(EXIT_SETUP);
}

/*
 * find_extension
 *		Find the schema of pg_lockstat in the connected database, and whether
 *		this version has the spinlock view.  Exits with EXIT_SETUP if the
 *		extension is not there.  Returns false if the connection failed.
 */
static bool
find_extension(void)
{
	PGresult   *res;

	res = PQexec(conn,
				 "SELECT n.nspname, e.extversion, "
				 "       pg_catalog.to_regclass(pg_catalog.format('%I.%I', n.nspname, 'pg_spinlock_stats')) IS NOT NULL "
				 "FROM pg_catalog.pg_extension e "
				 "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
				 "WHERE e.extname = 'pg_lockstat'");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		bool		lost = (PQstatus(conn) == CONNECTION_BAD);

		if (!lost)
			setup_failure("could not look up extension \"pg_lockstat\": %s",
						  first_line(PQerrorMessage(conn)));
		PQclear(res);
		return false;
	}
	if (PQntuples(res) == 0)
		setup_failure("extension \"pg_lockstat\" is not installed in database \"%s\": run CREATE EXTENSION pg_lockstat; in it as a superuser, or connect to a database that has it",
					  PQdb(conn));

	if (ext_schema)
		PQfreemem(ext_schema);
	ext_schema = PQescapeIdentifier(conn, PQgetvalue(res, 0, 0),
									strlen(PQgetvalue(res, 0, 0)));
	if (ext_schema == NULL)
		setup_failure("%s", first_line(PQerrorMessage(conn)));
	have_spinlock_view = (strcmp(PQgetvalue(res, 0, 2), "t") == 0 &&
						  !spinlock_view_failed);
	PQclear(res);
	return true;
}

/*
 * check_setup_error
 *		If a failed query says that pg_lockstat cannot be used here, say what
 *		to do and exit with EXIT_SETUP.  Other errors return.
 */
static void
check_setup_error(const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (sqlstate == NULL)
		return;
	if (strcmp(sqlstate, "55000") == 0)
		setup_failure("pg_lockstat is not loaded by the server: add pg_lockstat to shared_preload_libraries and restart the server");
	if (strcmp(sqlstate, "42501") == 0)
		setup_failure("role \"%s\" may not read the pg_lockstat views: GRANT pg_read_all_stats TO \"%s\"; as a superuser, or connect as a role that has it",
					  PQuser(conn), PQuser(conn));
	/* undefined table, function or schema: the extension was dropped */
	if (strcmp(sqlstate, "42P01") == 0 || strcmp(sqlstate, "42883") == 0 ||
		strcmp(sqlstate, "3F000") == 0)
		setup_failure("extension \"pg_lockstat\" is not installed in database \"%s\": run CREATE EXTENSION pg_lockstat; in it as a superuser, or connect to a database that has it",
					  PQdb(conn));
}

/*
 * take_sample
 *		Read one sample in one round trip.  On failure returns false with
 *		*error set to the first line of the message (malloc'd); the caller
 *		tells a lost connection by PQstatus.  Setup errors exit.
 */
static bool
take_sample(Sample *sample, char **error)
{
	PQExpBufferData sql;
	PGresult   *results[3] = {NULL, NULL, NULL};
	PGresult   *res;
	int			nresults = 0;
	int			nexpected = have_spinlock_view ? 3 : 2;
	bool		ok = true;
	int			i;

	memset(sample, 0, sizeof(Sample));
	*error = NULL;

	/*
	 * Status first, then the counters: see the file header for why this order
	 * makes every reset visible.
	 */
	initPQExpBuffer(&sql);
	appendPQExpBuffer(&sql,
					  "SELECT EXTRACT(epoch FROM t.now), "
					  "       pg_catalog.to_char(t.now, 'YYYY-MM-DD HH24:MI:SS'), "
					  "       pg_catalog.to_char(t.now, 'YYYY-MM-DD\"T\"HH24:MI:SS.MSOF'), "
					  "       s.spin_strategy, s.stats_reset, "
					  "       EXTRACT(epoch FROM s.stats_reset), "
					  "       (SELECT pg_catalog.sum(xact_commit + xact_rollback) "
					  "        FROM pg_catalog.pg_stat_database), "
					  "       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity "
					  "        WHERE state = 'active' AND backend_type = 'client backend' "
					  "          AND pid <> pg_catalog.pg_backend_pid()) "
					  "FROM %s.pg_lockstat_status s, "
					  "     pg_catalog.clock_timestamp() AS t(now);\n"
					  "SELECT COALESCE(tranche_id, -1), tranche, "
					  "       sh_acquires, ex_acquires, blocks, spin_delays, wait_time "
					  "FROM %s.pg_lwlock_stats;\n",
					  ext_schema, ext_schema);
	if (have_spinlock_view)
		appendPQExpBuffer(&sql,
						  "SELECT func, file, line, contended, spins, delays, wait_time "
						  "FROM %s.pg_spinlock_stats;\n",
						  ext_schema);

	if (!PQsendQuery(conn, sql.data))
	{
		*error = first_line(PQerrorMessage(conn));
		termPQExpBuffer(&sql);
		return false;
	}
	termPQExpBuffer(&sql);

	while ((res = PQgetResult(conn)) != NULL)
	{
		if (nresults < lengthof(results))
			results[nresults++] = res;
		else
			PQclear(res);
	}

	for (i = 0; i < nresults && ok; i++)
	{
		if (PQresultStatus(results[i]) != PGRES_TUPLES_OK)
		{
			*error = first_line(PQresultErrorMessage(results[i]));
			ok = false;
			if (PQstatus(conn) == CONNECTION_BAD)
				break;
			if (i == 2)
			{
				/*
				 * The spinlock view is not what this program expects (its
				 * columns are not settled yet): go on without it.
				 */
				have_spinlock_view = false;
				spinlock_view_failed = true;
				note_event("spinlock call sites not shown: %s", *error);
			}
			else
				check_setup_error(results[i]);
		}
	}
	if (ok && nresults != nexpected)
	{
		*error = first_line(nresults == 0 ? PQerrorMessage(conn) :
							"unexpected number of results");
		ok = false;
	}
	if (ok && PQntuples(results[0]) != 1)
	{
		*error = first_line("pg_lockstat_status returned no row");
		ok = false;
	}

	if (ok)
	{
		read_status(results[0], sample);
		read_tranches(results[1], sample);
		if (have_spinlock_view)
			read_sites(results[2], sample);
	}

	for (i = 0; i < nresults; i++)
		PQclear(results[i]);
	return ok;
}

/*
 * connection_lost
 *		Whether the connection is gone, after a failed sample.  When the
 *		server has closed the socket, a query can fail in the write while
 *		libpq still reports CONNECTION_OK, since it waits to read the server's
 *		last message; an empty query then settles it.
 */
static bool
connection_lost(void)
{
	PGresult   *res;

	if (PQstatus(conn) == CONNECTION_BAD)
		return true;
	res = PQexec(conn, "");
	PQclear(res);
	return PQstatus(conn) == CONNECTION_BAD;
}

/*
 * take_baseline
 *		take_sample, tried a second time if the first failed only because the
 *		spinlock view could not be read.
 */
static bool
take_baseline(Sample *sample, char **error)
{
	bool		had_view = have_spinlock_view;

	if (take_sample(sample, error))
		return true;
	if (had_view && !have_spinlock_view && PQstatus(conn) == CONNECTION_OK)
	{
		pg_free(*error);
		return take_sample(sample, error);
	}
	return false;
}

/*
 * read_status
 *		Fill the header fields of a sample from the status query.
 */
static void
read_status(const PGresult *res, Sample *sample)
{
	sample->epoch = strtod(PQgetvalue(res, 0, 0), NULL);
	sample->time_text = pg_strdup(PQgetvalue(res, 0, 1));
	sample->time_csv = pg_strdup(PQgetvalue(res, 0, 2));
	sample->spin_strategy = pg_strdup(PQgetvalue(res, 0, 3));
	sample->stats_reset = pg_strdup(PQgetvalue(res, 0, 4));
	sample->stats_reset_epoch = strtod(PQgetvalue(res, 0, 5), NULL);
	sample->have_xacts = !PQgetisnull(res, 0, 6);
	if (sample->have_xacts)
		sample->xacts = strtoi64(PQgetvalue(res, 0, 6), NULL, 10);
	sample->active = atoi(PQgetvalue(res, 0, 7));
}

/*
 * read_tranches
 *		Fill the tranche counters of a sample, sorted by tranche ID.
 */
static void
read_tranches(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			i;

	sample->ntranches = n;
	sample->tranches = pg_malloc0(sizeof(TrancheCounters) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		TrancheCounters *t = &sample->tranches[i];

		t->id = atoi(PQgetvalue(res, i, 0));
		t->name = pg_strdup(PQgetvalue(res, i, 1));
		t->sh_acquires = strtoi64(PQgetvalue(res, i, 2), NULL, 10);
		t->ex_acquires = strtoi64(PQgetvalue(res, i, 3), NULL, 10);
		t->blocks = strtoi64(PQgetvalue(res, i, 4), NULL, 10);
		t->spin_delays = strtoi64(PQgetvalue(res, i, 5), NULL, 10);
		t->wait_ms = strtod(PQgetvalue(res, i, 6), NULL);
	}
	qsort(sample->tranches, n, sizeof(TrancheCounters), compare_tranche_id);
}

/*
 * read_sites
 *		Fill the spinlock call-site counters of a sample, sorted by site.
 */
static void
read_sites(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			i;

	sample->nsites = n;
	sample->sites = pg_malloc0(sizeof(SiteCounters) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		SiteCounters *s = &sample->sites[i];

		s->site = psprintf("%s:%s %s", PQgetvalue(res, i, 1),
						   PQgetvalue(res, i, 2), PQgetvalue(res, i, 0));
		s->contended = strtoi64(PQgetvalue(res, i, 3), NULL, 10);
		s->spins = strtoi64(PQgetvalue(res, i, 4), NULL, 10);
		s->delays = strtoi64(PQgetvalue(res, i, 5), NULL, 10);
		s->wait_ms = strtod(PQgetvalue(res, i, 6), NULL);
	}
	qsort(sample->sites, n, sizeof(SiteCounters), compare_site);
}

/*
 * free_sample
 *		Release what a sample points to and clear it.
 */
static void
free_sample(Sample *sample)
{
	int			i;

	pg_free(sample->time_text);
	pg_free(sample->time_csv);
	pg_free(sample->spin_strategy);
	pg_free(sample->stats_reset);
	for (i = 0; i < sample->ntranches; i++)
		pg_free(sample->tranches[i].name);
	pg_free(sample->tranches);
	for (i = 0; i < sample->nsites; i++)
		pg_free(sample->sites[i].site);
	pg_free(sample->sites);
	memset(sample, 0, sizeof(Sample));
}

/*
 * compare_tranche_id
 *		qsort and bsearch order of TrancheCounters.
 */
static int
compare_tranche_id(const void *a, const void *b)
{
	int			ia = ((const TrancheCounters *) a)->id;
	int			ib = ((const TrancheCounters *) b)->id;

	return (ia > ib) - (ia < ib);
}

/*
 * compare_site
 *		qsort and bsearch order of SiteCounters.
 */
static int
compare_site(const void *a, const void *b)
{
	return strcmp(((const SiteCounters *) a)->site,
				  ((const SiteCounters *) b)->site);
}

/*
 * make_report
 *		The rates between two samples.  Returns false if the server clock did
 *		not move forward, in which case cur is only a new baseline.
 *
 * A tranche missing from prev had no activity then (the view omits such
 * rows): its previous counts are zero.  If stats_reset moved, or any counter
 * of any tranche went down (or a tranche disappeared), the interval is
 * marked as reset and every value is the count since the reset.
 */
static bool
make_report(const Sample *prev, const Sample *cur, Report *report)
{
	double		seconds = cur->epoch - prev->epoch;
	bool		reset;
	int64		total_blocks = 0;
	int64		total_spin_delays = 0;
	int			i;

	memset(report, 0, sizeof(Report));
	if (!(seconds > 0))
		return false;

	reset = (strcmp(prev->stats_reset, cur->stats_reset) != 0);
	for (i = 0; i < prev->ntranches && !reset; i++)
	{
		const TrancheCounters *p = &prev->tranches[i];
		const TrancheCounters *c;

		c = bsearch(p, cur->tranches, cur->ntranches,
					sizeof(TrancheCounters), compare_tranche_id);
		if (c == NULL ||
			c->sh_acquires < p->sh_acquires ||
			c->ex_acquires < p->ex_acquires ||
			c->blocks < p->blocks ||
			c->spin_delays < p->spin_delays ||
			c->wait_ms < p->wait_ms)
			reset = true;
	}

	report->time_text = pg_strdup(cur->time_text);
	report->time_csv = pg_strdup(cur->time_csv);
	report->spin_strategy = pg_strdup(cur->spin_strategy);
	report->interval = seconds;
	report->reset = reset;
	report->rate_interval = seconds;

	/*
	 * After a pg_lockstat_reset() inside the interval, the counts cover only
	 * the time since the reset.
	 */
	if (reset && strcmp(prev->stats_reset, cur->stats_reset) != 0)
	{
		double		since_reset = cur->epoch - cur->stats_reset_epoch;

		if (since_reset > 0 && since_reset < seconds)
			report->rate_interval = since_reset;
	}

	if (prev->have_xacts && cur->have_xacts && cur->xacts >= prev->xacts)
	{
		report->have_tps = true;
		report->tps = (cur->xacts - prev->xacts) / seconds;
	}
	report->active = cur->active;

	report->nrows = cur->ntranches;
	report->rows = pg_malloc0(sizeof(TrancheRate) * Max(cur->ntranches, 1));
	for (i = 0; i < cur->ntranches; i++)
	{
		const TrancheCounters *c = &cur->tranches[i];
		const TrancheCounters *p = NULL;
		TrancheRate *r = &report->rows[i];

		if (!reset)
			p = bsearch(c, prev->tranches, prev->ntranches,
						sizeof(TrancheCounters), compare_tranche_id);
		r->id = c->id;
		r->name = pg_strdup(c->name);
		r->sh_acquires = c->sh_acquires - (p ? p->sh_acquires : 0);
		r->ex_acquires = c->ex_acquires - (p ? p->ex_acquires : 0);
		r->blocks = c->blocks - (p ? p->blocks : 0);
		r->spin_delays = c->spin_delays - (p ? p->spin_delays : 0);
		r->wait_ms = c->wait_ms - (p ? p->wait_ms : 0);
		r->acquires_per_s = (r->sh_acquires + r->ex_acquires) / report->rate_interval;
		r->blocks_per_s = r->blocks / report->rate_interval;
		r->spin_delays_per_s = r->spin_delays / report->rate_interval;
		r->wait_ms_per_s = r->wait_ms / report->rate_interval;
		total_blocks += r->blocks;
		total_spin_delays += r->spin_delays;
	}
	for (i = 0; i < report->nrows; i++)
	{
		TrancheRate *r = &report->rows[i];

		r->blk_pct = total_blocks > 0 ?
			100.0 * r->blocks / total_blocks : -1;
		r->spin_delay_pct = total_spin_delays > 0 ?
			100.0 * r->spin_delays / total_spin_delays : -1;
	}

	make_site_rates(prev, cur, report->rate_interval, report);
	sort_report(report);
	return true;
}

/*
 * make_site_rates
 *		The spinlock call-site rates of a report, sorted by delays and spins
 *		per second.  As for tranches, any counter that went down makes every
 *		value the count since the reset.
 */
static void
make_site_rates(const Sample *prev, const Sample *cur, double seconds,
				Report *report)
{
	bool		reset = report->reset;
	int			i;

	for (i = 0; i < prev->nsites && !reset; i++)
	{
		const SiteCounters *p = &prev->sites[i];
		const SiteCounters *c;

		c = bsearch(p, cur->sites, cur->nsites, sizeof(SiteCounters),
					compare_site);
		if (c == NULL || c->contended < p->contended ||
			c->spins < p->spins || c->delays < p->delays ||
			c->wait_ms < p->wait_ms)
			reset = true;
	}

	report->nsites = cur->nsites;
	report->sites = pg_malloc0(sizeof(SiteRate) * Max(cur->nsites, 1));
	for (i = 0; i < cur->nsites; i++)
	{
		const SiteCounters *c = &cur->sites[i];
		const SiteCounters *p = NULL;
		SiteRate   *r = &report->sites[i];

		if (!reset)
			p = bsearch(c, prev->sites, prev->nsites, sizeof(SiteCounters),
						compare_site);
		r->site = pg_strdup(c->site);
		r->contended_per_s = (c->contended - (p ? p->contended : 0)) / seconds;
		r->spins_per_s = (c->spins - (p ? p->spins : 0)) / seconds;
		r->delays_per_s = (c->delays - (p ? p->delays : 0)) / seconds;
		r->wait_ms_per_s = (c->wait_ms - (p ? p->wait_ms : 0)) / seconds;
	}
}

/*
 * compare_site_rates
 *		qsort order of SiteRate: most delays, then most spins, first.
 */
static int
compare_site_rates(const void *a, const void *b)
{
	const SiteRate *ra = a;
	const SiteRate *rb = b;

	if (ra->delays_per_s != rb->delays_per_s)
		return ra->delays_per_s < rb->delays_per_s ? 1 : -1;
	if (ra->spins_per_s != rb->spins_per_s)
		return ra->spins_per_s < rb->spins_per_s ? 1 : -1;
	return strcmp(ra->site, rb->site);
}

/*
 * sort_report
 *		Order a report's rows by the current sort key.
 */
static void
sort_report(Report *report)
{
	qsort(report->rows, report->nrows, sizeof(TrancheRate), compare_rates);
	qsort(report->sites, report->nsites, sizeof(SiteRate),
		  compare_site_rates);
}

/*
 * compare_rates
 *		qsort order of TrancheRate: highest value of the sort key first, then
 *		most acquisitions, then by tranche ID.
 */
static int
compare_rates(const void *a, const void *b)
{
	const TrancheRate *ra = a;
	const TrancheRate *rb = b;
	double		va;
	double		vb;

	switch (sort_key)
	{
		case SORT_BLOCKS:
			va = ra->blocks_per_s;
			vb = rb->blocks_per_s;
			break;
		case SORT_WAIT:
			va = ra->wait_ms_per_s;
			vb = rb->wait_ms_per_s;
			break;
		case SORT_SPIN_DELAYS:
			va = ra->spin_delays_per_s;
			vb = rb->spin_delays_per_s;
			break;
		default:
			va = ra->acquires_per_s;
			vb = rb->acquires_per_s;
			break;
	}
	if (va != vb)
		return va < vb ? 1 : -1;
	if (ra->acquires_per_s != rb->acquires_per_s)
		return ra->acquires_per_s < rb->acquires_per_s ? 1 : -1;
	return (ra->id > rb->id) - (ra->id < rb->id);
}

/*
 * free_report
 *		Release what a report points to and clear it.
 */
static void
free_report(Report *report)
{
	int			i;

	pg_free(report->time_text);
	pg_free(report->time_csv);
	pg_free(report->spin_strategy);
	for (i = 0; i < report->nrows; i++)
		pg_free(report->rows[i].name);
	pg_free(report->rows);
	for (i = 0; i < report->nsites; i++)
		pg_free(report->sites[i].site);
	pg_free(report->sites);
	memset(report, 0, sizeof(Report));
}

/*
 * format_pct
 *		A share in percent, or "-" when the interval had none at all (as the
 *		view's NULL).
 */
static void
format_pct(char *buf, size_t len, double pct)
{
	if (pct < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", pct);
}

/*
 * render_report
 *		The text of a report, shared by the screen and --batch, in 80
 *		columns: the header line, a line if the counters were reset, the
 *		column names, at most max_rows tranches (0: no limit besides -t), then
 *		the spinlock call sites if the extension has them.  Tranche IDs are
 *		only in the CSV output; the names tell the tranches apart.
 */
static void
render_report(const Report *report, PQExpBuffer out, int max_rows)
{
	int			nrows = report->nrows;
	int			namewidth = 16;
	char		tps[32];
	int			i;

	if (top_n > 0 && nrows > top_n)
		nrows = top_n;
	if (max_rows > 0 && nrows > max_rows)
		nrows = max_rows;
	for (i = 0; i < nrows; i++)
		namewidth = Max(namewidth, (int) strlen(report->rows[i].name));

	if (report->have_tps)
		snprintf(tps, sizeof(tps), "%.1f", report->tps);
	else
		snprintf(tps, sizeof(tps), "-");
	appendPQExpBuffer(out,
					  "%s  strategy %s  interval %.2f s  tps %s  active %d\n",
					  report->time_text, report->spin_strategy,
					  report->interval, tps, report->active);
	if (report->reset && report->rate_interval < report->interval)
		appendPQExpBuffer(out,
						  "counters reset: rates over the %.2f s since the reset\n",
						  report->rate_interval);
	else if (report->reset)
		appendPQExpBufferStr(out,
							 "counters reset: counts since the reset, over the whole interval\n");

	appendPQExpBuffer(out, "%-*s %11s %9s %11s %9s %6s %11s\n",
					  namewidth, "Tranche", "Acq/s", "Blk/s",
					  "SpinDelay/s", "Wait ms/s", "Blk %", "SpinDelay %");
	for (i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];
		char		blk_pct[16];
		char		spin_pct[16];

		format_pct(blk_pct, sizeof(blk_pct), r->blk_pct);
		format_pct(spin_pct, sizeof(spin_pct), r->spin_delay_pct);
		appendPQExpBuffer(out, "%-*s %11.1f %9.1f %11.1f %9.2f %6s %11s\n",
						  namewidth, r->name, r->acquires_per_s,
						  r->blocks_per_s, r->spin_delays_per_s,
						  r->wait_ms_per_s, blk_pct, spin_pct);
	}
	if (report->nrows == 0)
		appendPQExpBufferStr(out, "(no LWLock activity since the last reset)\n");

	if (have_spinlock_view)
	{
		int			nsites = report->nsites;
		int			width = 34;
		int			shown = 0;

		if (top_n > 0 && nsites > top_n)
			nsites = top_n;

		/* the widest call site name sets the column, so that columns align */
		for (i = 0; i < nsites; i++)
			width = Max(width, (int) strlen(report->sites[i].site));

		appendPQExpBuffer(out, "%-*s %11s %9s %11s %9s\n",
						  width, "Spinlock call site", "Contended/s",
						  "Spins/s", "Delays/s", "Wait ms/s");
		for (i = 0; i < nsites; i++)
		{
			const SiteRate *s = &report->sites[i];

			/* sites idle during the interval say nothing */
			if (s->contended_per_s == 0 && s->spins_per_s == 0 &&
				s->delays_per_s == 0 && s->wait_ms_per_s == 0)
				continue;
			appendPQExpBuffer(out, "%-*s %11.1f %9.1f %11.1f %9.2f\n",
							  width, s->site, s->contended_per_s,
							  s->spins_per_s, s->delays_per_s,
							  s->wait_ms_per_s);
			shown++;
		}
		if (shown == 0)
			appendPQExpBufferStr(out, "(no contended spin waits in this interval)\n");
	}
}

/*
 * show_report
 *		Write a report in the output mode.
 */
static void
show_report(const Report *report)
{
	PQExpBufferData out;

	switch (output_mode)
	{
		case OUTPUT_SCREEN:
			show_screen(report);
			break;
		case OUTPUT_BATCH:
			initPQExpBuffer(&out);
			render_report(report, &out, 0);
			fputs(out.data, stdout);
			fputc('\n', stdout);
			fflush(stdout);
			termPQExpBuffer(&out);
			break;
		case OUTPUT_CSV:
			write_csv(report);
			break;
	}
}

/*
 * show_screen
 *		Redraw the terminal: a title line, the key and status line, then the
 *		report clipped to the window.  report may be NULL before the first
 *		interval has passed.
 */
static void
show_screen(const Report *report)
{
	struct winsize ws;
	int			rows = 24;
	int			cols = 80;
	PQExpBufferData body;
	PQExpBufferData screen;
	const char *line;
	int			nlines = 0;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
		ws.ws_col > 0)
	{
		rows = ws.ws_row;
		cols = ws.ws_col;
	}

	initPQExpBuffer(&body);
	appendPQExpBuffer(&body, "pg_lockstat_top %s on %s  sort: %s  (keys: b w s a, q)\n",
					  PG_LOCKSTAT_TOP_VERSION, PQdb(conn),
					  sort_key_names[sort_key]);
	appendPQExpBuffer(&body, "%s\n", status_line ? status_line : "");
	if (report)
		render_report(report, &body, rows - 6);
	else
		appendPQExpBuffer(&body, "waiting %.2f s for the first interval...\n",
						  interval_s);

	/* home, each line clipped and cleared to its end, then clear below */
	initPQExpBuffer(&screen);
	appendPQExpBufferStr(&screen, "\033[H");
	line = body.data;
	while (*line && nlines < rows)
	{
		const char *eol = strchr(line, '\n');
		int			len = eol ? (int) (eol - line) : (int) strlen(line);

		if (nlines > 0)
			appendPQExpBufferChar(&screen, '\n');
		/* reverse video for the column names */
		if (strncmp(line, "Tranche ", 8) == 0 ||
			strncmp(line, "Spinlock call site ", 19) == 0)
			appendPQExpBufferStr(&screen, "\033[7m");
		appendBinaryPQExpBuffer(&screen, line, Min(len, cols));
		appendPQExpBufferStr(&screen, "\033[0m\033[K");
		nlines++;
		line = eol ? eol + 1 : line + len;
	}
	appendPQExpBufferStr(&screen, "\033[J");
	fputs(screen.data, stdout);
	fflush(stdout);
	termPQExpBuffer(&screen);
	termPQExpBuffer(&body);
}

/*
 * write_csv
 *		One CSV row per tranche (the top -t of them), preceded once by the
 *		header row.  Values are the interval's counts and their rates; the
 *		percentages are empty when the interval had no blocks or spin delays
 *		at all.
 */
static void
write_csv(const Report *report)
{
	int			nrows = report->nrows;
	int			i;

	if (!csv_header_done)
	{
		fputs("timestamp,interval_s,reset,tranche_id,tranche,"
			  "sh_acquires,ex_acquires,blocks,spin_delays,wait_time_ms,"
			  "acquires_per_s,blocks_per_s,spin_delays_per_s,wait_ms_per_s,"
			  "blk_pct,spin_delay_pct\n", stdout);
		csv_header_done = true;
	}
	if (top_n > 0 && nrows > top_n)
		nrows = top_n;
	for (i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];

		printf("%s,%.3f,%d,", report->time_csv, report->rate_interval,
			   report->reset ? 1 : 0);
		if (r->id >= 0)
			printf("%d", r->id);
		putchar(',');
		write_csv_text(r->name);
		printf(",%lld,%lld,%lld,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,",
			   (long long) r->sh_acquires, (long long) r->ex_acquires,
			   (long long) r->blocks, (long long) r->spin_delays,
			   r->wait_ms, r->acquires_per_s, r->blocks_per_s,
			   r->spin_delays_per_s, r->wait_ms_per_s);
		if (r->blk_pct >= 0)
			printf("%.2f", r->blk_pct);
		putchar(',');
		if (r->spin_delay_pct >= 0)
			printf("%.2f", r->spin_delay_pct);
		putchar('\n');
	}
	fflush(stdout);
}

/*
 * write_csv_text
 *		A CSV field, quoted if it has a comma, quote or line break.
 */
static void
write_csv_text(const char *text)
{
	const char *p;

	if (strpbrk(text, ",\"\r\n") == NULL)
	{
		fputs(text, stdout);
		return;
	}
	putchar('"');
	for (p = text; *p; p++)
	{
		if (*p == '"')
			putchar('"');
		putchar(*p);
	}
	putchar('"');
}

/*
 * note_event
 *		Report a connection event: on the status line of the screen, as a
 *		"--" line in --batch output, or on stderr with --csv (so that stdout
 *		stays pure CSV; the gap shows as missing timestamps).
 */
static void
note_event(const char *fmt,...)
{
	va_list		ap;
	char		msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	switch (output_mode)
	{
		case OUTPUT_SCREEN:
			pg_free(status_line);
			status_line = pg_strdup(msg);
			break;
		case OUTPUT_BATCH:
			printf("-- %s\n\n", msg);
			fflush(stdout);
			break;
		case OUTPUT_CSV:
			fprintf(stderr, "%s: %s\n", progname, msg);
			break;
	}
}

/*
 * first_line
 *		A malloc'd copy of the first line of a (libpq) message, without the
 *		"ERROR:  " prefix.
 */
static char *
first_line(const char *msg)
{
	char	   *copy;
	char	   *nl;

	if (msg == NULL || *msg == '\0')
		msg = "unknown error";
	if (strncmp(msg, "ERROR:  ", 8) == 0 || strncmp(msg, "FATAL:  ", 8) == 0)
		msg += 8;
	copy = pg_strdup(msg);
	nl = strchr(copy, '\n');
	if (nl)
		*nl = '\0';
	return copy;
}

/*
 * client_time
 *		The client's local time of day, for events that happen while there is
 *		no server to ask (a static buffer).
 */
static char *
client_time(void)
{
	static char buf[32];
	time_t		now = time(NULL);
	struct tm	tm;

	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	return buf;
}

/*
 * terminal_enter
 *		Switch the terminal to the alternate screen with the cursor hidden,
 *		and, if stdin is a terminal, to unbuffered input without echo.
 *		Signals (Ctrl-C) stay enabled.
 */
static void
terminal_enter(void)
{
	keys_enabled = isatty(STDIN_FILENO) &&
		tcgetattr(STDIN_FILENO, &saved_termios) == 0;
	if (keys_enabled)
	{
		struct termios raw = saved_termios;

		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	}
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout);
	fflush(stdout);
	terminal_active = true;
}

/*
 * terminal_leave
 *		Undo terminal_enter.  Only async-signal-safe calls after the fflush,
 *		since a second Ctrl-C calls it from the signal handler.
 */
static void
terminal_leave(void)
{
	static const char restore[] = "\033[0m\033[?25h\033[?1049l";

	if (!terminal_active)
		return;
	terminal_active = false;
	fflush(stdout);
	if (write(STDOUT_FILENO, restore, sizeof(restore) - 1) < 0)
	{
		/* nothing to do: the terminal is gone */
	}
	if (keys_enabled)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
}

/*
 * terminal_leave_atexit
 *		atexit() wrapper of terminal_leave, for every path to exit().
 */
static void
terminal_leave_atexit(void)
{
	terminal_leave();
}

/*
 * handle_stop_signal
 *		SIGINT and SIGTERM: ask the main loop to stop, and cancel a query in
 *		progress so that it stops soon (PQcancel is safe in a signal
 *		handler).  A second signal, if the first did not get through (a
 *		connection attempt that hangs), restores the terminal and exits at
 *		once.
 */
static void
handle_stop_signal(int signo)
{
	char		errbuf[256];
	PGcancel   *cancel = cancel_handle;

	if (got_stop_signal)
	{
		if (terminal_active)
		{
			static const char restore[] = "\033[0m\033[?25h\033[?1049l";

			if (write(STDOUT_FILENO, restore, sizeof(restore) - 1) < 0)
			{
				/* ignore */
			}
			if (keys_enabled)
				tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
		}
		_exit(EXIT_OK);
	}
	got_stop_signal = true;
	if (cancel)
		(void) PQcancel(cancel, errbuf, sizeof(errbuf));
}

/*
 * handle_winch
 *		SIGWINCH: redraw at the new window size.
 */
static void
handle_winch(int signo)
{
	got_winch = true;
}

/*
 * handle_tstp
 *		SIGTSTP (Ctrl-Z): give the shell a normal terminal while stopped, and
 *		take the screen back when continued.
 */
static void
handle_tstp(int signo)
{
	int			save_errno = errno;
	bool		was_active = terminal_active;
	sigset_t	mask;

	if (was_active)
	{
		static const char restore[] = "\033[0m\033[?25h\033[?1049l";

		if (write(STDOUT_FILENO, restore, sizeof(restore) - 1) < 0)
		{
			/* ignore */
		}
		if (keys_enabled)
			tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
	}

	/* stop with the default action, then come back here on SIGCONT */
	set_signal_handler(SIGTSTP, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	raise(SIGTSTP);
	set_signal_handler(SIGTSTP, handle_tstp);

	if (was_active)
	{
		static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";

		if (keys_enabled)
		{
			struct termios raw = saved_termios;

			raw.c_lflag &= ~(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
		}
		if (write(STDOUT_FILENO, enter, sizeof(enter) - 1) < 0)
		{
			/* ignore */
		}
		got_winch = true;		/* redraw */
	}
	errno = save_errno;
}

/*
 * set_signal_handler
 *		Install a handler without SA_RESTART, so that a signal interrupts the
 *		wait between samples at once.  Async-signal-safe.
 */
static void
set_signal_handler(int signo, void (*handler) (int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = handler;
	sigaction(signo, &sa, NULL);
}

/*
 * install_signal_handlers
 *		SIGINT and SIGTERM stop the program cleanly; on the screen, SIGWINCH
 *		redraws and SIGTSTP hands the terminal back while stopped.
 */
static void
install_signal_handlers(void)
{
	set_signal_handler(SIGINT, handle_stop_signal);
	set_signal_handler(SIGTERM, handle_stop_signal);
	if (output_mode == OUTPUT_SCREEN)
	{
		set_signal_handler(SIGWINCH, handle_winch);
		set_signal_handler(SIGTSTP, handle_tstp);
	}
}

/*
 * monotonic_seconds
 *		The client's monotonic clock in seconds, for scheduling samples.
 */
static double
monotonic_seconds(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_DOUBLE(now);
}

/*
 * wait_until
 *		Sleep until deadline, a stop signal or "q".  On the screen, sort keys
 *		re-sort and redraw report (which may be NULL) at once, as does a
 *		window size change.
 */
static void
wait_until(double deadline, Report *report)
{
	for (;;)
	{
		double		left;
		struct timeval tv;
		fd_set		fds;
		int			rc;

		if (got_stop_signal)
			return;
		if (got_winch)
		{
			got_winch = false;
			show_screen(report);
		}
		left = deadline - monotonic_seconds();
		if (left <= 0)
			return;
		tv.tv_sec = (time_t) left;
		tv.tv_usec = (suseconds_t) ((left - tv.tv_sec) * 1000000);
		FD_ZERO(&fds);
		if (keys_enabled)
			FD_SET(STDIN_FILENO, &fds);
		rc = select(keys_enabled ? STDIN_FILENO + 1 : 0,
					keys_enabled ? &fds : NULL, NULL, NULL, &tv);
		if (rc > 0 && keys_enabled && FD_ISSET(STDIN_FILENO, &fds))
		{
			char		keys[64];
			ssize_t		n = read(STDIN_FILENO, keys, sizeof(keys));
			bool		resort = false;
			ssize_t		i;

			for (i = 0; i < n; i++)
			{
				switch (keys[i])
				{
					case 'q':
					case 'Q':
						got_stop_signal = true;
						return;
					case 'b':
						sort_key = SORT_BLOCKS;
						resort = true;
						break;
					case 'w':
						sort_key = SORT_WAIT;
						resort = true;
						break;
					case 's':
						sort_key = SORT_SPIN_DELAYS;
						resort = true;
						break;
					case 'a':
						sort_key = SORT_ACQUIRES;
						resort = true;
						break;
					default:
						break;
				}
			}
			if (resort)
			{
				if (report)
					sort_report(report);
				show_screen(report);
			}
		}
	}
}

/*
 * main
 *		Connect, take a baseline, then one report per interval until -n
 *		reports, "q" or a stop signal.  A lost connection is retried at every
 *		interval; the first sample after reconnecting is a new baseline.
 */
int
main(int argc, char **argv)
{
	const char *dbname = NULL;
	const char *host = NULL;
	const char *port = NULL;
	const char *user = NULL;
	enum trivalue prompt = TRI_DEFAULT;
	Sample		prev;
	Sample		cur;
	Report		report;
	bool		have_report = false;
	bool		connected;
	int			reports = 0;
	char	   *error = NULL;
	double		deadline;
	double		lost_at = 0;

	pg_logging_init(argv[0]);
	progname = get_progname(argv[0]);

	parse_options(argc, argv, &dbname, &host, &port, &user, &prompt);
	connect_or_exit(dbname, host, port, user, prompt);
	if (!find_extension())
		setup_failure("could not read pg_lockstat: %s",
					  first_line(PQerrorMessage(conn)));
	if (!take_baseline(&prev, &error))
		setup_failure("could not read pg_lockstat: %s", error);
	connected = true;
	memset(&report, 0, sizeof(report));

	atexit(terminal_leave_atexit);
	install_signal_handlers();
	if (output_mode == OUTPUT_SCREEN)
	{
		terminal_enter();
		show_screen(NULL);
	}

	deadline = monotonic_seconds();
	for (;;)
	{
		/* a late sample (slow query, reconnection) does not cause a burst */
		deadline += interval_s;
		if (deadline < monotonic_seconds())
			deadline = monotonic_seconds();
		wait_until(deadline, have_report ? &report : NULL);
		if (got_stop_signal)
			break;

		if (!connected)
		{
			/* retry; the first sample on the new connection is a baseline */
			PQreset(conn);
			if (PQstatus(conn) != CONNECTION_OK || !find_extension())
				continue;
			if (!take_baseline(&prev, &error))
			{
				pg_free(error);
				continue;
			}
			connected = true;
			refresh_cancel_handle();
			note_event("reconnected at %s after %.1f s; new baseline",
					   prev.time_text, monotonic_seconds() - lost_at);
			if (output_mode == OUTPUT_SCREEN)
				show_screen(have_report ? &report : NULL);
			continue;
		}

		if (!take_sample(&cur, &error))
		{
			if (got_stop_signal)
			{
				pg_free(error);
				break;			/* our own cancel */
			}
			if (connection_lost())
			{
				connected = false;
				lost_at = monotonic_seconds();
				note_event("connection lost at %s: %s; retrying every %.2f s",
						   client_time(), error, interval_s);
				free_sample(&prev);
			}
			else
				note_event("sample failed at %s: %s; trying again in %.2f s",
						   client_time(), error, interval_s);
			pg_free(error);
			if (output_mode == OUTPUT_SCREEN)
				show_screen(have_report ? &report : NULL);
			continue;
		}

		free_report(&report);
		have_report = make_report(&prev, &cur, &report);
		free_sample(&prev);
		prev = cur;
		if (!have_report)
			continue;			/* the server clock went back: new baseline */

		/* on the screen, an event stays on show until the next report */
		if (status_line)
		{
			pg_free(status_line);
			status_line = NULL;
		}
		show_report(&report);
		reports++;
		if (report_count > 0 && reports >= report_count)
			break;
	}

	terminal_leave();
	free_report(&report);
	if (connected)
		free_sample(&prev);
	PQfinish(conn);
	return EXIT_OK;
}
