"""Tests of lockstudy.builds, the parts that build nothing: the directory
of a build, the plan's build lines, the base build and the builds handed
to the unprivileged pass (the check that every variant's patches apply
is test_builds_patches.py's, the checks of the unpatched server against
the base test_builds_stock.py's).

The expected values come from the bash code the module replaces, run
here on the same input: run-study.sh's "sha256sum | cut" for the build
directory's hash and its loops for the plan's lines.  No server, no
build.  SH_ENV, _bash(), _write() and PATCHES serve the other
test_builds_*.py modules too.
"""

import json
import os
import shlex
import subprocess

import pytest

from lockstudy import builds, spec

SH_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
# run-study.sh: the plan's builds and variants, from its arrays
BASH_PLAN = r"""
declare -A build_no=()
for i in "${!vname[@]}"; do
    [ -z "${build_no[${vbin[i]}]:-}" ] || continue
    build_no[${vbin[i]}]=$(( ${#build_no[@]} + 1 ))
    echo "build ${build_no[${vbin[i]}]}: ${vbuild[i]}: ${vbin[i]%/bin} (build key ${vkey[i]})"
done
for i in "${!vname[@]}"; do
    st=${vsettings[i]%$'\n'}
    echo "variant ${vname[i]}: build ${build_no[${vbin[i]}]}${st:+, settings ${st//$'\n'/, }}"
done
"""  # noqa: E501


def _bash(script, args=(), stdin=""):
    return subprocess.run(["bash", "-c", script, "bash"] + list(args),
                          input=stdin, capture_output=True, text=True,
                          env=SH_ENV, check=True).stdout


def _write(path, text, newline=None):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", newline=newline) as f:
        f.write(text)
    return str(path)


# patches of every form: the files they name (test_builds_patches.py),
# the directory of their build
PATCHES = {
    "plain": "--- a/src/backend/f.c\t2024-01-01 00:00:00\n"
             "+++ b/src/backend/f.c\t2024-01-01 00:00:01\n"
             "@@ -1 +1 @@\n-x\n+y\n",
    "git": "diff --git a/src/include/g.h b/src/include/g.h\n"
           "index 1234567..89abcde 100644\n"
           "--- a/src/include/g.h\n+++ b/src/include/g.h\n"
           "@@ -1 +1 @@\n-x\n+y\n"
           "diff --git a/src/backend/f.c b/src/backend/f.c\n"
           "--- a/src/backend/f.c\n+++ b/src/backend/f.c\n"
           "@@ -1 +1 @@\n-x\n+y\n",
    "crlf": "--- a/src/crlf.c\r\n+++ b/src/crlf.c\r\n@@ -1 +1 @@\r\n"
            "-x\r\n+y\r\n",
    "new-file": "--- /dev/null\n+++ b/src/new.c\n@@ -0,0 +1 @@\n+new\n",
    "removed-file": "--- a/src/old.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n",
    "renamed": "--- a/src/before.c\n+++ b/src/after.c\n@@ -1 +1 @@\n-x\n+y\n",
    "no-prefix": "--- top.c\n+++ top.c\n@@ -1 +1 @@\n-x\n+y\n",
    "deep-prefix": "--- old/src/deep/d.c\n+++ new/src/deep/d.c\n"
                   "@@ -1 +1 @@\n-x\n+y\n",
}


# --- build_dir ---------------------------------------------------------------

def _bash_hash(base_key, patches):
    """run-study.sh's name of the build directory of these patches."""
    return _bash("""{ echo "$1"; shift; sha256sum "$@" | cut -d' ' -f1; } | """
                 """sha256sum | cut -c1-12""", [base_key] + list(patches)
                 ).strip()


@pytest.mark.parametrize("key", ["18.6-9b61785eee3c", "", "unknown"])
def test_build_dir_hash_is_the_bash_one(tmp_path, key):
    p1 = _write(tmp_path / "p1.patch", PATCHES["plain"])
    p2 = _write(tmp_path / "p2.patch", PATCHES["git"])
    for patches in ([p1], [p1, p2], [p2, p1]):
        h = _bash_hash(key, patches)
        assert len(h) == 12
        assert builds.build_dir(key, patches, "/v") == os.path.join("/v", h)


def test_build_dir_depends_on_contents_not_names(tmp_path):
    p1 = _write(tmp_path / "p1.patch", PATCHES["plain"])
    same = _write(tmp_path / "elsewhere" / "other-name.patch",
                  PATCHES["plain"])
    p2 = _write(tmp_path / "p2.patch", PATCHES["git"])
    d = builds.build_dir("k", [p1], "/v")
    assert builds.build_dir("k", [same], "/v") == d
    assert builds.build_dir("k2", [p1], "/v") != d
    assert builds.build_dir("k", [p1, p2], "/v") != \
        builds.build_dir("k", [p2, p1], "/v")


