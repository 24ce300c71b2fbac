# Copyright (c) 2026, pg_lockstat developers
#
# A database that uses pg_lockstat as an application might, and the
# comparison of two installations of it, for the TAP tests that carry it to
# another server: dump and restore (t/022), pg_upgrade within a major
# (t/023) and from an older major (t/032).

package LockStatTest::Upgrade;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils ();

use LockStatTest;

# The members of extension pg_lockstat in database $dbname, one line each,
# sorted: the object, its privileges for roles other than the owner
# ("default" if never granted or revoked), its initial privileges as
# pg_init_privs records them (what pg_dump compares with), its comment and
# its definition (for a function, the C symbol too).  Every column of the
# extension's views is a line of its own.  For comparing two installations.
sub extension_members
{
	my ($node, $dbname) = @_;

	return $node->safe_psql(
		$dbname, q{
WITH member AS (
    SELECT d.classid, d.objid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND e.extname = 'pg_lockstat'
      AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass)),
obj AS (
    SELECT m.classid, m.objid, 0 AS objsubid,
           coalesce(p.proacl, c.relacl) AS acl,
           coalesce(p.proowner, c.relowner) AS owner,
           CASE WHEN p.oid IS NOT NULL
                THEN p.prosrc || ': ' || pg_get_functiondef(p.oid)
                ELSE pg_get_viewdef(c.oid)
           END AS definition
    FROM member m
    LEFT JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    LEFT JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    UNION ALL
    SELECT m.classid, a.attrelid, a.attnum, a.attacl, c.relowner,
           format_type(a.atttypid, a.atttypmod)
    FROM member m
    JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE a.attnum > 0 AND NOT a.attisdropped)
SELECT pg_describe_object(o.classid, o.objid, o.objsubid)
       || ' | ' || CASE WHEN o.acl IS NULL THEN 'default'
                        ELSE (SELECT coalesce(string_agg(g, ' ' ORDER BY g),
                                              'owner only')
                              FROM (SELECT CASE WHEN x.grantee = 0 THEN 'PUBLIC'
                                                ELSE x.grantee::regrole::text
                                           END || ':' || x.privilege_type
                                    FROM aclexplode(o.acl) AS x
                                    WHERE x.grantee <> o.owner) AS a(g))
                   END
       || ' | init ' || coalesce(i.privtype::text || ' ' || i.initprivs::text, 'none')
       || ' | ' || coalesce(d.description, '(no comment)')
       || ' | ' || o.definition
FROM obj o
LEFT JOIN pg_description d
  ON d.classoid = o.classid AND d.objoid = o.objid AND d.objsubid = o.objsubid
LEFT JOIN pg_init_privs i
  ON i.classoid = o.classid AND i.objoid = o.objid AND i.objsubid = o.objsubid
ORDER BY 1});
}

# A plain-format dump of database $dbname ("all" for pg_dumpall) of $node
# into $file, made with the given node's tools, without statistics (which
# pg_dump dumps from 18 on) and with a fixed \restrict key, so that two
# dumps can be compared as text.  Returns the dump's text.
sub dump_for_comparison
{
	my ($node, $dbname, $file) = @_;
	my @cmd =
	  $dbname eq 'all'
	  ? ('pg_dumpall', '--dbname' => $node->connstr('postgres'))
	  : ('pg_dump', '--dbname' => $node->connstr($dbname));

	$node->command_ok(
		[
			@cmd, '--no-sync',
			(LockStatTest::server_major() >= 18 ? ('--no-statistics') : ()),
			'--restrict-key=lockstat',
			'--file' => $file
		],
		"plain dump of $dbname on " . $node->name);
	return PostgreSQL::Test::Utils::slurp_file($file);
}

# The roles that app_database() grants to.  Roles are cluster objects,
# which pg_dump leaves to pg_dumpall: a server that a dump of such a
# database is restored into needs them first.
our $app_roles = q{
CREATE ROLE lockstat_reader LOGIN;
CREATE ROLE lockstat_resetter LOGIN;
CREATE ROLE lockstat_monitor LOGIN IN ROLE pg_monitor;
};

# Make database $dbname on $node use pg_lockstat as an application might:
# the extension in schema "lockstat", privileges changed from the install
# script's (GRANTs to lockstat_reader and lockstat_resetter, a REVOKE from
# pg_read_all_stats), a user view public.lwlock_acquires and an
# SQL-standard function public.lwlock_acquires_total() over pg_lwlock_stats
# and a table public.lwlock_snapshot filled from it.  The roles of
# $app_roles must exist.
sub app_database
{
	my ($node, $dbname) = @_;

	$node->safe_psql('postgres', "CREATE DATABASE $dbname");
	$node->safe_psql(
		$dbname, q{
CREATE SCHEMA lockstat;
CREATE EXTENSION pg_lockstat SCHEMA lockstat;
GRANT USAGE ON SCHEMA lockstat
    TO lockstat_reader, lockstat_resetter, lockstat_monitor;
GRANT SELECT ON lockstat.pg_lwlock_stats TO lockstat_reader;
GRANT EXECUTE ON FUNCTION lockstat.pg_lwlock_stats() TO lockstat_reader;
GRANT EXECUTE ON FUNCTION lockstat.pg_lockstat_reset() TO lockstat_resetter;
REVOKE SELECT ON lockstat.pg_spinlock_stats FROM pg_read_all_stats;

CREATE VIEW public.lwlock_acquires AS
    SELECT tranche, sh_acquires + ex_acquires AS acquires, blocks
    FROM lockstat.pg_lwlock_stats;
COMMENT ON VIEW public.lwlock_acquires IS 'acquisitions per tranche';
GRANT SELECT ON public.lwlock_acquires TO lockstat_reader;

CREATE FUNCTION public.lwlock_acquires_total() RETURNS numeric
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT sum(sh_acquires + ex_acquires) FROM lockstat.pg_lwlock_stats;
END;

CREATE TABLE public.lwlock_snapshot AS
    SELECT now() AS taken, tranche, sh_acquires, ex_acquires
    FROM lockstat.pg_lwlock_stats;
});
}

# On $node, which preloads pg_lockstat and lockstat_test and has the
# extension lockstat_test in database "postgres", and database $dbname made
# by app_database(): lockstat_resetter resets, a superuser takes the test
# lock exclusively $n times, and lockstat_reader reads.  Returns what the
# reader sees: "<ex_acquires in pg_lwlock_stats> <acquires in the user's
# view>" for tranche lockstat_test, and psql's stderr.
sub app_count
{
	my ($node, $dbname, $n) = @_;
	my ($ret, $stdout, $stderr) = $node->psql(
		$dbname,
		'SELECT lockstat.pg_lockstat_reset() IS NOT NULL',
		extra_params => [ '-U', 'lockstat_resetter' ]);
	die "reset as lockstat_resetter failed: $stderr" if $stdout ne 't';

	$node->safe_psql('postgres', "SELECT lockstat_test_lwlock('exclusive', $n)");
	($ret, $stdout, $stderr) = $node->psql(
		$dbname,
		q{SELECT l.ex_acquires || ' ' || a.acquires
		  FROM lockstat.pg_lwlock_stats l
		  JOIN public.lwlock_acquires a USING (tranche)
		  WHERE tranche = 'lockstat_test'},
		extra_params => [ '-U', 'lockstat_reader' ]);
	return ($stdout, $stderr);
}

1;
