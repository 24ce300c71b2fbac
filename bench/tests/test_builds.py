"""Tests of lockstudy.builds, the parts that build nothing: the files a
patch touches, why patch failed, the check that every variant's patches
apply, the directory of a build, the plan's build lines, the builds
handed to the unprivileged pass, and the checks of the unpatched server
against the base (fake installations: a postgres script printing its
version, build-server.sh's marks and key.txt).

The expected values come from the bash code the module replaces, run
here on the same input: run-study.sh's awk for the patched files and for
patch's failure, its "sha256sum | cut" for the build directory's hash and
its loops for the plan's lines.  patch is GNU patch, run for real with the
check's options on a small tree in tmp_path.  No server, no build.
"""

import json
import os
import shlex
import subprocess

import pytest

from lockstudy import builds, spec

SH_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
# run-study.sh: the files the patches name (-p1)
AWK_FILES = (r"""awk '/^(---|\+\+\+) / { f = $2; sub(/\r$/, "", f); """
             r"""if (f != "/dev/null") { sub(/^[^\/]*\//, "", f); """
             r"""print f } }' "$@" | sort -u""")
# run-study.sh: why patch failed, from its output on stdin
AWK_WHY = r"""awk '
    /^patching file / { f = substr($0, 15); gsub(/\047/, "", f) }
    /^Hunk #[0-9]+ FAILED/ { sub(/\.$/, "", $0); n++; printf "%s%s of %s", (n > 1 ? "; " : ""), $0, f }
    /^can.t find file to patch|Reversed \(or previously applied\)|malformed patch|Only garbage/ && !n { n++; printf "%s", $0 }
    END { if (!n) printf "patch failed" }'"""  # noqa: E501
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

TEN = "".join("line %d\n" % i for i in range(1, 11))


def _bash(script, args=(), stdin=""):
    return subprocess.run(["bash", "-c", script, "bash"] + list(args),
                          input=stdin, capture_output=True, text=True,
                          env=SH_ENV, check=True).stdout


def _write(path, text, newline=None):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", newline=newline) as f:
        f.write(text)
    return str(path)


def _diff(tmp, name, old, new, label=None):
    """A -p1 unified diff of file name from old to new text, made by
    diff -u."""
    a = _write(tmp / "diff-a" / name, old)
    b = _write(tmp / "diff-b" / name, new)
    out = subprocess.run(["diff", "-u", "--label", "a/" + (label or name),
                          "--label", "b/" + (label or name), a, b],
                         capture_output=True, text=True, env=SH_ENV)
    assert out.returncode == 1, out.stderr
    return out.stdout


def _patch(tree, patch):
    """patch as the check runs it; its exit status and output."""
    out = subprocess.run(["patch", "-d", str(tree), "-p1", "--batch",
                          "--forward", "--fuzz=0", "-i", str(patch)],
                         capture_output=True, text=True, env=SH_ENV)
    return out.returncode, out.stdout + out.stderr


# --- patched_files -----------------------------------------------------------

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


@pytest.mark.parametrize("names", [[k] for k in sorted(PATCHES)] +
                         [sorted(PATCHES), ["git", "plain"]])
def test_patched_files_as_the_bash_awk(tmp_path, names):
    paths = [_write(tmp_path / (n + ".patch"), PATCHES[n], newline="")
             for n in names]
    expected = _bash(AWK_FILES, paths).splitlines()
    assert builds.patched_files(paths) == expected


def test_patched_files_values(tmp_path):
    def files(name):
        return builds.patched_files([_write(tmp_path / (name + ".patch"),
                                            PATCHES[name], newline="")])
    assert files("plain") == ["src/backend/f.c"]
    assert files("git") == ["src/backend/f.c", "src/include/g.h"]
    assert files("crlf") == ["src/crlf.c"]
    assert files("new-file") == ["src/new.c"]
    assert files("removed-file") == ["src/old.c"]
    assert files("renamed") == ["src/after.c", "src/before.c"]
    assert files("no-prefix") == ["top.c"]
    assert files("deep-prefix") == ["src/deep/d.c"]


