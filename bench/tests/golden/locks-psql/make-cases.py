#!/usr/bin/python3
"""Writes cases.json: what psql 18 printed for small queries, the cases of
the psql emulation of bench/lockstudy/tables.py (test_tables.py).

Each case: the query, and the header, cells (None for NULL) and alignment
(psql right-aligns numbers) that the test gives psql_aligned() or
psql_unaligned(), written here by hand from the query; "output" is psql's
stdout.  Run once against a scratch server (PGHOST, PGPORT, PGDATABASE in
the environment; a UTF-8 database, client encoding UTF8), with the psql of
build/pg18-stock on PATH:
    psql -X -q -P footer=off -c QUERY        (aligned)
    psql -X -q -At -F ' ' -c QUERY           (unaligned)
"""

import json
import subprocess

CASES = [
    ("zero rows", "aligned",
     "SELECT 1::int AS n, 'x'::text AS name WHERE false",
     ["n", "name"], [], [True, False]),
    ("one column, one row", "aligned",
     "SELECT 42::bigint AS answer", ["answer"], [["42"]], [True]),
    ("centring: odd and even space around short headers", "aligned",
     "SELECT 'abcdef'::text AS ab, 1234567::int AS n, 'xyz'::text AS abcd",
     ["ab", "n", "abcd"], [["abcdef", "1234567", "xyz"]],
     [False, True, False]),
    ("headers wider than the values", "aligned",
     "SELECT 1::int AS \"a long header\", 'v'::text AS \"another one\"",
     ["a long header", "another one"], [["1", "v"]], [True, False]),
    ("NULL in every position, the last column right-aligned", "aligned",
     "SELECT * FROM (VALUES ('a'::text, 1.5::numeric, NULL::numeric), "
     "(NULL, NULL, 2.25), ('ccc', 10, NULL)) AS t(name, x, y)",
     ["name", "x", "y"],
     [["a", "1.5", None], [None, None, "2.25"], ["ccc", "10", None]],
     [False, True, True]),
    ("NULL and short text in a left-aligned last column", "aligned",
     "SELECT * FROM (VALUES (1::int, 'long text'::text), (22, NULL), "
     "(333, 'x')) AS t(n, what)",
     ["n", "what"], [["1", "long text"], ["22", None], ["333", "x"]],
     [True, False]),
    ("an empty string and a NULL", "aligned",
     "SELECT * FROM (VALUES (''::text, 0::int), (NULL, 7)) AS t(s, k)",
     ["s", "k"], [["", "0"], [None, "7"]], [False, True]),
    ("wide and combining characters", "aligned",
     "SELECT * FROM (VALUES ('\u65e5\u672c'::text, 1::int), "
     "('e\u0301t\u00e9', 22)) AS t(word, n)",
     ["word", "n"], [["\u65e5\u672c", "1"], ["e\u0301t\u00e9", "22"]],
     [False, True]),
    ("unaligned, blank separator, NULL", "unaligned",
     "SELECT * FROM (VALUES (1::int, 'a b'::text, 0.50::numeric), "
     "(2, NULL, NULL)) AS t(r, name, x)",
     None, [["1", "a b", "0.50"], ["2", None, None]], None),
    ("unaligned, zero rows", "unaligned",
     "SELECT 1 WHERE false", None, [], None),
]


def psql(form: str, query: str) -> str:
    opts = ["-P", "footer=off"] if form == "aligned" else ["-At", "-F", " "]
    return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"]
                          + opts + ["-c", query], check=True,
                          capture_output=True, encoding="utf-8").stdout


def main() -> None:
    out = [{"name": n, "form": f, "query": q, "header": h, "rows": r,
            "right": a, "output": psql(f, q)}
           for n, f, q, h, r, a in CASES]
    with open("cases.json", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
