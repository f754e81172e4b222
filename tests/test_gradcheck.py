"""gradcheck / gradgradcheck: pass on right gradients, name the worst element on wrong ones."""
import numpy as np
import pytest

import pylucid as pl
from pylucid import ops
from pylucid.graph import nodes

X = np.array([0.3, 0.6, 0.9])


def test_returns_true_for_correct_gradients():
    assert pl.gradcheck(lambda x: ops.sqrt(x) * ops.erfinv(x * 0.5), [X])
    assert pl.gradcheck(lambda x, y: (x * y, ops.cube_root(x - y)), [X, X[::-1] + 0.05])
    assert pl.gradgradcheck(lambda x: ops.erfinv(x).exp(), [X])


def test_float32_inputs_are_checked_in_float64():
    x = pl.Tensor(X.astype(np.float32), requires_grad=True)
    assert pl.gradcheck(ops.sqrt, x)


def test_inputs_without_requires_grad_are_constants():
    c = pl.Tensor(X)
    assert pl.gradcheck(lambda x, c: x * c, [X, c])


def test_wrong_gradient_raises_naming_the_worst_element():
    def f(x):                      # d/dx = 2x, but the detached factor hides half of it
        return x.detach() * x * np.array([1.0, 1.0, 10.0])

    with pytest.raises(pl.GradcheckError) as info:
        pl.gradcheck(f, [X])
    msg = str(info.value)
    assert "output element 2, input element 2" in msg
    assert "analytic 9.0" in msg and "numeric 18.0" in msg


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(pl.GradcheckError, RuntimeError)


def test_gradgradcheck_catches_a_wrong_second_derivative(monkeypatch):
    # first derivative right, second wrong: the rule forgets that y depends on x
    monkeypatch.setattr(nodes.SqrtBackward, "grad_formula_impl",
                        staticmethod(lambda g, a, out: g / (2 * out.detach())))
    assert pl.gradcheck(ops.sqrt, [X])
    with pytest.raises(pl.GradcheckError, match="analytic"):
        pl.gradgradcheck(ops.sqrt, [X])


@pytest.mark.parametrize("eps", [0.0, -1e-6])
def test_eps_must_be_positive(eps):
    with pytest.raises(ValueError, match="eps"):
        pl.gradcheck(ops.sqrt, [X], eps=eps)
    with pytest.raises(ValueError, match="eps"):
        pl.gradgradcheck(ops.sqrt, [X], eps=eps)


def test_tolerances_are_used():
    def f(x):                      # analytic 1, numeric 1 + 0.002 x (hidden from backward)
        return x + 0.001 * (x.detach() * x.detach())

    ones = np.ones(3)
    with pytest.raises(pl.GradcheckError):
        pl.gradcheck(f, [ones])                    # |1 - 1.002| > 1e-5 + 1e-3 * 1.002
    assert pl.gradcheck(f, [ones], rtol=1e-2)
