"""The MLX device the MLX tests run on (test_mlx.py, test_mlx_graph.py use ``mlx_device``).

MLX's GPU when there is one (CUDA on Linux, Metal on macOS), else MLX's CPU device (CI installs
mlx[cpu]), like MLX's own suite; PYLUCID_MLX_DEVICE=cpu|gpu overrides. A fixture rather than
a module-level import, so the CPU backend's tests here need no MLX.
"""
import os

import pytest


@pytest.fixture
def mlx_device():
    """MLX's default device for the test, restored afterwards."""
    mx = pytest.importorskip("mlx.core")
    want = os.environ.get("PYLUCID_MLX_DEVICE")
    if want:
        dev = mx.gpu if want == "gpu" else mx.cpu
    else:
        dev = mx.gpu if mx.is_available(mx.gpu) else mx.cpu
    old = mx.default_device()
    mx.set_default_device(dev)
    yield dev
    mx.set_default_device(old)
