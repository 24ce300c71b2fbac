"""Tests of lockstudy.data: reading runs.csv, locks.csv and spins.csv, the
column names old and new, and every malformed file's message."""

import pytest

from lockstudy import data
from lockstudy.data import InputError, Run

HEADER = "variant,clients,round,position,tps,seconds,transactions\n"


def write(tmp_path, text, name="runs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_read_runs(tmp_path):
    path = write(tmp_path, HEADER + "tas,1,1,1,100.5,5.0,502\n"
                 "ttas,8,2,,7e3,5.0,\n")
    assert data.read_runs(path) == [Run("tas", 1, 1, 100.5, 1),
                                    Run("ttas", 8, 2, 7000.0, None)]
    assert data.read_runs(path)[0].key == ("tas", 1, 1)


def test_read_runs_old_column_name_and_fewer_columns(tmp_path):
    path = write(tmp_path, "strategy,clients,round,tps\ntas,2,3,9\n")
    assert data.read_runs(path) == [Run("tas", 2, 3, 9.0)]


def test_read_runs_transactions(tmp_path):
    path = write(tmp_path, HEADER + "tas,1,1,1,100,5.0,502\n")
    assert data.read_runs(path, need_transactions=True)[0].transactions == 502
    assert data.read_runs(path)[0].transactions is None


@pytest.mark.parametrize("text, need, message", [
    ("strategy,clients,tps\ntas,1,5\n", False,
     "{}: missing column round"),
    ("variant,clients\n", False, "{}: missing columns round, tps"),
    ("", False, "{}: missing columns variant, clients, round, tps"),
    ("variant,clients,round,tps\n", False, "{} has no runs"),
    ("variant,clients,round,tps\ntas,x,1,5\n", False,
     "{} line 2: bad clients, round, position or tps"),
    ("variant,clients,round,position,tps\ntas,1,1,1,5\ntas,1,2,1.5,5\n",
     False, "{} line 3: bad clients, round, position or tps"),
    ("variant,clients,round,tps\ntas,1,1,fast\n", False,
     "{} line 2: bad clients, round, position or tps"),
    ("variant,clients,round,tps\ntas,1,1\n", False,
     "{} line 2: bad clients, round, position or tps"),
    ("variant,clients,round,tps\ntas,1,1,5\n", True,
     "{}: missing column transactions"),
    (HEADER + "tas,1,1,1,5,5.0,0\n", True,
     "{} line 2: transactions 0: not a positive number"),
    (HEADER + "tas,1,1,1,5,5.0,inf\n", True,
     "{} line 2: transactions inf: not a positive number"),
    (HEADER + "tas,1,1,1,5,5.0,\n", True,
     "{} line 2: transactions : not a positive number"),
])
def test_read_runs_errors(tmp_path, text, need, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        data.read_runs(path, need_transactions=need)
    assert str(e.value) == message.format(path)


def test_read_runs_missing_file(tmp_path):
    path = str(tmp_path / "missing.csv")
    with pytest.raises(InputError) as e:
        data.read_runs(path)
    assert str(e.value) == "cannot read %s: No such file or directory" % path


@pytest.mark.parametrize("text, want", [
    ("1.5", 1.5), ("-2", -2.0), ("1e3", 1000.0), ("nan", None),
    ("-inf", None), ("", None), ("x", None), (None, None),
])
def test_number(text, want):
    assert data.number(text) == want


def test_require_columns():
    data.require_columns("f", ["a", "b"], ["b"])
    with pytest.raises(InputError, match="^f: missing column c$"):
        data.require_columns("f", ["a", "b"], ["c", "b"])
    with pytest.raises(InputError, match="^f: missing columns a, c$"):
        data.require_columns("f", None, ["a", "c"])


def test_read_rows(tmp_path):
    path = write(tmp_path, "strategy,clients,round,tranche,blocks\n"
                 "tas,1,2,WALWrite,7\n", "locks.csv")
    assert data.read_rows(path, ["tranche", "blocks"]) == [
        (2, ("tas", 1, 2), {"strategy": "tas", "clients": "1", "round": "2",
                            "tranche": "WALWrite", "blocks": "7"})]
    with pytest.raises(InputError) as e:
        data.read_rows(path, ["tranche", "spins"])
    assert str(e.value) == "%s: missing column spins" % path
    bad = write(tmp_path, "variant,clients,round\ntas,1,x\n", "spins.csv")
    with pytest.raises(InputError) as e:
        data.read_rows(bad, [])
    assert str(e.value) == "%s line 2: bad clients or round" % bad


def test_index_runs():
    runs = [Run("a", 1, 1, 5.0), Run("a", 1, 2, 6.0), Run("b", 1, 1, 7.0)]
    assert data.index_runs(runs) == {r.key: r for r in runs}
    with pytest.raises(InputError) as e:
        data.index_runs(runs + [Run("a", 1, 2, 8.0)])
    assert str(e.value) == "two runs for variant a, 1 clients, round 2"


def test_report_order():
    runs = [Run("b", 1, 1, 1.0), Run("a", 1, 1, 1.0), Run("b", 2, 1, 1.0)]
    assert data.report_order(runs, None, "variants", "f") == (["b", "a"],
                                                              ["b", "a"])
    assert data.report_order(runs, [], "variants", "f")[0] == ["b", "a"]
    assert data.report_order(runs, ["a", "c", "b"], "variants", "f") == \
        (["a", "c", "b"], ["b", "a"])
    with pytest.raises(InputError) as e:
        data.report_order(runs, ["c"], "strategies", "runs.csv")
    assert str(e.value) == "runs.csv has strategies not in --strategies: b a"
