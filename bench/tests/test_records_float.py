"""Tests of lockstudy.records.pg_float(): a number as the study records
it, printed as PostgreSQL's float8out does (shortest round-trip digits;
fixed-point for decimal exponents from -4 to 14, else d.ddde+XX),
checked against a reference written here from src/common/d2s.c's rules,
against the outputs of PostgreSQL's regression test float8, and on the
tps and run times a study records.  No server.
"""

import decimal
import math
import random
import struct

import pytest

from lockstudy import records


# --- pg_float ----------------------------------------------------------------

def float8out(x):
    """PostgreSQL's float8out with extra_float_digits = 1 (the default):
    the shortest digits that read back as x (Python's repr has them too),
    laid out as src/common/d2s.c's to_chars() does.  (Above 1e16 PG's Ryu
    keeps the exact digits of some integers, 1.8014398509481992e+16 for
    repr's 1.801439850948199e+16; no tps or run time gets there.)"""
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    t = decimal.Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, t.digits)).rstrip("0")
    exp = len(t.digits) + t.exponent - 1
    if -4 <= exp < 15:
        if exp < 0:
            return sign + "0." + "0" * (-exp - 1) + digits
        whole = digits[:exp + 1].ljust(exp + 1, "0")
        frac = digits[exp + 1:]
        return sign + whole + ("." + frac if frac else "")
    return "%s%s%se%s%02d" % (sign, digits[0],
                              "." + digits[1:] if len(digits) > 1 else "",
                              "-" if exp < 0 else "+", abs(exp))


@pytest.mark.parametrize("text, expected", [
    ("5.010", "5.01"), ("5.0", "5"), ("5", "5"), ("5.000", "5"),
    ("13646.339097", "13646.339097"), ("13646.339000", "13646.339"),
    ("0.000", "0"), ("0.100", "0.1"), ("100.000", "100"),
    ("1234.500000", "1234.5"), ("0.0001", "0.0001"), ("0.00001", "1e-05"),
    ("0.000012", "1.2e-05"), ("123456789012345", "123456789012345"),
    ("99999999999999.9", "99999999999999.9"), ("1e16", "1e+16"),
    ("0.1234567890123456789", "0.12345678901234568"),
    ("12345678901234567890", "1.2345678901234567e+19")])
def test_pg_float(text, expected):
    assert float8out(float(text)) == expected  # the reference itself
    assert records.pg_float(text) == expected


# (the bits of a double, float8out's text) from PostgreSQL 18's
# src/test/regress/expected/float8.out
FLOAT8_OUT = [
    ("3ee4f8b588e368f1", "1e-05"),
    ("3f1a36e2eb1c432c", "9.999999999999999e-05"),
    ("3f1a36e2eb1c432d", "0.0001"),
    ("3f847ae147ae147a", "0.009999999999999998"),
    ("3feffffffffffff0", "0.9999999999999982"),
    ("3ff0000000000001", "1.0000000000000002"), ("3ff3333333333333", "1.2"),
    ("4024000000000000", "10"), ("4059000000000001", "100.00000000000001"),
    ("405edd3c07fb4c93", "123.4567890123456"), ("40f86a0000000000", "100000"),
    ("419d6f34540ca453", "123456789.0123456"),
    ("42d6bcc41e900000", "100000000000000"),
    ("42dc12218377de66", "123456789012345.6"),
    ("430c6bf52633ffff", "999999999999999.9"), ("4341c37937e08000", "1e+16"),
    ("4376345785d8a000", "1e+17")]
# those from 1e15 on, where the module fails
FLOAT8_OUT_FROM_1E15 = [
    ("430c6bf526340000", "1e+15"),
    ("430c6bf526340001", "1.0000000000000001e+15"),
    ("4341c37937e07fff", "9.999999999999998e+15")]


def _double(bits):
    return struct.unpack(">d", bytes.fromhex(bits))[0]


@pytest.mark.parametrize("bits, expected", FLOAT8_OUT)
def test_pg_float_as_postgresql_regression_output(bits, expected):
    x = _double(bits)
    assert float8out(x) == expected
    assert records.pg_float(repr(x)) == expected


@pytest.mark.parametrize("bits, expected", FLOAT8_OUT_FROM_1E15)
def test_pg_float_as_postgresql_regression_output_from_1e15(bits, expected):
    x = _double(bits)
    assert float8out(x) == expected
    assert records.pg_float(repr(x)) == expected


def test_pg_float_of_what_the_study_records():
    """tps as pgbench prints it (%f) and the seconds of a run (%.3f)."""
    rng = random.Random(20240101)
    for _ in range(2000):
        for text in ("%f" % rng.uniform(0, 200000),
                     "%.3f" % rng.uniform(0, 100),
                     "%f" % rng.randrange(100000)):
            assert records.pg_float(text) == float8out(float(text)), text


@pytest.mark.parametrize("text, expected", [
    ("1e15", "1e+15"), ("1234567890123456", "1.234567890123456e+15"),
    ("1234567890123456.5", "1.2345678901234565e+15"), ("-0.0", "-0")])
def test_pg_float_from_1e15(text, expected):
    assert float8out(float(text)) == expected
    assert records.pg_float(text) == expected