def test_patched_files_of_no_patch():
    assert builds.patched_files([]) == []


# --- patch_failure, on real patch output -------------------------------------

def _stale(tmp_path):
    """A tree whose src/f.c changed since the patch was made: the hunk's
    context is gone."""
    patch = _write(tmp_path / "stale.patch", _diff(
        tmp_path, "src/f.c", TEN, TEN.replace("line 5\n", "LINE 5\n")))
    _write(tmp_path / "tree" / "src" / "f.c",
           TEN.replace("line 4\n", "line four\n"))
    return patch


def _failures(tmp_path):
    """Real outputs of a failing patch, by what went wrong."""
    out = {}
    tree = tmp_path / "tree"
    rc, out["stale"] = _patch(tree, _stale(tmp_path))
    assert rc == 1
    # two files, a hunk failing in each, one applying
    twenty = "".join("row %d\n" % i for i in range(1, 41))
    p = _diff(tmp_path, "a.c", TEN, TEN.replace("line 2\n", "LINE 2\n")) + \
        _diff(tmp_path, "sub/b.c", twenty, twenty.replace(
            "row 3\n", "ROW 3\n").replace("row 30\n", "ROW 30\n"))
    multi = _write(tmp_path / "multi.patch", p)
    _write(tree / "a.c", TEN.replace("line 1\n", "line one\n"))
    _write(tree / "sub" / "b.c", twenty.replace("row 31\n", "row xxxi\n"))
    rc, out["two-files"] = _patch(tree, multi)
    assert rc == 1
    # applied already
    good = _write(tmp_path / "good.patch", _diff(
        tmp_path, "c.c", TEN, TEN.replace("line 7\n", "LINE 7\n")))
    _write(tree / "c.c", TEN)
    assert _patch(tree, good)[0] == 0
    rc, out["reversed"] = _patch(tree, good)
    assert rc == 1
    # a file the tree lacks
    rc, out["missing-file"] = _patch(tree, _write(
        tmp_path / "missing.patch", _diff(tmp_path, "nowhere.c", "x\n",
                                          "y\n")))
    assert rc == 1
    # not a patch; a hunk cut short
    rc, out["garbage"] = _patch(tree, _write(tmp_path / "garbage.patch",
                                             "just text\n"))
    assert rc == 2
    rc, out["malformed"] = _patch(tree, _write(
        tmp_path / "malformed.patch",
        "--- a/c.c\n+++ b/c.c\n@@ -1,3 +1,3 @@\n-line 1\n+LINE 1\nbogus\n"))
    assert rc == 2
    # a file with CRLF line ends, a patch with LF ones
    _write(tree / "dos.c", "x\r\ny\r\n", newline="")
    rc, out["line-ends"] = _patch(tree, _write(
        tmp_path / "lf.patch", "--- a/dos.c\n+++ b/dos.c\n@@ -1,2 +1,2 @@\n"
        "-x\n+z\n y\n"))
    assert rc == 1
    # names that patch quotes: in '' (a blank), in "" (a ')
    _write(tree / "my file.c", "one\ntwo\n")
    rc, out["spaced-name"] = _patch(tree, _write(
        tmp_path / "spaced.patch", "--- a/my file.c\t2024-01-01\n"
        "+++ b/my file.c\t2024-01-01\n@@ -1,2 +1,2 @@\n-ONE\n+uno\n two\n"))
    assert rc == 1 and "patching file 'my file.c'" in out["spaced-name"]
    _write(tree / "it's.c", TEN)
    rc, out["apostrophe"] = _patch(tree, _write(
        tmp_path / "quoted.patch", _diff(
            tmp_path, "it's.c", TEN.replace("line 3\n", "old 3\n"),
            TEN.replace("line 3\n", "new 3\n"))))
    assert rc == 1 and "patching file \"it's.c\"" in out["apostrophe"]
    return out


