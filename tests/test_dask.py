"""Dask and xarray: the ufuncs apply lazily, chunk by chunk, also on other processes."""
import pickle

import numpy as np
import pytest

from pylucid import ufuncs

da = pytest.importorskip("dask.array")

FORWARD = ("sqrt", "cube_root", "erfinv")
ALL = FORWARD + tuple(f"{op}_backward" for op in FORWARD)


def sample(shape=(600, 500), dtype=np.float64):
    x = np.random.default_rng(6).uniform(-0.99, 0.99, shape).astype(dtype)
    return x, da.from_array(x, chunks=(200, 250))


@pytest.mark.parametrize("name", ALL)
def test_ufuncs_pickle_by_name(name):
    # Dask ships tasks to workers by pickling them; a ufunc pickles as its module + name.
    ufunc = getattr(ufuncs, name)
    assert pickle.loads(pickle.dumps(ufunc)) is ufunc


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", FORWARD)
def test_lazy_and_chunkwise(name, dtype):
    x, dx = sample(dtype=dtype)
    ufunc = getattr(ufuncs, name)
    arg = abs(x) if name == "sqrt" else x
    darg = abs(dx) if name == "sqrt" else dx
    lazy = ufunc(darg)
    assert isinstance(lazy, da.Array)  # nothing computed yet
    assert lazy.chunks == dx.chunks
    assert lazy.dtype == dtype
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"), ufunc(arg))


def test_backward_on_dask():
    x, dx = sample()
    y, dy = ufuncs.erfinv(x), ufuncs.erfinv(dx)
    lazy = ufuncs.erfinv_backward(da.ones_like(dy), dy)
    assert lazy.chunks == dx.chunks
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"), ufuncs.erfinv_backward(1.0, y))


def test_local_cluster_two_processes():
    distributed = pytest.importorskip("distributed")
    x, dx = sample()
    lazy = ufuncs.cube_root_backward(dx, ufuncs.cube_root(dx + 2.0))
    expected = ufuncs.cube_root_backward(x, ufuncs.cube_root(x + 2.0))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        result = client.compute(lazy).result()
        # The work really ran in the two worker processes.
        assert len(client.run(lambda: 1)) == 2
    np.testing.assert_array_equal(result, expected)


def test_xarray():
    xr = pytest.importorskip("xarray")
    x, dx = sample()
    expected = ufuncs.erfinv(x)
    for data in (x, dx):
        arr = xr.DataArray(data, dims=("time", "space"), attrs={"units": "1"})
        direct = ufuncs.erfinv(arr)
        applied = xr.apply_ufunc(ufuncs.erfinv, arr, dask="allowed")
        for out in (direct, applied):
            assert isinstance(out, xr.DataArray)
            assert out.dims == ("time", "space")
            assert type(out.data) is type(data)  # dask stays lazy
            np.testing.assert_array_equal(out.values, expected)
