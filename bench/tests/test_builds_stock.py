"""Tests of lockstudy.builds' checks of the unpatched server against the
base, without building (fake installations: a postgres script printing
its version, build-server.sh's marks and key.txt): the stock build of a
study with an unpatched variant and of another installation, its
refusals (the base itself, another version, a postgres that cannot be
run, patches, another configure, extra-cflags or source), the check
before the patches, and no stock build without an unpatched variant.
No server, no build.
"""

import os

import pytest

from lockstudy import builds, spec
from test_builds import _write


# --- the unpatched server ----------------------------------------------------

# a build's key.txt as build-server.sh writes it (its empty fields end in
# a blank), without the patch lines
KEY_TXT = ("recipe 1\npostgresql 18.1\nsource tarball-sha256 0123abcd\n"
           "configure --enable-tap-tests --enable-debug\nconfigure-env \n"
           "extra-cflags \nmake rpathdir=$$ORIGIN/../lib:$$ORIGIN:"
           "$$ORIGIN/..\n")
SERIES_LINES = "patch aaaa 0001-a.patch\npatch bbbb 0002-b.patch\n"


def _installation(tmp, name, version="18.1", key=None, keytxt=None):
    """A fake installation tmp/name: bin/postgres printing the version,
    and, if keytxt is given, the marks of a build-server.sh build with
    that key.txt.  Its bindir."""
    prefix = tmp / name
    _write(prefix / "bin" / "postgres",
           "#!/bin/sh\necho 'postgres (PostgreSQL) %s'\n" % version)
    os.chmod(str(prefix / "bin" / "postgres"), 0o755)
    if key is not None:
        _write(prefix / ".pg_lockstat_build_key", key + "\n")
    if keytxt is not None:
        src = tmp / "cache" / name / "src"
        os.makedirs(str(src))
        _write(tmp / "cache" / name / "key.txt", keytxt)
        _write(prefix / ".pg_lockstat_build_src", str(src) + "\n")
    return str(prefix / "bin")


def _stock_study(base, stock, variants=None):
    return spec.Study(
        pg_config=os.path.join(base, "pg_config"), bindir=base, scale=1,
        clients=(1,), duration=1, warmup=0,
        workload=spec.Workload("select-only", ("-S",)), threads=None,
        repeat=2, seed=1, threshold="2", run_dir="/r", variant_dir="/v",
        variants=variants or (
            spec.Variant("stock", (), (("shared_preload_libraries", ""),),
                         None, True),
            spec.Variant("on")),
        variants_given="stock: unpatched; on",
        stock_pg_config=os.path.join(stock, "pg_config"),
        stock_bindir=stock)


def test_stock_build(tmp_path):
    base = _installation(tmp_path, "pg18", key="18.1-base",
                         keytxt=KEY_TXT + SERIES_LINES)
    stock = _installation(tmp_path, "pg18-stock", key="18.1-stock",
                          keytxt=KEY_TXT)
    s = _stock_study(base, stock)
    b = builds.stock_build(s)
    assert b == builds.Build(stock, "18.1-stock",
                             "the unpatched server (STOCK_PG_CONFIG)")
    # the base for the variant without patches, the stock server for the
    # unpatched one: nothing to build
    assert builds.build_all(s, "/top") == [b, builds.base_build(base)]
    assert builds.plan_lines(s.names, s.variants, [
        b, builds.base_build(base)]) == [
        "build 1: the unpatched server (STOCK_PG_CONFIG): %s (build key "
        "18.1-stock)" % str(tmp_path / "pg18-stock"),
        "build 2: the base server (PG_CONFIG): %s (build key 18.1-base)"
        % str(tmp_path / "pg18"),
        "variant stock: build 1, settings shared_preload_libraries = ''",
        "variant on: build 2"]


def test_stock_build_of_another_installation(tmp_path):
    """A server that build-server.sh did not build: only the versions can
    be compared, and its key is unknown."""
    base = _installation(tmp_path, "pg18", keytxt=KEY_TXT + SERIES_LINES)
    stock = _installation(tmp_path, "debian")
    assert builds.stock_build(_stock_study(base, stock)) == builds.Build(
        stock, "unknown", "the unpatched server (STOCK_PG_CONFIG)")


