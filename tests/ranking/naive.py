"""Slow, obviously right twins of the numba functions in ranking/ (stumpy tests/naive.py style).

Each helper adds its own clearly marked section; only add functions.
"""

# =======================================================================================
# Section: scores, bias, metrics, selection, budget (win-ratio, position bias, rank
# correlations, adaptive product of experts, budget curves). Loops, no cleverness.
# =======================================================================================

import numpy as _np
from scipy import stats as _stats


def _present_pairs(P2):
    n = P2.shape[0]
    return [(i, j) for i in range(n) for j in range(n) if i != j and _np.isfinite(P2[i, j])]


def naive_decide(p, tau):
    return 1.0 if p > tau else (0.0 if p < tau else 0.5)


def naive_win_ratio(P, tau=0.5, soft=False):
    P = _np.asarray(P, dtype=float)
    if P.ndim == 2:
        P = P[None]
    out = _np.full(P.shape[:2], _np.nan)
    for c in range(P.shape[0]):
        for u in range(P.shape[1]):
            wins = 0.0
            n = 0
            for i, j in _present_pairs(P[c]):
                d = P[c, i, j] if soft else naive_decide(P[c, i, j], tau)
                if u == i:
                    wins += d
                    n += 1
                elif u == j:
                    wins += 1.0 - d
                    n += 1
            if n:
                out[c, u] = wins / n
    return out


def naive_position_bias(P, tau=0.5, per_context=False):
    P = _np.asarray(P, dtype=float)
    if P.ndim == 2:
        P = P[None]
    dec = [
        [naive_decide(P[c, i, j], tau) for i, j in _present_pairs(P[c])] for c in range(P.shape[0])
    ]
    if per_context:
        return _np.array([sum(d) / len(d) if d else _np.nan for d in dec])
    flat = [x for d in dec for x in d]
    return sum(flat) / len(flat)


def naive_swap_consistency(P, tau=0.5, per_context=False):
    P = _np.asarray(P, dtype=float)
    if P.ndim == 2:
        P = P[None]
    per = []
    for c in range(P.shape[0]):
        vals = []
        n = P.shape[1]
        for i in range(n):
            for j in range(i + 1, n):
                if _np.isfinite(P[c, i, j]) and _np.isfinite(P[c, j, i]):
                    d1 = naive_decide(P[c, i, j], tau)  # i wins, shown first
                    d2 = 1.0 - naive_decide(P[c, j, i], tau)  # i wins, shown second
                    if d1 in (0.0, 1.0) and d2 in (0.0, 1.0):
                        vals.append(1.0 if d1 == d2 else 0.0)
                    else:
                        vals.append(0.5)  # a tie in either order: half an agreement
        per.append(vals)
    if per_context:
        return _np.array([sum(v) / len(v) if v else _np.nan for v in per])
    flat = [x for v in per for x in v]
    return sum(flat) / len(flat)


def naive_pb_of_values(values, tau):
    return sum(naive_decide(v, tau) for v in values) / len(values)


def naive_balanced_from_values(values):
    """Median; if it is a present value, the best of it and the midpoints to its neighbours."""
    v = sorted(float(x) for x in values)
    med = float(_np.median(v))
    if med not in v:
        return med
    cands = [med]
    above = [x for x in v if x > med]
    below = [x for x in v if x < med]
    if above:
        cands.append(0.5 * (med + min(above)))
    if below:
        cands.append(0.5 * (max(below) + med))
    errs = [abs(naive_pb_of_values(v, t) - 0.5) for t in cands]
    best = min(errs)
    # prefer the median, then the midpoint above, then below (a tolerance for float sums)
    for t, e in zip(cands, errs, strict=True):
        if e <= best + 1e-12:
            return t


def naive_balanced_threshold(P, per_context=False):
    P = _np.asarray(P, dtype=float)
    if P.ndim == 2:
        P = P[None]
    vals = [[P[c, i, j] for i, j in _present_pairs(P[c])] for c in range(P.shape[0])]
    if per_context:
        return _np.array([naive_balanced_from_values(v) for v in vals])
    return naive_balanced_from_values([x for v in vals for x in v])


def naive_pairwise_accuracy(P, reference, tau=0.5, per_context=False):
    P = _np.asarray(P, dtype=float)
    ref = _np.asarray(reference, dtype=float)
    if P.ndim == 2:
        P, ref = P[None], ref[None]
    per = []
    for c in range(P.shape[0]):
        hits = []
        for i, j in _present_pairs(P[c]):
            ri, rj = ref[c, i], ref[c, j]
            if _np.isfinite(ri) and _np.isfinite(rj) and ri != rj:
                d = naive_decide(P[c, i, j], tau)
                hits.append(d if ri > rj else 1.0 - d)
        per.append(hits)
    if per_context:
        return _np.array([sum(h) / len(h) if h else _np.nan for h in per])
    flat = [x for h in per for x in h]
    return sum(flat) / len(flat)


