/* The vForce-style vector API behind pylucid/_accelerate.pxd.
 *
 * Same shape as Apple's vForce: y[i] = f(x[i]) for i < *n, with the count passed
 * as `const int *`.  On macOS vvsqrtf/vvsqrt/vvcbrtf/vvcbrt come from Accelerate;
 * everywhere else vforce.c defines them.  The erfinv and gradient routines have
 * no Accelerate counterpart and are ours on every platform.
 *
 * Every routine works in place (y == x) and never reads past *n elements.
 */
#ifndef PYLUCID_VFORCE_H
#define PYLUCID_VFORCE_H

#ifdef __APPLE__
#include <Accelerate/Accelerate.h>
#else
void vvsqrtf(float *y, const float *x, const int *n);
void vvsqrt(double *y, const double *x, const int *n);
void vvcbrtf(float *y, const float *x, const int *n);
void vvcbrt(double *y, const double *x, const int *n);
#endif

void vverfinvf(float *y, const float *x, const int *n);
void vverfinv(double *y, const double *x, const int *n);

/* Vector-Jacobian products from the saved output y:
 *   sqrt: gx = g / (2y)    cbrt: gx = g / (3y^2)    erfinv: gx = (sqrt(pi)/2) exp(y^2) g */
void vvsqrt_gradf(float *gx, const float *g, const float *y, const int *n);
void vvsqrt_grad(double *gx, const double *g, const double *y, const int *n);
void vvcbrt_gradf(float *gx, const float *g, const float *y, const int *n);
void vvcbrt_grad(double *gx, const double *g, const double *y, const int *n);
void vverfinv_gradf(float *gx, const float *g, const float *y, const int *n);
void vverfinv_grad(double *gx, const double *g, const double *y, const int *n);

/* Name of the instruction set the portable kernels dispatched to:
 * "baseline", "avx2+fma" or "avx512". */
const char *lucid_simd_level(void);

#endif