def _stock_error(tmp_path, base, stock):
    with pytest.raises(builds.BuildError) as e:
        builds.stock_build(_stock_study(base, stock))
    return str(e.value).replace(str(tmp_path), "T")


def test_stock_build_refusals(tmp_path):
    base = _installation(tmp_path, "pg18", keytxt=KEY_TXT + SERIES_LINES)
    where = "the unpatched server T/%s (STOCK_PG_CONFIG)"
    assert _stock_error(tmp_path, base, base) == (
        where % "pg18" + " is the base server itself (PG_CONFIG); it must "
        "be a build of the same source without the core series (make "
        "server-stock)")
    other = _installation(tmp_path, "pg18-2", version="18.2")
    assert _stock_error(tmp_path, base, other) == (
        where % "pg18-2" + ' is "postgres (PostgreSQL) 18.2", the base '
        'server "postgres (PostgreSQL) 18.1"; an unpatched variant needs '
        "the same PostgreSQL version (make server-stock builds it from the "
        "base's source)")
    major = _installation(tmp_path, "pg15", version="15.14")
    assert '"postgres (PostgreSQL) 15.14"' in _stock_error(tmp_path, base,
                                                           major)
    broken = _installation(tmp_path, "broken")
    os.chmod(os.path.join(broken, "postgres"), 0o644)
    assert _stock_error(tmp_path, base, broken).startswith(
        where % "broken" + " is a postgres that cannot be run, the base ")
    patched = _installation(tmp_path, "patched",
                            keytxt=KEY_TXT + SERIES_LINES)
    assert _stock_error(tmp_path, base, patched) == (
        where % "patched" + " was built with patches (0001-a.patch "
        "0002-b.patch); an unpatched variant needs a build without them "
        "(make server-stock)")
    cassert = _installation(tmp_path, "cassert", keytxt=KEY_TXT.replace(
        "--enable-debug", "--enable-debug --enable-cassert"))
    assert _stock_error(tmp_path, base, cassert) == (
        where % "cassert" + " was built with another configure than the "
        'base server: "--enable-tap-tests --enable-debug --enable-cassert" '
        'against "--enable-tap-tests --enable-debug" (scripts/'
        "build-server.sh key.txt); build it with the base's CASSERT and "
        "EXTRA_CFLAGS: STOCK=1 scripts/build-server.sh <dir>, then "
        "STOCK_PG_CONFIG=<dir>/bin/pg_config")
    cflags = _installation(tmp_path, "cflags", keytxt=KEY_TXT.replace(
        "extra-cflags ", "extra-cflags -DLWLOCK_STATS"))
    assert "another extra-cflags than the base server: \"-DLWLOCK_STATS\" " \
        'against ""' in _stock_error(tmp_path, base, cflags)
    source = _installation(tmp_path, "source", keytxt=KEY_TXT.replace(
        "0123abcd", "4567"))
    assert "another source than the base server: \"tarball-sha256 4567\" " \
        'against "tarball-sha256 0123abcd"' in _stock_error(tmp_path, base,
                                                            source)


def test_stock_build_checked_before_the_patches(tmp_path):
    """A study with an unpatched variant and a patched one: the stock
    server is refused before anything else is looked at."""
    base = _installation(tmp_path, "pg18", keytxt=KEY_TXT + SERIES_LINES)
    variants = (spec.Variant("stock", (), (), None, True),
                spec.Variant("p", ("/nowhere/x.patch",)))
    with pytest.raises(builds.BuildError) as e:
        builds.build_all(_stock_study(base, base, variants), "/top")
    assert "is the base server itself" in str(e.value)


def test_no_stock_build_without_an_unpatched_variant(tmp_path):
    base = _installation(tmp_path, "pg18", keytxt=KEY_TXT + SERIES_LINES)
    s = _stock_study(base, "/nowhere/bin", (spec.Variant("a"),
                                            spec.Variant("b")))
    assert builds.build_all(s, "/top") == [builds.base_build(base)] * 2