def naive_avg_ranks(x):
    x = list(x)
    return _np.array([sum(y < xi for y in x) + 0.5 * (sum(y == xi for y in x) + 1) for xi in x])


def naive_spearman(a, b):
    """Row-wise Spearman via scipy on the positions finite in both (NaN if undefined)."""
    a = _np.atleast_2d(_np.asarray(a, dtype=float))
    b = _np.atleast_2d(_np.asarray(b, dtype=float))
    out = []
    for x, y in zip(a, b, strict=True):
        m = _np.isfinite(x) & _np.isfinite(y)
        if m.sum() < 2 or _np.ptp(x[m]) == 0 or _np.ptp(y[m]) == 0:
            out.append(_np.nan)
        else:
            out.append(_stats.spearmanr(x[m], y[m])[0])
    return _np.array(out)


def naive_kendall(a, b, variant="b"):
    a = _np.atleast_2d(_np.asarray(a, dtype=float))
    b = _np.atleast_2d(_np.asarray(b, dtype=float))
    out = []
    for x, y in zip(a, b, strict=True):
        m = _np.isfinite(x) & _np.isfinite(y)
        if m.sum() < 2 or _np.ptp(x[m]) == 0 or _np.ptp(y[m]) == 0:
            out.append(_np.nan)
        else:
            out.append(_stats.kendalltau(x[m], y[m], variant=variant)[0])
    return _np.array(out)


def naive_poe_run(P2, budget, rule, prior_weight, model_bias, priority):
    """Adaptive product of experts with the posterior recomputed by matrix inversion."""
    n = P2.shape[0]
    prec0 = _np.eye(n + 1) * prior_weight
    if not model_bias:
        prec0[n, n] = 1e12  # bias pinned at 0
    rows, ys, pairs = [], [], []
    asked = set()
    for _ in range(budget):
        W = _np.array(rows).reshape(-1, n + 1)
        cov = _np.linalg.inv(prec0 + W.T @ W)
        mu = cov @ (W.T @ _np.array(ys)) if rows else _np.zeros(n + 1)
        best, best_pri, pick = None, -1.0, None
        for i in range(n):
            for j in range(n):
                if i == j or (i, j) in asked or not _np.isfinite(P2[i, j]):
                    continue
                w = _np.zeros(n + 1)
                w[i], w[j], w[n] = 1.0, -1.0, 1.0
                var = w @ cov @ w
                score = var if rule == "poe-max-info" else -abs(w @ mu) / _np.sqrt(var)
                tol = 1e-9 * max(1.0, abs(best)) if best is not None else 0.0
                if best is None or score > best + tol:
                    best, best_pri, pick = score, priority[i, j], (i, j)
                elif score >= best - tol and priority[i, j] > best_pri:
                    best, best_pri, pick = max(best, score), priority[i, j], (i, j)
        i, j = pick
        asked.add(pick)
        pairs.append(pick)
        w = _np.zeros(n + 1)
        w[i], w[j] = 1.0, -1.0
        w[n] = 1.0 if model_bias else 0.0
        rows.append(w)
        ys.append(P2[i, j] - 0.5)
    W = _np.array(rows)
    cov = _np.linalg.inv(prec0 + W.T @ W)
    mu = cov @ (W.T @ _np.array(ys))
    return _np.array(pairs), mu[:n], mu[n]


