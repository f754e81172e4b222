"""Fit the polynomial coefficients of pylucid/csrc/erfinv.h (mpmath, weighted minimax).

Run: python3 fit_erfinv.py [> coefficients.txt]   (about a minute; deterministic)

Each fit is a Lawson iteration (iteratively reweighted least squares converging to the
minimax solution) on Chebyshev-distributed points, solved at 160-bit precision, in a
scaled variable t in [-1, 1] (or [0, 1]); the printed coefficients are for the variable
the kernel uses (the scalings are powers of 2, so folding them in is exact) and are
rounded once to double (to float for the float32 lanes' tables).  The printed error is
the relative error of the rounded polynomial, evaluated exactly.
"""
import struct

import mpmath as mp

mp.mp.prec = 160


def lawson(f, wt, a, b, deg, npts=400, iters=25):
    """Minimax of wt(v) (poly(v) - f(v)) on [a, b]: coefficients c[k] of the powers of
    t = (v - ctr)/hw in [-1, 1], and ctr, hw."""
    ctr, hw = (a + b) / 2, (b - a) / 2
    ts = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / npts) for k in range(npts)]
    vs = [ctr + hw * t for t in ts]
    fv = [f(v) for v in vs]
    wv = [wt(v) for v in vs]
    rows = [[t ** k for k in range(deg + 1)] for t in ts]
    lw = [mp.mpf(1) / npts] * npts
    n = deg + 1
    for it in range(iters):
        A = mp.matrix(n, n)
        r = mp.matrix(n, 1)
        for i in range(npts):
            q = lw[i] * wv[i] ** 2
            ri = rows[i]
            for j in range(n):
                qj = q * ri[j]
                r[j] += qj * fv[i]
                for k in range(j, n):
                    A[j, k] += qj * ri[k]
        for j in range(n):
            for k in range(j):
                A[j, k] = A[k, j]
        c = mp.lu_solve(A, r)
        err = [abs(wv[i] * (mp.fsum(c[k] * rows[i][k] for k in range(n)) - fv[i])) for i in range(npts)]
        s = mp.fsum(lw[i] * err[i] for i in range(npts))
        lw = [lw[i] * err[i] / s for i in range(npts)]
    return [c[k] for k in range(n)], ctr, hw


def to_var(c, ctr, hw, shift):
    """Re-express sum c[k] ((v-ctr)/hw)^k as sum d[k] (v-shift)^k (exact in mp)."""
    # (v-ctr)/hw = ((v-shift) + (shift-ctr))/hw
    n = len(c)
    d = [mp.mpf(0)] * n
    off = shift - ctr
    for k in range(n):
        # expand ((u + off)/hw)^k
        for j in range(k + 1):
            d[j] += c[k] * mp.binomial(k, j) * off ** (k - j) / hw ** k
    return d


def dbl(v):
    return mp.mpf(float(v))


def flt(v):
    return mp.mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def check(f, wt, a, b, d, shift, rnd=dbl):
    """Max weighted error of the rounded (rnd: to double or float) coefficients on a dense grid."""
    dd = [rnd(x) for x in d]
    worst = 0
    for i in range(2000):
        v = a + (b - a) * (i + mp.mpf(1) / 2) / 2000
        u = v - shift
        p = mp.fsum(dd[k] * u ** k for k in range(len(dd)))
        worst = max(worst, abs(wt(v) * (p - f(v))))
    return worst, dd


def show(name, dd, err, note, rnd=dbl):
    print("/* %s: %s; max relative error %.2e */" % (name, note, float(err)))
    if rnd is flt:  # shortest decimals that read back (as float literals) to the floats
        import numpy as np
        txt = [str(np.float32(float(x))) + "f" for x in dd]
    else:
        txt = [repr(float(x)) for x in dd]
    print("static const %s %s[%d] = {" % ("float" if rnd is flt else "double", name, len(dd)))
    for k in range(0, len(dd), 3):
        print("    " + ", ".join(txt[k:k + 3]) + ",")
    print("};")


SQPI2 = mp.sqrt(mp.pi) / 2


def p_central(w):      # erfinv(x)/x with x = sqrt(1 - e^-w)
    if w == 0:
        return SQPI2
    x = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(x) / x


def fit_central(name, W0, deg):
    # p(w) = C0 + w R(w), C0 = sqrt(pi)/2 rounded down to double; the kernel adds the
    # remainder sqrt(pi)/2 - C0 (printed) separately, so tiny x gives x sqrt(pi)/2.
    import math
    c0 = mp.mpf(math.nextafter(float(SQPI2), 0))
    f = lambda w: (p_central(w) - SQPI2) / w  # the Chebyshev grid never holds w = 0
    wt = lambda w: w / p_central(w)
    c, ctr, hw = lawson(f, wt, mp.mpf(0), mp.mpf(W0), deg - 1)
    d = to_var(c, ctr, hw, 0)
    dd = [c0] + [dbl(x) for x in d]
    worst = 0
    for i in range(1, 2001):
        w = mp.mpf(W0) * i / 2000
        p = mp.fsum(dd[k] * w ** k for k in range(len(dd))) + SQPI2 - c0
        worst = max(worst, abs(p / p_central(w) - 1))
    print("/* lucid_erfinv_p64: c[0] = sqrt(pi)/2 rounded down (LUCID_SQRTPI_2_LO = %s) */"
          % float.hex(float(SQPI2 - c0)))
    show(name, dd, worst, "erfinv(x)/x = sum c[k] w^k, w = -log(1-x^2) in [0, %g]" % W0)


