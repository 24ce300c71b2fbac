"""VARIANTS and STRATEGIES: the variants a study compares, checked.

A variant has a name, patch files applied after the project's core series
(none: the server of PG_CONFIG) and server settings; or it is "unpatched":
the stock server of STOCK_PG_CONFIG, without pg_lockstat
(shared_preload_libraries = '').  STRATEGIES="a b" is the shorthand of
VARIANTS="a: pg_lockstat.spin_strategy=a; b: pg_lockstat.spin_strategy=b".

Every refusal raises SpecError with the message the user sees.  Calls
spec (the types).
"""

import os
import pwd
import re
from typing import List, Sequence, Tuple

from .spec import SpecError, Variant

STRATEGIES = ("default", "tas", "ttas_spin", "ttas", "ttas_backoff")
# settings that the study itself sets, since its clients connect through them
OWN_SETTINGS = ("port", "listen_addresses", "unix_socket_directories")
# the item of VARIANTS that makes a variant run the unpatched server
UNPATCHED = "unpatched"


def parse_setting(vname: str, item: str,
                  seen: Sequence[str]) -> Tuple[str, str]:
    """A setting item name=value of variant vname, checked."""
    name, value = item.split("=", 1)
    where = "VARIANTS: variant %s" % vname
    if not re.fullmatch(r"[a-z_][a-z0-9_.]*", name):
        raise SpecError('%s: bad setting name "%s" in "%s" (name=value, the '
                        'name in lower case)' % (where, name, item))
    if not value or re.search(r"['\\\"#]", value):
        raise SpecError('%s: bad value in "%s" (not empty, no quotes, '
                        'backslashes or #)' % (where, item))
    if name in seen:
        raise SpecError("VARIANTS: variant %s sets %s twice" % (vname, name))
    if name in OWN_SETTINGS:
        raise SpecError("%s: %s is set by the study itself (its clients "
                        "connect through it)" % (where, name))
    if name == "pg_lockstat.spin_strategy" and value not in STRATEGIES:
        raise SpecError('%s: unknown strategy "%s" (valid: %s)'
                        % (where, value, " ".join(STRATEGIES)))
    return name, value


def unpatched_settings(vname: str, patches: Sequence[str],
                       settings: Sequence[Tuple[str, str]]
                       ) -> Tuple[Tuple[str, str], ...]:
    """The settings of the unpatched variant vname, checked:
    shared_preload_libraries = '' first unless they set it.  The stock
    server has neither the core series nor pg_lockstat: SpecError for
    patch files, a pg_lockstat.* setting or a shared_preload_libraries
    that names pg_lockstat."""
    where = "VARIANTS: variant %s" % vname
    if patches:
        raise SpecError('%s: "%s" and patch files together (%s); an '
                        'unpatched variant runs the stock server of '
                        'STOCK_PG_CONFIG as it is built, without the core '
                        'series' % (where, UNPATCHED, " ".join(patches)))
    for name, value in settings:
        if name.startswith("pg_lockstat."):
            raise SpecError("%s: %s is a setting of pg_lockstat, which the "
                            "unpatched server does not load"
                            % (where, name))
        if name == "shared_preload_libraries" and "pg_lockstat" in [
                x.strip() for x in value.split(",")]:
            raise SpecError("%s: the unpatched server cannot load "
                            "pg_lockstat (shared_preload_libraries=%s)"
                            % (where, value))
    if "shared_preload_libraries" in [n for n, _ in settings]:
        return tuple(settings)
    return (("shared_preload_libraries", ""),) + tuple(settings)