def test_patch_failure_as_the_bash_awk(tmp_path):
    for what, text in _failures(tmp_path).items():
        assert builds.patch_failure(text) == _bash(AWK_WHY, stdin=text), what


def test_patch_failure_values(tmp_path):
    why = {k: builds.patch_failure(v) for k, v in _failures(tmp_path).items()}
    assert why["stale"] == "Hunk #1 FAILED at 2 of src/f.c"
    assert why["two-files"] == ("Hunk #1 FAILED at 1 of a.c; Hunk #2 FAILED "
                                "at 27 of sub/b.c")
    assert why["reversed"] == ("Reversed (or previously applied) patch "
                               "detected!  Skipping patch.")
    assert why["missing-file"] == "can't find file to patch at input line 3"
    assert why["garbage"] == ("patch: **** Only garbage was found in the "
                              "patch input.")
    assert why["malformed"] == "patch: **** malformed patch at line 6: bogus"
    assert why["line-ends"] == ("Hunk #1 FAILED at 1 (different line "
                                "endings) of dos.c")
    assert why["spaced-name"] == "Hunk #1 FAILED at 1 of my file.c"
    # the bash code dropped the ' only, so does the module
    assert why["apostrophe"] == 'Hunk #1 FAILED at 1 of "its.c"'


def test_patch_failure_without_a_reason():
    assert builds.patch_failure("") == "patch failed"
    assert builds.patch_failure("patching file x.c\n") == "patch failed"


# --- check_patches on a tree -------------------------------------------------

def _tree(tmp_path):
    """The base's source tree: src/f.c and src/g.c, ten lines each."""
    src = tmp_path / "src-tree"
    _write(src / "src" / "f.c", TEN)
    _write(src / "src" / "g.c", TEN)
    return str(src)


def _variant(*patches):
    return spec.Variant("onefl", tuple(str(p) for p in patches))


def _snapshot(src):
    return {os.path.join(d, f): open(os.path.join(d, f)).read()
            for d, _, fs in os.walk(src) for f in fs}


def test_good_patches_pass(tmp_path, capsys):
    src = _tree(tmp_path)
    before = _snapshot(src)
    p1 = _write(tmp_path / "p1.patch", _diff(
        tmp_path, "src/f.c", TEN, TEN.replace("line 5\n", "LINE 5\n")))
    # the second builds on the first, and adds a file
    p2 = _write(tmp_path / "p2.patch", _diff(
        tmp_path, "src/f.c", TEN.replace("line 5\n", "LINE 5\n"),
        TEN.replace("line 5\n", "LINE 5\nextra\n")) +
        "--- /dev/null\n+++ b/src/new.c\n@@ -0,0 +1 @@\n+new\n")
    builds.check_patches(_variant(p1, p2), src, "18")
    # nothing printed, the base's tree untouched
    assert capsys.readouterr().err == ""
    assert _snapshot(src) == before


def test_offsets_are_fine(tmp_path):
    src = _tree(tmp_path)
    _write(os.path.join(src, "src", "f.c"), "new 1\nnew 2\n" + TEN)
    p = _write(tmp_path / "p.patch", _diff(
        tmp_path, "src/f.c", TEN, TEN.replace("line 5\n", "LINE 5\n")))
    copy = tmp_path / "offset-copy"
    _write(copy / "src" / "f.c", "new 1\nnew 2\n" + TEN)
    rc, out = _patch(copy, p)
    assert rc == 0 and "offset 2 lines" in out
    builds.check_patches(_variant(p), src, "18")