def fit_central_f32(name, W0, deg):
    # float lanes: p(w) = c0 + c1 w + w^2 R(w), c0 = sqrt(pi)/2 rounded down to float (the
    # kernel adds the remainder, printed), c1 rounded to float first and R fitted around
    # it: the kernel adds c0 + c1 w in two-float arithmetic and R (< 3 % of p) in float.
    c, ctr, hw = lawson(lambda w: (p_central(w) - SQPI2) / w, lambda w: w / p_central(w),
                        mp.mpf(0), mp.mpf(W0), deg - 1)
    c1 = flt(to_var(c, ctr, hw, 0)[0])
    f = lambda w: (p_central(w) - SQPI2 - c1 * w) / w ** 2
    wt = lambda w: w ** 2 / p_central(w)
    c, ctr, hw = lawson(f, wt, mp.mpf(0), mp.mpf(W0), deg - 2)
    worst, dd = check(f, wt, mp.mpf(0), mp.mpf(W0), to_var(c, ctr, hw, 0), 0, flt)
    c0 = flt(SQPI2)
    if c0 > SQPI2:
        c0 = mp.mpf(struct.unpack("f", struct.pack("I", struct.unpack("I", struct.pack("f", c0))[0] - 1))[0])
    print("/* lucid_erfinv_p32: c[0] = sqrt(pi)/2 rounded down (LUCID_SQRTPI_2_LO_F = %s),\n"
          " * c[1] rounded before the rest was fitted around it */" % float.hex(float(SQPI2 - c0)))
    show(name, [c0, c1] + dd, worst, "erfinv(x)/x = sqrt(pi)/2 + c[1] w + w^2 sum c[k+2] w^k, "
         "w = -log(1-x^2) in [0, %g]" % W0, flt)


def y_tail(s):
    x = mp.sqrt(-mp.expm1(-s * s))
    return mp.erfinv(x)


def fit_tail(name, s0, s1, centre, deg, rnd=dbl):
    # erfinv(x) = s + G(s - centre), s = sqrt(w): G is small (|G| < 0.2), so its rounding
    # errors reach the result scaled down by |G|/erfinv.
    f = lambda s: y_tail(s) - s
    wt = lambda s: 1 / y_tail(s)
    c, ctr, hw = lawson(f, wt, mp.mpf(s0), mp.mpf(s1), deg)
    d = to_var(c, ctr, hw, mp.mpf(centre))
    worst, dd = check(f, wt, mp.mpf(s0), mp.mpf(s1), d, mp.mpf(centre), rnd)
    show(name, dd, worst, "erfinv(x) = s + sum c[k] (s - %g)^k, s = sqrt(w) in [%g, %g]" % (centre, s0, s1),
         rnd)


def fit_log(name, deg, rnd=dbl):
    # log(m) = 2 atanh(s) = 2s + s^3 L(s^2), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)].
    zmax = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2
    f = lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / z ** 1.5
    wt = lambda z: z / (2 * mp.atanh(mp.sqrt(z)) / mp.sqrt(z))  # relative error of log
    c, ctr, hw = lawson(f, wt, mp.mpf(0), zmax * 1.0001, deg)
    d = to_var(c, ctr, hw, 0)
    worst, dd = check(f, wt, mp.mpf(0), zmax, d, 0, rnd)
    show(name, dd, worst, "log(m) = 2s + s^3 sum c[k] s^2k, s = (m-1)/(m+1)", rnd)


def fit_exp(name, deg):
    # e^r = 1 + r + r^2 E(r), |r| <= ln2/2.
    h = mp.log(2) / 2 * mp.mpf(1.0001)
    f = lambda r: (mp.exp(r) - 1 - r) / r ** 2 if r != 0 else mp.mpf(1) / 2
    wt = lambda r: r * r / mp.exp(r)
    c, ctr, hw = lawson(f, wt, -h, h, deg)
    d = to_var(c, ctr, hw, 0)
    worst, dd = check(f, wt, -h, h, d, 0)
    show(name, dd, worst, "e^r = 1 + r + r^2 sum c[k] r^k, |r| <= ln2/2")


def fit_grad_f32(name, deg):
    # float32 gradient: C e^r = Ch (1 + r) + S(r), C = sqrt(pi)/2, Ch = C rounded to float,
    # |r| <= ln2/2; the kernel adds Ch (1 + r) in two floats and S (< 8 % of C e^r) in float.
    ch = flt(SQPI2)
    h = mp.log(2) / 2 * mp.mpf(1.0001)
    f = lambda r: SQPI2 * mp.exp(r) - ch * (1 + r)
    wt = lambda r: 1 / (SQPI2 * mp.exp(r))
    c, ctr, hw = lawson(f, wt, -h, h, deg)
    worst, dd = check(f, wt, -h, h, to_var(c, ctr, hw, 0), 0, flt)
    show(name, dd, worst, "sqrt(pi)/2 e^r = Ch (1 + r) + sum c[k] r^k, Ch = sqrt(pi)/2 "
         "rounded to float, |r| <= ln2/2", flt)


if __name__ == "__main__":
    # The tables of erfinv.h, in its order.  Degrees: the lowest meeting the error
    # budget (float64 < ~1e-16 relative; float32 < ~1e-8, a sixth of a float ULP).
    fit_log("lucid_log_c64", 6)
    fit_log("lucid_log_f32", 2, flt)
    fit_central("lucid_erfinv_p64", 4, 19)
    fit_central_f32("lucid_erfinv_p32", 4, 9)
    # s ranges up to sqrt(-log(2^-52)) = 6.0035 (float64), sqrt(-log(2^-23)) = 3.99 (float32)
    fit_tail("lucid_erfinv_g64", 2, 6.01, 4, 30)
    fit_tail("lucid_erfinv_g32", 2, 4.0, 3, 8, flt)
    fit_exp("lucid_exp_c64", 9)
    fit_exp("lucid_exp_c32", 4)
    fit_grad_f32("lucid_grad_s32", 6)