# --- plan_lines --------------------------------------------------------------

def _bash_plan(variants, variant_builds):
    def array(name, values):
        return "%s=(%s)\n" % (name, " ".join(shlex.quote(v) for v in values))
    script = (array("vname", [v.name for v in variants]) +
              array("vbin", [b.bindir for b in variant_builds]) +
              array("vkey", [b.key for b in variant_builds]) +
              array("vbuild", [b.description for b in variant_builds]) +
              array("vsettings", ["".join(s + "\n" for s in
                                          v.settings_lines())
                                  for v in variants]) + BASH_PLAN)
    return _bash(script).splitlines()


def test_plan_lines_as_the_bash_code():
    base = builds.Build("/pg/bin", "18.6-9b61785eee3c",
                        "the base server (PG_CONFIG)")
    a = builds.Build("/v/0123456789ab/bin", "18.6-aaaa",
                     "the series + dynahash-one-freelist.patch")
    b = builds.Build("/v/ba9876543210/bin", "18.6-bbbb",
                     "the series + one.patch two.patch")
    variants = [
        spec.Variant("onefl", ("/x/dynahash-one-freelist.patch",),
                     (("pg_lockstat.spin_strategy", "ttas"),), "ttas"),
        spec.Variant("base"),
        spec.Variant("onefl-wm", ("/x/dynahash-one-freelist.patch",),
                     (("work_mem", "4MB"),
                      ("application_name", "x=y,z"))),
        spec.Variant("two", ("/x/one.patch", "/x/two.patch")),
        spec.Variant("base-ttas", (), (("pg_lockstat.spin_strategy",
                                        "ttas"),), "ttas")]
    variant_builds = [a, base, a, b, base]
    lines = builds.plan_lines([v.name for v in variants], variants,
                              variant_builds)
    assert lines == _bash_plan(variants, variant_builds)
    assert lines == [
        "build 1: the series + dynahash-one-freelist.patch: /v/0123456789ab "
        "(build key 18.6-aaaa)",
        "build 2: the base server (PG_CONFIG): /pg (build key "
        "18.6-9b61785eee3c)",
        "build 3: the series + one.patch two.patch: /v/ba9876543210 (build "
        "key 18.6-bbbb)",
        "variant onefl: build 1, settings pg_lockstat.spin_strategy = 'ttas'",
        "variant base: build 2",
        "variant onefl-wm: build 1, settings work_mem = '4MB', "
        "application_name = 'x=y,z'",
        "variant two: build 3",
        "variant base-ttas: build 2, settings pg_lockstat.spin_strategy = "
        "'ttas'"]


def test_base_build(tmp_path):
    prefix = tmp_path / "pg"
    _write(prefix / ".pg_lockstat_build_key", "18.6-9b61785eee3c\n")
    bindir = str(prefix / "bin")
    os.makedirs(bindir)
    b = builds.base_build(bindir)
    assert b == builds.Build(bindir, "18.6-9b61785eee3c",
                             "the base server (PG_CONFIG)")
    assert b.prefix == str(prefix)
    os.remove(str(prefix / ".pg_lockstat_build_key"))
    assert builds.base_build(bindir).key == "unknown"


# --- save and load -----------------------------------------------------------

BUILDS = [builds.Build("/pg/bin", "k0", "the base server (PG_CONFIG)"),
          builds.Build("/v/0123456789ab/bin", "k1",
                       "the series + a.patch b.patch")]


def test_save_load_round_trip(tmp_path):
    path = str(tmp_path / "builds.json")
    builds.save(BUILDS, path)
    assert builds.load(path, 2) == BUILDS
    with open(path) as f:
        assert json.load(f) == [
            {"bindir": "/pg/bin", "key": "k0",
             "description": "the base server (PG_CONFIG)"},
            {"bindir": "/v/0123456789ab/bin", "key": "k1",
             "description": "the series + a.patch b.patch"}]


@pytest.mark.parametrize("text", [
    None, "", "{not json", "[{\"bindir\": \"/b\"}]",
    "[{\"bindir\": \"/b\", \"key\": \"k\", \"description\": \"d\", "
    "\"extra\": 1}]", "{\"a\": 1}", "5", "null", "[[1, 2, 3]]"])
def test_load_errors(tmp_path, text):
    path = str(tmp_path / "builds.json")
    if text is not None:
        _write(path, text)
    with pytest.raises(builds.BuildError) as e:
        builds.load(path, 1)
    assert str(e.value).startswith("cannot read the builds of the first "
                                   "pass from %s: " % path)


def test_load_of_another_count(tmp_path):
    path = str(tmp_path / "builds.json")
    builds.save(BUILDS, path)
    with pytest.raises(builds.BuildError) as e:
        builds.load(path, 3)
    assert str(e.value) == "internal: %s has 2 builds for 3 variants" % path
