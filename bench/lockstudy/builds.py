"""The variants' servers: the patch check, the builds, the plan's build list.

Variants without patches run the server of PG_CONFIG (the base build);
unpatched variants the stock server of STOCK_PG_CONFIG, checked to be a
build of the same PostgreSQL as the base, without patches, with the
base's build flags (stock_build()).
Each distinct list of patches is one build: the base's source, configure
flags and core patch series plus the patches, built by
scripts/build-server.sh (cached by the hash of its patches) into
VARIANT_DIR/<hash>/, with pg_lockstat built and installed into it from a
copy of the checkout's sources (VARIANT_DIR/<hash>-ext/).  Every variant's
patches are first applied to a copy of the files they touch, taken from
the base's patched source tree: a patch that does not apply stops the study
before any build, naming the patch, the file and the hunk.  All of this
happens before the first run, as the calling user (root's builds go to
root's cache).

Calls spec (the variants).  Raises BuildError with the user's message.
"""

import glob
import hashlib
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from typing import Dict, List, Sequence

from . import spec

# the stamp of a variant's pg_lockstat copy: made from the sources only
EXT_STAMP = "sources 2"
# the description of the unpatched server, in the plan and versions.txt
STOCK_DESCRIPTION = "the unpatched server (STOCK_PG_CONFIG)"
# the lines of a build's key.txt that an unpatched server must share with
# the base: what it was built from and how
SAME_INPUTS = ("arch", "postgresql", "source", "configure", "configure-env",
               "extra-cflags", "make")


class BuildError(Exception):
    """A build, or the check before it, failed; the message says which."""


@dataclass(frozen=True)
class Build:
    """The server a variant runs: its bindir, build key and what it is."""
    bindir: str
    key: str
    description: str

    @property
    def prefix(self) -> str:
        return os.path.dirname(self.bindir)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def server_major(bindir: str) -> str:
    """The major of the server of bindir ("18")."""
    out = subprocess.run([os.path.join(bindir, "pg_config"), "--version"],
                         capture_output=True, text=True).stdout
    m = re.match(r"PostgreSQL (\d+)", out)
    return m.group(1) if m else ""


def base_build(bindir: str) -> Build:
    """The base server, PG_CONFIG's."""
    return Build(bindir, _read(os.path.join(bindir, "..",
                                            ".pg_lockstat_build_key"))
                 or "unknown", "the base server (PG_CONFIG)")