def test_stale_patch_raises(tmp_path, capsys):
    src = _tree(tmp_path)
    _write(os.path.join(src, "src", "f.c"),
           TEN.replace("line 4\n", "line four\n"))
    p = _write(tmp_path / "stale.patch", _diff(
        tmp_path, "src/f.c", TEN, TEN.replace("line 5\n", "LINE 5\n")))
    with pytest.raises(builds.BuildError) as e:
        builds.check_patches(_variant(p), src, "18")
    assert str(e.value) == (
        "variant onefl: %s does not apply after the core series of "
        "PostgreSQL 18: Hunk #1 FAILED at 2 of src/f.c; nothing was built"
        % p)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("lockstudy: patch -p1 --forward --fuzz=0 -i %s, after "
                      "the series and the variant's patches before it:" % p)
    assert "    patching file src/f.c" in err
    assert "    Hunk #1 FAILED at 2." in err
    assert all(line.startswith("    ") for line in err[1:])


def test_the_failing_patch_is_named(tmp_path):
    """The first applies, the second conflicts with it."""
    src = _tree(tmp_path)
    p1 = _write(tmp_path / "p1.patch", _diff(
        tmp_path, "src/g.c", TEN, TEN.replace("line 5\n", "LINE 5\n")))
    p2 = _write(tmp_path / "p2.patch", _diff(
        tmp_path, "src/g.c", TEN, TEN.replace("line 6\n", "LINE 6\n")))
    builds.check_patches(_variant(p2), src, "15")
    with pytest.raises(builds.BuildError) as e:
        builds.check_patches(_variant(p1, p2), src, "15")
    assert str(e.value) == (
        "variant onefl: %s does not apply after the core series of "
        "PostgreSQL 15: Hunk #1 FAILED at 3 of src/g.c; nothing was built"
        % p2)


def test_no_fuzz(tmp_path):
    """A hunk whose outer context line differs applies with patch's
    default fuzz, not with the check's."""
    src = _tree(tmp_path)
    old = TEN.replace("line 2\n", "LINE 2\n")
    p = _write(tmp_path / "fuzzy.patch", _diff(
        tmp_path, "src/f.c", old, old.replace("line 5\n", "LINE 5\n")))
    copy = tmp_path / "fuzz-copy"
    _write(copy / "src" / "f.c", TEN)
    out = subprocess.run(["patch", "-d", str(copy), "-p1", "--batch", "-i",
                          p], capture_output=True, text=True, env=SH_ENV)
    assert out.returncode == 0 and "with fuzz 1" in out.stdout
    with pytest.raises(builds.BuildError) as e:
        builds.check_patches(_variant(p), src, "18")
    assert "Hunk #1 FAILED at 2 of src/f.c" in str(e.value)


def test_a_file_the_base_lacks(tmp_path):
    src = _tree(tmp_path)
    p = _write(tmp_path / "p.patch", _diff(tmp_path, "src/nowhere.c", "x\n",
                                           "y\n"))
    with pytest.raises(builds.BuildError) as e:
        builds.check_patches(_variant(p), src, "18")
    assert str(e.value).endswith(": can't find file to patch at input line "
                                 "3; nothing was built")


def test_crlf_patch_applies(tmp_path):
    src = _tree(tmp_path)
    p = _write(tmp_path / "crlf.patch", _diff(
        tmp_path, "src/f.c", TEN, TEN.replace("line 5\n", "LINE 5\n")
    ).replace("\n", "\r\n"), newline="")
    builds.check_patches(_variant(p), src, "18")


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


def test_patch_output_that_is_not_utf8(tmp_path):
    src = _tree(tmp_path)
    p = str(tmp_path / "latin1.patch")
    with open(p, "wb") as f:
        f.write(b"From: J\xfcrgen <j@example.org>\nSubject: fix\n\n"
                b"--- a/src/nowhere.c\n+++ b/src/nowhere.c\n@@ -1 +1 @@\n"
                b"-x\n+y\n")
    with pytest.raises(builds.BuildError) as e:
        builds.check_patches(_variant(p), src, "18")
    assert str(e.value).endswith(": can't find file to patch at input line "
                                 "6; nothing was built")


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
