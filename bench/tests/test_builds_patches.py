"""Tests of lockstudy.builds' patch check, without building: the files a
patch touches, why patch failed, and the check that every variant's
patches apply.

The expected values come from the bash code the module replaces, run
here on the same input: run-study.sh's awk for the patched files and for
patch's failure.  patch is GNU patch, run for real with the check's
options on a small tree in tmp_path.  No server, no build.
"""

import os
import subprocess

import pytest

from lockstudy import builds, spec
from test_builds import PATCHES, SH_ENV, _bash, _write

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

TEN = "".join("line %d\n" % i for i in range(1, 11))


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