def resolve_patch(vname: str, item: str, caller_pwd: str, top: str) -> str:
    """The absolute path of patch file item of variant vname: relative to
    the directory of the call, else to the checkout; checked."""
    where = "VARIANTS: variant %s" % vname
    hint = ""
    if os.path.isabs(item):
        path = item
    else:
        path = os.path.join(caller_pwd, item)
        hint = " (relative to %s%s)" % (
            caller_pwd, "" if caller_pwd == top else " or to " + top)
        if not os.path.exists(path):
            path = os.path.join(top, item)
    if not os.path.exists(path):
        raise SpecError('%s: patch file "%s" not found%s; a setting is '
                        'name=value, without spaces' % (where, item, hint))
    if not os.path.isfile(path):
        raise SpecError('%s: patch file "%s" is not a regular file'
                        % (where, item))
    if not os.access(path, os.R_OK):
        raise SpecError('%s: patch file "%s" cannot be read by %s'
                        % (where, item, pwd.getpwuid(os.geteuid()).pw_name))
    path = os.path.join(os.path.realpath(os.path.dirname(path)),
                        os.path.basename(path))
    if re.search(r"\s", path):
        raise SpecError('%s: the path of patch file "%s" has a space; move or '
                        'link it elsewhere' % (where, path))
    with open(path, "rb") as f:
        if not any(line.startswith(b"+++ ") for line in f):
            raise SpecError('%s: patch file "%s" has no unified diff in it '
                            '(no +++ line)' % (where, item))
    return path


def parse_variant(spec: str, caller_pwd: str, top: str,
                  check_patches: bool = True,
                  seen: Sequence[str] = ()) -> Variant:
    """One "name[: item ...]" of VARIANTS, after the variants named seen:
    each item "unpatched", a setting name=value or a patch file.  Without
    check_patches (the unprivileged pass, whose builds were made before)
    patch items are kept as given."""
    name, _, items = spec.partition(":")
    name = name.strip()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,30}", name):
        raise SpecError('VARIANTS: bad variant name "%s" in "%s" (lower-case '
                        'letters, digits, _ and -, at most 31; the form is '
                        '"name: patch-file ... setting=value ...; name: ..."'
                        ')' % (name, spec))
    if name in seen:
        raise SpecError('VARIANTS: variant "%s" appears twice' % name)
    patches: List[str] = []
    settings: List[Tuple[str, str]] = []
    unpatched = False
    for item in items.split():
        if item == UNPATCHED:
            if unpatched:
                raise SpecError('VARIANTS: variant %s says "%s" twice'
                                % (name, UNPATCHED))
            unpatched = True
            continue
        if re.match(r"[A-Za-z_][A-Za-z0-9_.]*=", item):
            settings.append(parse_setting(name, item,
                                          [s for s, _ in settings]))
            continue
        path = resolve_patch(name, item, caller_pwd, top) \
            if check_patches else item
        if path in patches:
            raise SpecError('VARIANTS: variant %s lists patch file "%s" twice'
                            % (name, item))
        patches.append(path)
    if unpatched:
        return Variant(name, (), unpatched_settings(name, patches, settings),
                       None, True)
    strategy = dict(settings).get("pg_lockstat.spin_strategy")
    return Variant(name, tuple(patches), tuple(settings), strategy)


def parse_variants(text: str, caller_pwd: str, top: str,
                   check_patches: bool = True) -> Tuple[Variant, ...]:
    """VARIANTS: variants separated by ";" or newlines."""
    variants: List[Variant] = []
    for spec in text.replace("\n", ";").split(";"):
        if not spec.strip():
            continue
        variants.append(parse_variant(spec, caller_pwd, top, check_patches,
                                      [w.name for w in variants]))
    if not variants:
        raise SpecError("VARIANTS is empty")
    return tuple(variants)


def parse_strategies(text: str) -> Tuple[Variant, ...]:
    """STRATEGIES: each a variant that sets only its spin strategy."""
    variants: List[Variant] = []
    for s in text.split():
        if s not in STRATEGIES:
            raise SpecError('unknown strategy "%s" in STRATEGIES (valid: %s)'
                            % (s, " ".join(STRATEGIES)))
        if s in [v.name for v in variants]:
            raise SpecError('strategy "%s" appears twice in STRATEGIES' % s)
        variants.append(Variant(s, (), (("pg_lockstat.spin_strategy", s),),
                                s))
    if not variants:
        raise SpecError("STRATEGIES is empty")
    return tuple(variants)
