#!/usr/bin/env python3
"""Run check_poisson.tcl and test its arrival times against a Poisson process.

Prints JSON: the rate, the mean/CV of the gaps (exponential: CV = 1), the
Kolmogorov-Smirnov distance of the gaps to Exp(lambda) with its 1 % critical value,
the index of dispersion of counts in bins (Poisson: 1), the lag-1 autocorrelation of
the gaps (independent: 0) and the smallest gap (a shifted exponential would show a
floor). Usage: check_poisson.py [--seed N] [--duration S] [--ns ns]
"""
import argparse, json, math, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=1000.0)
    ap.add_argument("--lambda-pps", type=float, default=0.05 * 100e6 / (8 * 1500))
    ap.add_argument("--ns", default="ns")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ns2poisson") as d:
        out = os.path.join(d, "arrivals.tr")
        subprocess.run([a.ns, os.path.join(HERE, "check_poisson.tcl"), out, str(a.seed),
                        str(a.duration), repr(a.lambda_pps)], check=True)
        t = [float(l.split()[1]) for l in open(out) if l.startswith("r ")]
    gaps = [y - x for x, y in zip(t, t[1:])]
    n = len(gaps)
    lam = a.lambda_pps
    mean = sum(gaps) / n
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (n - 1))
    s = sorted(gaps)
    ks = max(max((i + 1) / n - (1 - math.exp(-lam * g)), (1 - math.exp(-lam * g)) - i / n)
             for i, g in enumerate(s))
    binw = 0.1
    nb = int(a.duration / binw)
    counts = [0] * nb
    for x in t:
        k = int(x / binw)
        if k < nb:
            counts[k] += 1
    cm = sum(counts) / nb
    cv = sum((c - cm) ** 2 for c in counts) / (nb - 1)
    ac = sum((gaps[i] - mean) * (gaps[i + 1] - mean) for i in range(n - 1)) / ((n - 1) * sd * sd)
    res = {
        "seed": a.seed, "duration_s": a.duration, "lambda_pps": lam, "arrivals": len(t),
        "rate_pps": len(t) / a.duration, "gap_mean_s": mean, "gap_mean_expected_s": 1 / lam,
        "gap_cv": sd / mean, "ks_distance": ks, "ks_critical_1pct": 1.628 / math.sqrt(n),
        "dispersion_index_100ms": cv / cm, "gap_lag1_autocorrelation": ac,
        "min_gap_s": s[0], "time_resolution_s": 1e-6,
    }
    json.dump(res, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