def naive_budget_grid(
    P,
    reference,
    orders,
    n_avail,
    budgets,
    strategy,
    debias,
    soft=False,
    tau=0.5,
    correlation="spearman",
    unseen="neutral",
):
    """(values per draw x budget, taus) of one strategy with plain loops and scipy."""
    P = _np.asarray(P, dtype=float)
    n_draws, n_contexts, _ = orders.shape
    n = P.shape[1]
    n_ordered = n * (n - 1)
    cap = n_ordered // 2 if strategy == "no-repeat" else n_ordered
    present_item = _np.isfinite(P).any(axis=2) | _np.isfinite(P).any(axis=1)
    ok = present_item & _np.isfinite(reference)
    values = _np.full((n_draws, len(budgets)), _np.nan)
    taus = _np.full((n_draws, len(budgets)), _np.nan)
    for d in range(n_draws):
        for k, R in enumerate(budgets):
            if R > cap:
                continue
            r = R - R % 2 if strategy == "symmetric" else R
            seen = [
                [int(code) for code in orders[d, c, : min(r, n_avail[c])]]
                for c in range(n_contexts)
            ]
            pooled = [P[c, code // n, code % n] for c in range(n_contexts) for code in seen[c]]
            t = tau
            if pooled:
                taus[d, k] = naive_balanced_from_values(pooled)
                if debias:
                    t = taus[d, k]
            rhos = []
            for c in range(n_contexts):
                sub = _np.full((n, n), _np.nan)
                for code in seen[c]:
                    i, j = code // n, code % n
                    p = P[c, i, j]
                    if debias and soft:
                        p = (
                            ((1 - t) / t) * p / (((1 - t) / t) * p + 1 - p)
                            if 0 < t < 1
                            else naive_decide(p, t)
                        )
                    sub[i, j] = p
                if seen[c]:
                    s = naive_win_ratio(sub, tau=t, soft=soft)[0]
                else:
                    s = _np.full(n, _np.nan)
                if unseen == "neutral":
                    s = _np.where(_np.isnan(s), 0.5, s)
                s = _np.where(ok[c], s, _np.nan)
                ref = _np.where(ok[c], reference[c], _np.nan)
                f = naive_spearman if correlation == "spearman" else naive_kendall
                rho = f(s, ref)[0]
                if _np.isfinite(rho):
                    rhos.append(rho)
            if rhos:
                values[d, k] = _np.mean(rhos)
    return values, taus


def naive_poe_scores(P2, pairs, prior_weight, model_bias):
    """Posterior mean of the Gaussian product of experts after the given comparisons."""
    n = P2.shape[0]
    prec0 = _np.eye(n + 1) * prior_weight
    if not model_bias:
        prec0[n, n] = 1e12
    if len(pairs) == 0:
        return _np.zeros(n)
    W = _np.zeros((len(pairs), n + 1))
    y = _np.empty(len(pairs))
    for r, (i, j) in enumerate(pairs):
        W[r, i], W[r, j] = 1.0, -1.0
        W[r, n] = 1.0 if model_bias else 0.0
        y[r] = P2[i, j] - 0.5
    return _np.linalg.solve(prec0 + W.T @ W, W.T @ y)[:n]


# =======================================================================================
# Section: Bradley–Terry, maximum-likelihood ranking, Elo (ranking/bradley_terry/,
# ranking/comparative/max_likelihood.py, ranking/leaderboard/elo.py). Plain loops,
# scipy.optimize, itertools.permutations.
# =======================================================================================

import itertools as _itertools  # noqa: E402

from scipy import optimize as _optimize  # noqa: E402


def naive_hard_outcome(p, tau):
    """1 if p > tau, 0 if p < tau, 0.5 (a tie) if p == tau."""
    if p > tau:
        return 1.0
    if p < tau:
        return 0.0
    return 0.5


def naive_bt_flat_from_P(P, soft=True, tau=0.5):
    """List the comparisons of one (N, N) matrix as flat arrays (first, second, outcome)."""
    first, second, outcome = [], [], []
    n = P.shape[0]
    for i in range(n):
        for j in range(n):
            if i != j and _np.isfinite(P[i, j]):
                first.append(i)
                second.append(j)
                outcome.append(P[i, j] if soft else naive_hard_outcome(P[i, j], tau))
    return _np.array(first, dtype=int), _np.array(second, dtype=int), _np.array(outcome)


def naive_bt_loglik(theta, first, second, outcome, weights=None, alpha=0.0):
    """sum w [y log s(d) + (1 - y) log s(-d)] - alpha/2 ||theta||^2, one comparison at a time."""
    total = 0.0
    for c in range(len(first)):
        w = 1.0 if weights is None else weights[c]
        d = theta[first[c]] - theta[second[c]]
        p = 1.0 / (1.0 + _np.exp(-d))
        total += w * (outcome[c] * _np.log(p) + (1.0 - outcome[c]) * _np.log(1.0 - p))
    return total - 0.5 * alpha * sum(t * t for t in theta)


def naive_components(first, second, n_items, weights=None):
    """Connected components by repeated flooding; -1 for items never compared."""
    adj = {i: set() for i in range(n_items)}
    for c in range(len(first)):
        if weights is None or weights[c] > 0:
            adj[first[c]].add(second[c])
            adj[second[c]].add(first[c])
    comp = [-1] * n_items
    k = 0
    for r in range(n_items):
        if comp[r] != -1 or not adj[r]:
            continue
        todo = [r]
        comp[r] = k
        while todo:
            i = todo.pop()
            for j in adj[i]:
                if comp[j] == -1:
                    comp[j] = k
                    todo.append(j)
        k += 1
    return _np.array(comp)


def naive_bt_fit(first, second, outcome, n_items, weights=None, alpha=0.0):
    """BT scores by scipy trust-region Newton on the explicit log-likelihood.

    One connected component with a finite MLE (or alpha > 0) expected. With alpha = 0 the
    first item is pinned at 0 (the likelihood is shift invariant) and the result is centred.
    """
    first = _np.asarray(first)
    second = _np.asarray(second)
    outcome = _np.asarray(outcome, dtype=float)
    w = _np.ones(len(first)) if weights is None else _np.asarray(weights, dtype=float)
    free = list(range(1, n_items)) if alpha == 0 else list(range(n_items))

    def full(x):
        t = _np.zeros(n_items)
        t[free] = x
        return t

    def fun(x):
        return -naive_bt_loglik(full(x), first, second, outcome, w, alpha)

    def grad(x):
        t = full(x)
        g = -alpha * t
        for c in range(len(first)):
            p = 1.0 / (1.0 + _np.exp(-(t[first[c]] - t[second[c]])))
            g[first[c]] += w[c] * (outcome[c] - p)
            g[second[c]] -= w[c] * (outcome[c] - p)
        return -g[free]

    def hess(x):
        H = naive_bt_hessian(full(x), first, second, w, n_items, alpha)
        return H[_np.ix_(free, free)]

    res = _optimize.minimize(
        fun,
        _np.zeros(len(free)),
        jac=grad,
        hess=hess,
        method="trust-exact",
        options={"gtol": 1e-13, "maxiter": 1000},
    )
    theta = full(res.x)
    if alpha == 0:
        theta -= theta.mean()
    return theta


def naive_bt_hessian(theta, first, second, w, n_items, alpha):
    """Hessian of the negative penalised BT log-likelihood, one comparison at a time."""
    H = alpha * _np.eye(n_items)
    for c in range(len(first)):
        p = 1.0 / (1.0 + _np.exp(-(theta[first[c]] - theta[second[c]])))
        h = w[c] * p * (1.0 - p)
        i, j = first[c], second[c]
        H[i, i] += h
        H[j, j] += h
        H[i, j] -= h
        H[j, i] -= h
    return H


def naive_bt_fisher_se(theta, first, second, n_items, weights=None, alpha=0.0):
    """sqrt(diag(pinv(H))) for the Hessian built one comparison at a time."""
    w = _np.ones(len(first)) if weights is None else _np.asarray(weights, dtype=float)
    H = naive_bt_hessian(theta, first, second, w, n_items, alpha)
    cov = _np.linalg.pinv(H) if alpha == 0 else _np.linalg.inv(H)
    return _np.sqrt(_np.diag(cov))


def naive_ml_terms(P, hard=False, tau=0.5, clip=1e-12):
    """Objective value of an order, as a function: sum over compared pairs, one at a time."""
    n = P.shape[0]
    pairs = []  # (i, j, term if i ranked above j, term otherwise) per present comparison
    for i in range(n):
        for j in range(n):
            if i == j or not _np.isfinite(P[i, j]):
                continue
            if hard:
                y = naive_hard_outcome(P[i, j], tau)
                pairs.append((i, j, y, 1.0 - y))
            else:
                p = min(max(P[i, j], clip), 1.0 - clip)
                pairs.append((i, j, _np.log(p), _np.log(1.0 - p)))

    def value(order):
        pos = {item: r for r, item in enumerate(order)}
        return sum(above if pos[i] < pos[j] else below for i, j, above, below in pairs)

    return value


def naive_ml_brute(P, hard=False, tau=0.5):
    """(best value, all best orders) over every permutation of the compared items."""
    n = P.shape[0]
    present = [i for i in range(n) if _np.isfinite(P[i]).any() or _np.isfinite(P[:, i]).any()]
    value = naive_ml_terms(P, hard, tau)
    vals = {perm: value(perm) for perm in _itertools.permutations(present)}
    best = max(vals.values())
    tied = [perm for perm, v in vals.items() if v >= best - 1e-9 * (1 + abs(best))]
    return best, tied


def naive_elo(first, second, outcome, n_items, k=4.0, initial=1000.0, base=10.0, scale=400.0):
    """Elo, game by game, with the textbook expected score."""
    r = [float(initial)] * n_items
    for a, b, s in zip(first, second, outcome, strict=True):
        ea = 1.0 / (1.0 + base ** ((r[b] - r[a]) / scale))
        eb = 1.0 / (1.0 + base ** ((r[a] - r[b]) / scale))
        r[a], r[b] = r[a] + k * (s - ea), r[b] + k * ((1.0 - s) - eb)
    return _np.array(r)
