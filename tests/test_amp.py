"""autocast: the dtype table, recorded casts, nesting, threads, exceptions, decorator form."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import pylucid as pl
from pylucid import amp, ops, ufuncs

ml_dtypes = pytest.importorskip("ml_dtypes")
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
P = pl.AmpPolicy
AUTOCAST = {"float16": F16, "bfloat16": BF16}

# policy -> input dtype -> compute dtype; "amp" means the autocast dtype
TABLE = {
    P.Promote: {F16: F16, BF16: BF16, F32: "amp", F64: F64},
    P.ForceFP32: {F16: F32, BF16: F32, F32: F32, F64: F64},
    P.KeepInput: {F16: F16, BF16: BF16, F32: F32, F64: F64},
}
OP_POLICY = {ops.sqrt: P.Promote, ops.erfinv: P.Promote, ops.cube_root: P.ForceFP32}


def expected(policy, dt, amp_name):
    want = TABLE[policy][dt]
    return AUTOCAST[amp_name] if want == "amp" else want


@pytest.mark.parametrize("amp_name", list(AUTOCAST))
@pytest.mark.parametrize("dt", [F16, BF16, F32, F64], ids=str)
@pytest.mark.parametrize("policy", list(P))
def test_compute_dtype_table(policy, dt, amp_name):
    assert amp.compute_dtype(policy, dt, amp_name) == expected(policy, dt, amp_name)
    assert amp.compute_dtype(policy, dt) == dt          # outside autocast: keep the dtype
    with pl.autocast(amp_name):
        assert amp.compute_dtype(policy, dt) == expected(policy, dt, amp_name)


@pytest.mark.parametrize("amp_name", list(AUTOCAST))
@pytest.mark.parametrize("dt", [F16, BF16, F32, F64], ids=str)
@pytest.mark.parametrize("op", list(OP_POLICY), ids=lambda f: f.__name__)
def test_ops_follow_the_table_on_arrays_and_tensors(op, dt, amp_name):
    x = np.array([0.25, 0.5], dtype=dt)
    want = expected(OP_POLICY[op], dt, amp_name)
    with pl.autocast(amp_name):
        assert op(x).dtype == want
        t = pl.Tensor(x, requires_grad=True)
        y = op(t)
        assert y.dtype == want
    assert op(x).dtype == dt                            # outside: the input's dtype
    y.sum().backward()                                  # the cast is in the graph
    assert t.grad.dtype == dt


def test_raw_ufuncs_ignore_autocast():
    x = np.ones(3, np.float32)
    with pl.autocast("float16"):
        assert ufuncs.sqrt(x).dtype == F32


def test_float16_rounds_once_from_a_float32_computation():
    x = np.linspace(0.1, 7.0, 501, dtype=np.float32)
    with pl.autocast("float16"):
        y = ops.sqrt(x)
    x16 = x.astype(F16)                                # Promote casts the input first
    np.testing.assert_array_equal(y, np.sqrt(x16.astype(F64)).astype(F16))
    with pl.autocast("bfloat16"):
        y = ops.sqrt(x)
    xb = x.astype(BF16)
    np.testing.assert_array_equal(y.astype(F64), np.sqrt(xb.astype(F64)).astype(BF16).astype(F64))


def test_gradient_reaches_float32_leaf_through_the_float16_cast():
    x = pl.Tensor(np.array([4.0, 9.0], np.float32), requires_grad=True)
    with pl.autocast("float16"):
        y = ops.sqrt(x)
    assert y.dtype == F16 and type(y.grad_fn).__name__ == "SqrtBackward"
    assert type(y.grad_fn.next[0]).__name__ == "CastBackward"
    y.sum().backward()
    assert x.grad.dtype == F32
    np.testing.assert_allclose(x.grad.numpy(), [0.25, 1 / 6], rtol=1e-3)


def test_integers_follow_numpy_inside_autocast():
    with pl.autocast("float16"):
        assert ops.sqrt(np.array([4])).dtype == F64


def test_nesting_and_enabled_false_restore_the_outer_state():
    x = np.ones(2, np.float32)
    with pl.autocast("float16"):
        with pl.autocast("bfloat16"):
            assert ops.sqrt(x).dtype == BF16
            with pl.autocast(enabled=False):
                assert ops.sqrt(x).dtype == F32
            assert ops.sqrt(x).dtype == BF16
        assert ops.sqrt(x).dtype == F16
    assert ops.sqrt(x).dtype == F32
    assert amp.get_autocast_dtype() is None


def test_the_same_instance_can_be_nested():
    ac = pl.autocast("float16")
    with ac:
        with ac:
            assert amp.get_autocast_dtype() == F16
        assert amp.get_autocast_dtype() == F16
    assert amp.get_autocast_dtype() is None


def test_state_is_restored_on_exceptions():
    with pytest.raises(KeyError):
        with pl.autocast("float16"):
            raise KeyError
    assert amp.get_autocast_dtype() is None


def test_decorator_form():
    @pl.autocast("bfloat16")
    def f(x):
        return ops.erfinv(x)

    assert f(np.array([0.5], np.float32)).dtype == BF16
    assert amp.get_autocast_dtype() is None


def test_autocast_is_thread_local():
    seen = {}
    inside, checked = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = ops.sqrt(np.ones(1, np.float32)).dtype
        checked.set()

    def decorated_worker(i):
        @pl.autocast("float16")
        def f():
            return ops.sqrt(np.ones(1, np.float32)).dtype
        seen[i] = [f() for _ in range(50)]

    t = threading.Thread(target=other)
    t.start()
    with pl.autocast("float16"):
        inside.set()
        checked.wait()
    t.join()
    assert seen["other"] == F32
    workers = [threading.Thread(target=decorated_worker, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(v == [F16] * 50 for k, v in seen.items() if k != "other")
    assert amp.get_autocast_dtype() is None


def test_bad_autocast_dtype():
    with pytest.raises(ValueError, match="float16' or 'bfloat16"):
        pl.autocast("float32")


def test_bfloat16_without_ml_dtypes_names_it(monkeypatch):
    monkeypatch.setattr(amp, "BFLOAT16", None)
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)   # makes `import ml_dtypes` fail
    with pytest.raises(ImportError, match="ml_dtypes"):
        pl.autocast("bfloat16")
    with pytest.raises(ImportError, match="ml_dtypes"):
        pl.tensor([1.0], dtype="bfloat16")
    with pl.autocast("float16"):                          # float16 needs nothing
        assert ops.sqrt(np.ones(1, np.float32)).dtype == F16


def test_import_pylucid_does_not_import_ml_dtypes():
    code = "import sys, pylucid; assert 'ml_dtypes' not in sys.modules"  # it costs ~0.5 s
    subprocess.run([sys.executable, "-c", code], check=True)


def test_bfloat16_arrays_are_recognised_when_ml_dtypes_was_imported_later(monkeypatch):
    monkeypatch.setattr(amp, "BFLOAT16", None)             # as if nothing asked for it yet
    x = np.array([4.0], BF16)
    assert ops.sqrt(x).dtype == BF16
    assert amp.BFLOAT16 is BF16
