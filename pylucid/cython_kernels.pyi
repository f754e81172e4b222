# Stub for the compiled module pylucid.cython_kernels.  Its API is C-level only: cimport it
# from Cython (see cython_kernels.pxd); Python sees no functions.
