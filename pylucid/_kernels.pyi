# Stub for the compiled module pylucid._kernels (built from _kernels.pyx).
import numpy as np

sqrt: np.ufunc
cube_root: np.ufunc
erfinv: np.ufunc
sqrt_backward: np.ufunc
cube_root_backward: np.ufunc
erfinv_backward: np.ufunc

def get_num_threads() -> int: ...
def set_num_threads(n: int) -> None: ...
def max_threads() -> int: ...
def simd_level() -> str: ...