def postgres_version(bindir: str) -> str:
    """What bindir's postgres --version prints ("postgres (PostgreSQL)
    18.1"), "" if it cannot be run."""
    try:
        return subprocess.run([os.path.join(bindir, "postgres"),
                               "--version"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def key_lines(bindir: str) -> List[str]:
    """The key.txt of the build-server.sh build installed above bindir
    (through its .pg_lockstat_build_src), [] for another installation."""
    src = _read(os.path.join(bindir, "..", ".pg_lockstat_build_src"))
    if not src:
        return []
    return _read(os.path.join(src, "..", "key.txt")).splitlines()


def _fields(keytxt: Sequence[str], name: str) -> List[str]:
    """The rest of each line of a build's key.txt that starts with name."""
    return [line[len(name) + 1:] for line in keytxt
            if line.startswith(name + " ")]


def series(top: str, major: str) -> List[str]:
    return sorted(glob.glob(os.path.join(top, "patches", "pg" + major,
                                         "*.patch")))


def check_base(study: spec.Study, top: str) -> Dict[str, str]:
    """That the base can carry patched variants: a build of
    build-server.sh with this checkout's core series, for this machine.
    Returns what the variants' builds need: the environment of
    build-server.sh, and the base's source tree ("src") and series."""
    base = os.path.join(study.bindir, "..")
    key = _read(os.path.join(base, ".pg_lockstat_build_key"))
    src = _read(os.path.join(base, ".pg_lockstat_build_src"))
    keytxt_path = os.path.join(src, "..", "key.txt") if src else ""
    if not key or not os.path.isdir(src) or not os.path.isfile(keytxt_path):
        raise BuildError("variants with patches are built like the base "
                         "server, so PG_CONFIG must be a server built by "
                         "scripts/build-server.sh (as make run does); %s is "
                         "not" % study.pg_config)
    keytxt = _read(keytxt_path).splitlines()
    prefix = os.path.normpath(base)
    if not _fields(keytxt, "patch"):
        raise BuildError("the base server %s has no core patch series (an "
                         "unpatched build); variants are built on the base's "
                         "series, so PG_CONFIG must be a server built with "
                         "it (make server)" % prefix)
    arch = _fields(keytxt, "arch")
    if arch:
        raise BuildError("the base server %s is a cross build (%s); variants "
                         "with patches are built for this machine only"
                         % (prefix, arch[0]))
    major = server_major(study.bindir)
    patches = series(top, major)
    if not os.path.isdir(os.path.join(top, "patches", "pg" + major)):
        raise BuildError("PostgreSQL %s has no core patch series in %s"
                         % (major, os.path.join(top, "patches", "pg" + major)))
    if [sha256(p) for p in patches] != [f.split()[0] for f in _fields(
            keytxt, "patch")]:
        raise BuildError("the base server %s was built with another core "
                         "patch series than %s; rebuild it first (make "
                         "server)" % (prefix, os.path.join(
                             top, "patches", "pg" + major)))
    env = {"PG_MAJOR": major,
           "CASSERT": "1" if any("--enable-cassert" in line
                                 for line in keytxt) else "",
           "EXTRA_CFLAGS": "".join(_fields(keytxt, "extra-cflags"))}
    env.update(_source(src, keytxt))
    return {"env": json.dumps(env), "src": src, "series": " ".join(patches),
            "key": key, "major": major}


def _source(src: str, keytxt: Sequence[str]) -> Dict[str, str]:
    """Where build-server.sh takes the source from: the base's cache if
    this user owns it, else the base's tarball from that cache."""
    cache = os.path.realpath(os.path.join(src, "..", "..", ".."))
    builds = os.path.join(cache, "builds")
    if os.path.isdir(builds) and os.stat(builds).st_uid == os.geteuid():
        return {"PG_CACHE_DIR": cache}
    sha = "".join(_fields(keytxt, "source tarball-sha256"))
    for stamp in glob.glob(os.path.join(cache, "src", "*.stamp")):
        fields = dict(line.split("=", 1)
                      for line in _read(stamp).splitlines() if "=" in line)
        tarball = os.path.join(cache, "downloads", fields.get("tarball", ""))
        if sha and fields.get("sha256") == sha and os.access(tarball,
                                                             os.R_OK):
            return {"PG_SOURCE": tarball}
    raise BuildError("cannot find the source tarball the base server was "
                     "built from (in %s, not writable by %s); run make run as "
                     "the user who built it"
                     % (cache, pwd.getpwuid(os.geteuid()).pw_name))


def patched_files(patches: Sequence[str]) -> List[str]:
    """The files that -p1 patches name ("---" and "+++" lines)."""
    files = set()
    for p in patches:
        with open(p, errors="replace") as f:
            for line in f:
                if line.startswith(("--- ", "+++ ")):
                    name = line.split()[1] if len(line.split()) > 1 else ""
                    if name and name != "/dev/null":
                        files.add(name.split("/", 1)[-1] if "/" in name
                                  else name)
    return sorted(files)


def patch_failure(output: str) -> str:
    """Why patch failed, from its output: the failed hunks and their files."""
    why: List[str] = []
    current = ""
    for line in output.splitlines():
        if line.startswith("patching file "):
            current = line[len("patching file "):].replace("'", "")
        m = re.match(r"(Hunk #\d+ FAILED.*?)\.?$", line)
        if m:
            why.append("%s of %s" % (m.group(1), current))
        elif not why and re.search(r"^can.t find file to patch|Reversed \(or "
                                   r"previously applied\)|malformed patch|"
                                   r"Only garbage", line):
            why.append(line)
    return "; ".join(why) if why else "patch failed"


def check_patches(variant: spec.Variant, src: str, major: str) -> None:
    """That the variant's patches apply, in order, without fuzz, to a copy
    of the files they touch in the base's tree.  No fuzz: a hunk whose
    context lines do not all match could land in the wrong place."""
    with tempfile.TemporaryDirectory(prefix="pg_lockstat-patch.") as tmp:
        for f in patched_files(variant.patches):
            if os.path.isfile(os.path.join(src, f)):
                os.makedirs(os.path.dirname(os.path.join(tmp, f)),
                            exist_ok=True)
                shutil.copy(os.path.join(src, f), os.path.join(tmp, f))
        for p in variant.patches:
            out = subprocess.run(["patch", "-d", tmp, "-p1", "--batch",
                                  "--forward", "--fuzz=0", "-i", p],
                                 capture_output=True, text=True,
                                 errors="replace")
            if out.returncode != 0:
                text = out.stdout + out.stderr
                print("%s: patch -p1 --forward --fuzz=0 -i %s, after the "
                      "series and the variant's patches before it:"
                      % (spec.ME, p), file=sys.stderr)
                for line in text.splitlines():
                    print("    " + line, file=sys.stderr)
                raise BuildError("variant %s: %s does not apply after the "
                                 "core series of PostgreSQL %s: %s; nothing "
                                 "was built" % (variant.name, p, major,
                                                patch_failure(text)))


def build_dir(base_key: str, patches: Sequence[str], variant_dir: str) -> str:
    """The directory of the build of these patches: named by a hash of the
    base's build key and the patches' contents."""
    text = base_key + "\n" + "".join(sha256(p) + "\n" for p in patches)
    return os.path.join(variant_dir,
                        hashlib.sha256(text.encode()).hexdigest()[:12])


def _build_server(variant: spec.Variant, vdir: str,
                  base: Dict[str, str], top: str) -> None:
    """scripts/build-server.sh for the variant, its output indented on
    stderr; a failure names the build log that build-server.sh named."""
    env = dict(os.environ, **json.loads(base["env"]))
    env.update(PATCHES=" ".join([base["series"]] + list(variant.patches)),
               STOCK="")
    proc = subprocess.Popen([os.path.join(top, "scripts", "build-server.sh"),
                             vdir], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, text=True,
                            errors="replace")
    log_named = ""
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stderr.write("    " + line)
        m = re.search(r"\((?:full )?log: ([^)]*)\)", line)
        if m:
            log_named = m.group(1)
    if proc.wait() != 0:
        raise BuildError("building variant %s failed%s; nothing was run"
                         % (variant.name, "; its build log is " + log_named
                            if log_named else ""))


def _build_products(directory: str, names: List[str]) -> List[str]:
    """What a copy of the sources leaves out: objects, libraries and the
    pg_lockstat_top binary, all built against the base's headers."""
    tool = os.path.join("tools", "pg_lockstat_top")
    return [n for n in names if n.endswith((".o", ".so", ".bc"))
            or (n == "pg_lockstat_top" and directory.endswith(tool))]


def _install_extension(variant: spec.Variant, vdir: str, key: str,
                       top: str) -> None:
    """pg_lockstat, compiled against the build's own headers from a copy
    of the sources only (not the checkout's objects, built against the
    base's headers), and installed into it.  The copy keeps the files'
    times, so a second study recompiles only what changed; a copy not
    stamped for this server starts over."""
    ext = vdir + "-ext"
    elog = ext + ".log"
    stamp = "%s %s" % (EXT_STAMP, key)
    if _read(os.path.join(ext, ".pg_lockstat_ext_key")) != stamp:
        shutil.rmtree(ext, ignore_errors=True)
    os.makedirs(ext, exist_ok=True)
    os.makedirs(os.path.join(ext, "scripts"), exist_ok=True)
    # with the generator of the files made from the counter table (the
    # install script, the query file) and the query file's template
    for item in ("Makefile", "pg_lockstat.control", "scripts/counters.pl"):
        shutil.copy2(os.path.join(top, item), os.path.join(ext, item))
    for item in ("extension", "tools", "integrations/prometheus"):
        shutil.copytree(os.path.join(top, item), os.path.join(ext, item),
                        ignore=_build_products, dirs_exist_ok=True)
    print("%s: installing pg_lockstat into variant %s's server (log: %s)"
          % (spec.ME, variant.name, elog), file=sys.stderr)
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    with open(elog, "w") as log:
        rc = subprocess.call(["make", "-C", ext, "PG_CONFIG=" + os.path.join(
            vdir, "bin", "pg_config"), "install"], stdout=log,
            stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        raise BuildError("building pg_lockstat for variant %s failed; see %s"
                         % (variant.name, elog))
    with open(os.path.join(ext, ".pg_lockstat_ext_key"), "w") as f:
        f.write(stamp + "\n")


def stock_build(study: spec.Study) -> Build:
    """The unpatched server of STOCK_PG_CONFIG, checked against the base:
    another installation, the same postgres --version and, where both are
    builds of build-server.sh, no patches and the same source, configure
    flags and CFLAGS (SAME_INPUTS).  BuildError otherwise: a tps ratio
    between two servers built differently measures the difference."""
    bindir = study.stock_bindir
    prefix = os.path.normpath(os.path.join(bindir, ".."))
    where = "the unpatched server %s (STOCK_PG_CONFIG)" % prefix
    if os.path.realpath(bindir) == os.path.realpath(study.bindir):
        raise BuildError("%s is the base server itself (PG_CONFIG); it must "
                         "be a build of the same source without the core "
                         "series (make server-stock)" % where)
    stock, base = postgres_version(bindir), postgres_version(study.bindir)
    if not stock or stock != base:
        raise BuildError("%s is %s, the base server %s; an unpatched "
                         "variant needs the same PostgreSQL version (make "
                         "server-stock builds it from the base's source)"
                         % (where, '"%s"' % stock if stock else
                            "a postgres that cannot be run", '"%s"' % base))
    keytxt = key_lines(bindir)
    if _fields(keytxt, "patch"):
        raise BuildError("%s was built with patches (%s); an unpatched "
                         "variant needs a build without them (make "
                         "server-stock)" % (where, " ".join(
                             f.split()[-1] for f in _fields(keytxt,
                                                            "patch"))))
    base_keytxt = key_lines(study.bindir)
    if keytxt and base_keytxt:
        for name in SAME_INPUTS:
            mine, theirs = _fields(keytxt, name), _fields(base_keytxt, name)
            if mine != theirs:
                raise BuildError(
                    "%s was built with another %s than the base server: "
                    '"%s" against "%s" (scripts/build-server.sh key.txt); '
                    "build it with the base's CASSERT and EXTRA_CFLAGS: "
                    "STOCK=1 scripts/build-server.sh <dir>, then "
                    "STOCK_PG_CONFIG=<dir>/bin/pg_config"
                    % (where, name, " ".join(mine), " ".join(theirs)))
    key = _read(os.path.join(prefix, ".pg_lockstat_build_key")) or "unknown"
    return Build(bindir, key, STOCK_DESCRIPTION)


def _build_variant(variant: spec.Variant, study: spec.Study,
                   base: Dict[str, str], top: str) -> Build:
    vdir = build_dir(base["key"], variant.patches, study.variant_dir)
    description = "the series + " + " ".join(os.path.basename(p)
                                             for p in variant.patches)
    print("%s: building variant %s (%s) into %s"
          % (spec.ME, variant.name, description, vdir), file=sys.stderr)
    _build_server(variant, vdir, base, top)
    key = _read(os.path.join(vdir, ".pg_lockstat_build_key"))
    version = [postgres_version(d)
               for d in (os.path.join(vdir, "bin"), study.bindir)]
    if version[0] != version[1]:
        raise BuildError("variant %s was built from another PostgreSQL than "
                         "the base: %s" % (variant.name, version[0]))
    _install_extension(variant, vdir, key, top)
    return Build(os.path.join(vdir, "bin"), key, description)


def build_all(study: spec.Study, top: str) -> List[Build]:
    """The build of every variant, in the order of the variants: the
    unpatched server checked and every patch checked first, then each
    distinct list of patches built once."""
    base = base_build(study.bindir)
    stock = stock_build(study) if study.unpatched else None
    if not any(v.patches for v in study.variants):
        return [stock if v.unpatched and stock else base
                for v in study.variants]
    info = check_base(study, top)
    for v in study.variants:
        if v.patches:
            check_patches(v, info["src"], info["major"])
    made: Dict[tuple, Build] = {}
    builds = []
    for v in study.variants:
        if v.unpatched and stock:
            builds.append(stock)
            continue
        if not v.patches:
            builds.append(base)
            continue
        if v.patches not in made:
            made[v.patches] = _build_variant(v, study, info, top)
        builds.append(made[v.patches])
    if os.geteuid() == 0 and os.path.isdir(study.variant_dir):
        # the unprivileged pass runs them
        subprocess.call(["chmod", "-R", "a+rX", study.variant_dir])
    return builds


def save(builds: Sequence[Build], path: str) -> None:
    """The builds, for the unprivileged pass of a study started as root."""
    with open(path, "w") as f:
        json.dump([asdict(b) for b in builds], f)


def load(path: str, count: int) -> List[Build]:
    """The builds that save() wrote, one per variant."""
    try:
        with open(path) as f:
            builds = [Build(**b) for b in json.load(f)]
    except (OSError, ValueError, TypeError) as e:
        raise BuildError("cannot read the builds of the first pass from %s: "
                         "%s" % (path, e))
    if len(builds) != count:
        raise BuildError("internal: %s has %d builds for %d variants"
                         % (path, len(builds), count))
    return builds


def plan_lines(names: Sequence[str], variants: Sequence[spec.Variant],
               builds: Sequence[Build]) -> List[str]:
    """The plan's builds, each once, and which variant runs which."""
    number: Dict[str, int] = {}
    lines = []
    for b in builds:
        if b.bindir not in number:
            number[b.bindir] = len(number) + 1
            lines.append("build %d: %s: %s (build key %s)"
                         % (number[b.bindir], b.description, b.prefix, b.key))
    for v, b in zip(variants, builds):
        settings = ", ".join(v.settings_lines())
        lines.append("variant %s: build %d%s" % (
            v.name, number[b.bindir], ", settings " + settings
            if settings else ""))
    return lines
