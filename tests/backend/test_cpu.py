"""The backend interface and its CPU implementation."""
import sys

import numpy as np
import pytest
from scipy import special

import pylucid as pl
from pylucid import backend
from pylucid.backend import cpu

BE = backend.get_backend("cpu")
FORWARD = {"sqrt": np.sqrt, "cube_root": np.cbrt, "erfinv": special.erfinv}
BACKWARD = {  # d/dx written in terms of y, times g
    "sqrt_backward": lambda g, y: g / (2 * y),
    "cube_root_backward": lambda g, y: g / (3 * y * y),
    "erfinv_backward": lambda g, y: np.sqrt(np.pi) / 2 * np.exp(y * y) * g,
}


def test_get_backend_returns_one_cached_object_with_the_interface():
    assert backend.get_backend("cpu") is BE is cpu.BACKEND
    assert BE.name == "cpu"
    for name in list(FORWARD) + list(BACKWARD):
        assert callable(getattr(BE, name))


@pytest.mark.parametrize("name", list(FORWARD))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_forward_kernels(name, dtype):
    x = np.linspace(-0.9, 0.9, 19).astype(dtype)
    if name == "sqrt":
        x = np.abs(x)
    y = getattr(BE, name)(x, x.shape, x.dtype)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, FORWARD[name](x.astype(np.float64)),
                               rtol=2 * np.finfo(dtype).eps, atol=np.finfo(dtype).tiny)


@pytest.mark.parametrize("name", list(BACKWARD))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_backward_kernels(name, dtype):
    y = np.linspace(0.1, 1.5, 15).astype(dtype)
    g = np.linspace(-2, 2, 15).astype(dtype)
    r = getattr(BE, name)(g, y)
    assert r.dtype == dtype
    np.testing.assert_allclose(r, BACKWARD[name](g.astype(np.float64), y.astype(np.float64)),
                               rtol=4 * np.finfo(dtype).eps)


def test_bfloat16_computes_in_float32_and_rounds_once():
    pytest.importorskip("ml_dtypes")
    bf = BE.dtype("bfloat16")  # binds pylucid's bfloat16, as check_dtype does before any kernel
    x = np.linspace(0.1, 3, 40).astype(bf)
    y = BE.sqrt(x, x.shape, bf)
    assert y.dtype == bf
    np.testing.assert_array_equal(y, np.sqrt(x.astype(np.float64)).astype(bf))
    r = BE.sqrt_backward(x, y)
    assert r.dtype == bf
    want = (x.astype(np.float32) / (2 * y.astype(np.float32))).astype(bf)
    np.testing.assert_array_equal(r, want)


def test_unknown_device_raises_value_error_naming_the_allowed_ones():
    for bad in ["tpu", "CPU", None, 0]:
        with pytest.raises(ValueError, match="'cpu', 'gpu'"):
            backend.get_backend(bad)
        with pytest.raises(ValueError, match="'cpu', 'gpu'"):
            pl.Tensor([1.0], device=bad)


def test_gpu_without_mlx_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlx.core", None)      # makes `import mlx.core` fail
    monkeypatch.setattr(backend, "_LOADED", {"cpu": BE})
    with pytest.raises(RuntimeError) as info:
        backend.get_backend("gpu")
    msg = str(info.value)
    assert 'pip install "pylucid-kernels[gpu]"' in msg
    assert "mlx[cuda13]" in msg and "macOS" in msg and '"pylucid-kernels[gpu-cpu]"' in msg
    with pytest.raises(RuntimeError, match="pylucid-kernels"):
        pl.Tensor([1.0], device="gpu")


def test_backend_for_is_an_exact_type_check():
    class Sub(np.ndarray):
        pass

    assert backend.backend_for(np.ones(2)) is BE
    assert backend.backend_for(np.ones(2).view(Sub)) is None
    assert backend.backend_for([1.0]) is None
    assert backend.backend_for(np.float64(1.0)) is None


def test_check_dtype():
    for dt in ["f2", "f4", "f8", ">f8", "i1", "u8", "?"]:
        cpu.check_dtype("op", np.dtype(dt))
    for dt in ["c8", "O", "U2", "S2", "M8[D]", "m8[s]", "V4"]:
        with pytest.raises(TypeError, match="op: unsupported dtype"):
            cpu.check_dtype("op", np.dtype(dt))
