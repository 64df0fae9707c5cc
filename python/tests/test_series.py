from fractions import Fraction

import numpy as np
import pytest

import kosmos
from kosmos import series


def exact(limbs):
    return sum(Fraction(float(x)) for x in limbs)


def test_decimal_to_limbs_is_correctly_rounded_and_prints_back():
    limbs = series.to_limbs("0.1", 4)
    assert limbs.shape == (4,)
    assert abs(exact(limbs) - Fraction(1, 10)) <= Fraction(1, 10) * Fraction(1, 2 ** 210)
    assert series.to_string(limbs) == "1e-1"
    many = series.to_limbs(["1", "-2.5", "1e-300"], 2)
    assert many.shape == (3, 2)
    assert series.to_string(many) == ["1e+0", "-2.5e+0", "1e-300"]
    third = series.to_limbs("0.3333333333333333333333333333333333333333", 3)
    assert series.to_string(third, digits=40) == "3.333333333333333333333333333333333333333e-1"


def test_bad_numbers_and_precisions():
    with pytest.raises(kosmos.InvalidInput, match="'abc' is not a decimal number"):
        series.to_limbs("abc", 2)
    with pytest.raises(kosmos.InvalidInput, match="beyond the largest double"):
        series.to_limbs("1e400", 2)
    with pytest.raises(kosmos.InvalidInput, match="precision 6"):
        series.generate("p1", 4, precision=6)


def binomial_half(k):
    c = Fraction(1)
    for j in range(k):
        c *= (Fraction(1, 2) - j) / (j + 1)
    return c


def test_newton_sqrt_series_matches_binomial_series(data_dir):
    text = "variables 1\ndegree 1\nconstant : -1 -1\nterm x1^2 : 1 0\npoint x1 : 1 0\n"
    system = series.from_text(text, precision=4)
    sol = series.newton(system, 24)
    assert sol.x.shape == (25, 1, 4)
    assert not sol.x.flags.owndata  # a view of the library's result
    for k in range(25):
        ref = binomial_half(k)
        assert abs(exact(sol.x[k, 0]) - ref) <= abs(ref) * Fraction(1, 10 ** 60)
    assert sol.coefficients(0)[2] == "-1.25e-1"


def test_evaluate_square_of_a_series():
    text = "variables 1\ndegree 3\nterm x1^2 : 1 0 0 0\npoint x1 : 1 1 0 0\n"
    values, gradients = series.evaluate(series.from_text(text, precision=2))
    np.testing.assert_array_equal(values[0][:, 0], [1, 2, 1, 0])  # (1 + t)^2
    np.testing.assert_array_equal(gradients[0][:, 0, 0], [2, 2, 0, 0])
    assert np.all(values[0][:, 1] == 0)


def test_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.poly"
    bad.write_text("variables 1\ndegree 1\nterm x1^2 : 1 zz\npoint x1 : 1 0\n")
    with pytest.raises(kosmos.FileError, match="bad.poly:3"):
        series.load(bad)


def test_track_cyclic5_all_solutions_checked_independently():
    # cyclic-5: 70 isolated solutions among 120 total-degree paths; each checked here by
    # evaluating the equations with numpy (not the library's evaluator).
    r = series.track(series.example("cyclic", 5))
    x = r.solutions()
    assert len(x) == 70 and r.count("failed") == 0
    n = 5
    for k in range(1, n):
        value = sum(np.prod([x[:, (i + j) % n] for j in range(k)], axis=0) for i in range(n))
        assert np.max(np.abs(value)) < 1e-8
    assert np.max(np.abs(np.prod(x, axis=1) - 1)) < 1e-8
    assert r.x.shape == (120, 5) and r.x.dtype == np.complex128


def test_track_symbolic_circle_and_line():
    # x^2 + y^2 = 1 and x = y: (+-1/sqrt(2), +-1/sqrt(2)), analytic.
    r = series.track(series.symbolic("x^2 + y^2 - 1;\nx - y;"))
    x = np.sort_complex(r.solutions()[:, 0])
    assert np.allclose(x, [-2 ** -0.5, 2 ** -0.5], atol=1e-12)
    assert set(r.status_names) <= {"regular", "at_infinity"}
    with pytest.raises(ValueError, match="unknown option"):
        series._s.track(series.symbolic("x - 1;"), {"colour": 1})
