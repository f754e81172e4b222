# Remez fit of m^(-1/3) on [1,2] minimizing relative error; monomial basis in (m - 1.5).
# Usage: python3 fit.py [degrees...]
import mpmath as mp, sys
mp.mp.prec = 150
f = lambda m: m ** (mp.mpf(-1)/3)
def remez(deg, c0=mp.mpf(1.5), a=mp.mpf(1), b=mp.mpf(2), iters=12, G=6000):
    n = deg + 2
    xs = [(a+b)/2 - (b-a)/2*mp.cos(mp.pi*i/(n-1)) for i in range(n)]
    grid = [a + (b-a)*k/G for k in range(G+1)]
    fg = [f(x) for x in grid]
    for it in range(iters):
        A = mp.matrix(n, n); rhs = mp.matrix(n, 1)
        for i, x in enumerate(xs):
            for j in range(deg+1): A[i, j] = (x - c0) ** j
            A[i, deg+1] = (-1) ** i * f(x)
            rhs[i] = f(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(deg+1)]
        ev = [(mp.polyval(c[::-1], x - c0) - fx) / fx for x, fx in zip(grid, fg)]
        segs = []; cur = [0]
        for k in range(1, G+1):
            if mp.sign(ev[k]) != mp.sign(ev[cur[0]]): segs.append(cur); cur = [k]
            else: cur.append(k)
        segs.append(cur)
        pts = [max(s, key=lambda k: abs(ev[k])) for s in segs]
        while len(pts) > n:  # drop the smallest end
            if abs(ev[pts[0]]) < abs(ev[pts[-1]]): pts.pop(0)
            else: pts.pop()
        if len(pts) < n: break
        xs = [grid[k] for k in pts]
    return c, max(abs(e) for e in ev)
for deg in [int(d) for d in sys.argv[1:]] or range(3, 10):
    c, e = remez(deg)
    print(deg, round(float(mp.log(e, 2)), 2), [mp.nstr(v, 20) for v in c])
