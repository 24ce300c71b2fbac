/*-------------------------------------------------------------------------
 *
 * options.c
 *	  pg_lockstat_top's command line: options, --help, --version
 *
 * parse_options sets the option variables declared in pg_lockstat_top.h
 * and the connection parameters; getopt_long comes from libpgport.  Bad
 * options end the program with EXIT_USAGE after one error line and a hint
 * to --help.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "common/logging.h"
#include "getopt_long.h"
#include "pg_lockstat_top.h"

/* long options without a short form */
#define OPT_BATCH		1
#define OPT_CSV			2
#define OPT_HELP		3

const char *progname;
double		interval_s = 1.0;
int			report_count = 0;	/* 0: unlimited */
int			top_n = 15;			/* 0: all */
SortKey		sort_key = SORT_BLOCKS;
OutputMode	output_mode;

const char *const sort_key_names[] = {
	[SORT_BLOCKS] = "blocks",
	[SORT_WAIT] = "wait",
	[SORT_SPIN_DELAYS] = "spin_delays",
	[SORT_ACQUIRES] = "acquires",
};

static const struct option long_options[] = {
	{"interval", required_argument, NULL, 'i'},
	{"count", required_argument, NULL, 'n'},
	{"top", required_argument, NULL, 't'},
	{"sort", required_argument, NULL, 's'},
	{"batch", no_argument, NULL, OPT_BATCH},
	{"csv", no_argument, NULL, OPT_CSV},
	{"dbname", required_argument, NULL, 'd'},
	{"host", required_argument, NULL, 'h'},
	{"port", required_argument, NULL, 'p'},
	{"username", required_argument, NULL, 'U'},
	{"no-password", no_argument, NULL, 'w'},
	{"password", no_argument, NULL, 'W'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0}
};

static void usage(void);
static void show_version(void);
static void bad_usage(void);
static bool set_option(int c, const char *arg, ConnParams *cparams,
					   bool *batch, bool *csv);
static double parse_interval(const char *arg);
static int	parse_int(const char *arg, const char *what, int min);
static SortKey parse_sort_key(const char *arg);


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
	printf("  -t, --top=N              show the top N tranches, queries, blockers and\n"
		   "                           spinlock call sites (default 15, 0 for all)\n");
	printf("  -s, --sort=KEY           sort by blocks (default), wait, spin_delays or\n"
		   "                           acquires, all per second (blockers: by blocks or\n"
		   "                           else by wait)\n");
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
	printf("  ?                        show or hide the legend of every column and key\n");
	printf("  q                        quit (Ctrl-C too)\n");
	printf("\nThe role needs pg_read_all_stats (or superuser), and the database needs\n"
		   "CREATE EXTENSION pg_lockstat, on a server that preloads pg_lockstat.\n");
	printf("\nExit status: 0 when done, 1 for bad options, 2 when the server cannot be\n"
		   "reached at start-up or pg_lockstat cannot be read.  A connection lost later\n"
		   "is retried at every interval.\n");
}

/*
 * show_version
 *		Print --version.
 */
static void
show_version(void)
{
	puts("pg_lockstat_top (pg_lockstat) " PG_LOCKSTAT_TOP_VERSION);
}

/*
 * bad_usage
 *		After an error line about the command line: the hint to --help, then
 *		exit with EXIT_USAGE.
 */
static void
bad_usage(void)
{
	pg_log_error_hint("Try \"%s --help\" for more information.", progname);
	exit(EXIT_USAGE);
}

/*
 * parse_options
 *		Read the command line (argc and argv as main got them) into the
 *		option variables and *cparams, whose fields the caller has set to
 *		their defaults (NULL and TRI_DEFAULT).  --help and --version print
 *		and exit with EXIT_OK; bad options exit with EXIT_USAGE.  output_mode
 *		is the screen only when stdout is a terminal and neither --batch nor
 *		--csv was given.
 */
void
parse_options(int argc, char **argv, ConnParams *cparams)
{
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
			show_version();
			exit(EXIT_OK);
		}
	}

	while ((c = getopt_long(argc, argv, "d:h:i:n:p:s:t:U:VwW?",
							long_options, &optindex)) != -1)
	{
		if (set_option(c, optarg, cparams, &batch, &csv))
			continue;
		/* "-?" itself, or an option getopt_long complained about */
		if (c == '?' && optind <= argc && strcmp(argv[optind - 1], "-?") == 0)
		{
			usage();
			exit(EXIT_OK);
		}
		bad_usage();
	}

	/* one optional non-option argument: the database, as psql takes it */
	if (optind < argc && cparams->dbname == NULL)
		cparams->dbname = argv[optind++];
	if (optind < argc)
	{
		pg_log_error("too many command-line arguments (first is \"%s\")",
					 argv[optind]);
		bad_usage();
	}

	if (csv)
		output_mode = OUTPUT_CSV;
	else if (batch || !isatty(fileno(stdout)))
		output_mode = OUTPUT_BATCH;
	else
		output_mode = OUTPUT_SCREEN;
}

/*
 * set_option
 *		Apply one option c (as getopt_long returns it) with its argument arg.
 *		Returns false for an option it does not know, for the caller to
 *		complain about; exits for --help, --version and bad arguments.
 */
static bool
set_option(int c, const char *arg, ConnParams *cparams, bool *batch,
		   bool *csv)
{
	switch (c)
	{
		case 'd':
			cparams->dbname = arg;
			break;
		case 'h':
			cparams->pghost = arg;
			break;
		case 'p':
			cparams->pgport = arg;
			break;
		case 'U':
			cparams->pguser = arg;
			break;
		case 'w':
			cparams->prompt_password = TRI_NO;
			break;
		case 'W':
			cparams->prompt_password = TRI_YES;
			break;
		case 'i':
			interval_s = parse_interval(arg);
			break;
		case 'n':
			report_count = parse_int(arg, "-n/--count", 1);
			break;
		case 't':
			top_n = parse_int(arg, "-t/--top", 0);
			break;
		case 's':
			sort_key = parse_sort_key(arg);
			break;
		case OPT_BATCH:
			*batch = true;
			break;
		case OPT_CSV:
			*csv = true;
			break;
		case 'V':
			show_version();
			exit(EXIT_OK);
		case OPT_HELP:
			usage();
			exit(EXIT_OK);
		default:
			return false;
	}
	return true;
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
		bad_usage();
	}
	return val;
}

/*
 * parse_int
 *		An integer option argument of at least min, what naming the option
 *		in the message.  (option_parse_int of fe_utils/option_utils.h would
 *		take "" as 0 and surrounding blanks, and word its errors otherwise.)
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
		bad_usage();
	}
	return (int) val;
}

/*
 * parse_sort_key
 *		The argument of -s: one of sort_key_names.
 */
static SortKey
parse_sort_key(const char *arg)
{
	int			k;

	for (k = 0; k < lengthof(sort_key_names); k++)
		if (strcmp(arg, sort_key_names[k]) == 0)
			return (SortKey) k;
	pg_log_error("invalid sort key \"%s\": use blocks, wait, spin_delays or acquires",
				 arg);
	bad_usage();
	return SORT_BLOCKS;			/* not reached */
}

/*
 * top_rows
 *		How many of nrows rows -t shows: the top top_n, or all with -t 0.
 */
int
top_rows(int nrows)
{
	return (top_n > 0 && nrows > top_n) ? top_n : nrows;
}
