"""AI training jobs sharing a fabric: which job slows down, under ECMP, spraying and NDP?

    python examples/ai_jobs.py [OUT_DIR] [--quick]       # default out/ai_jobs

Three all-reduce jobs of 32 hosts each share a k = 8 fat-tree (scenarios/jobs/three_allreduce_k8.toml):
"packed" on 32 contiguous hosts (two pods), "ring" and "tree" on 32 hosts each drawn at random
from the rest. Each runs under three fabrics: TCP over ECMP, TCP sprayed per packet (oblivious
round robin, with a 100 us reordering window), and NDP (trimming switches, per-packet paths).
Every run also runs each job alone (its baseline), so each job's slowdown is its completion
time shared over its completion time alone. Seeds 1 to 3 (--quick: seed 1, one iteration).
Writes ai_jobs.csv (one row per fabric, seed and job) and ai_jobs.png; docs/studies/ai-jobs.md
quotes them.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

import dcfair

ROOT = Path(__file__).resolve().parents[1]
args = [a for a in sys.argv[1:] if not a.startswith("--")]
quick = "--quick" in sys.argv
out = Path(args[0]) if args else Path("out/ai_jobs")
out.mkdir(parents=True, exist_ok=True)

NDP = {f"groups.{j}.transport": "ndp" for j in ("packed", "ring", "tree")}
FABRICS = {
    "TCP, ECMP": {},
    "TCP, sprayed": {"routing.mode": "spray_round_robin", "tcp.reorder_window_us": 100},
    "NDP": NDP,
}
seeds = [1] if quick else [1, 2, 3]
extra = {f"groups.{j}.iterations": 1 for j in ("packed", "ring", "tree")} if quick else {}

base = dcfair.Scenario.load(ROOT / "scenarios/jobs/three_allreduce_k8.toml")
rows = []
for fabric, ov in FABRICS.items():
    for seed in seeds:
        res = dcfair.run(base.with_overrides({**ov, **extra}), seed=seed, out=out / "runs" / f"{fabric.replace(', ', '-')}-{seed}")
        for _, j in res.jobs.iterrows():
            rows.append({"fabric": fabric, "seed": seed, "job": j["job"], "collective": j["collective"],
                         "completion_ms": j["completion_s"] * 1e3, "alone_ms": j["alone_completion_s"] * 1e3,
                         "slowdown": j["slowdown"], "iteration_mean_ms": j["iteration_mean_s"] * 1e3})
        print(f"{fabric:13s} seed {seed}: " + ", ".join(f"{r['job']} {r['slowdown']:.3f}" for r in rows[-3:])
              + f"; Jain {res.metrics['jobs_jain_slowdown']:.3f}")
table = pd.DataFrame(rows)
table.to_csv(out / "ai_jobs.csv", index=False)
mean = table.groupby(["fabric", "job"], sort=False)[["completion_ms", "alone_ms", "slowdown"]].mean()
print(mean.round(3).to_string())

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
jobs = ["packed", "ring", "tree"]
for i, fabric in enumerate(FABRICS):
    m = mean.loc[fabric]
    xs = [k + (i - 1) * 0.27 for k in range(len(jobs))]
    axes[0].bar(xs, [m.loc[j, "slowdown"] for j in jobs], width=0.27, label=fabric)
    axes[1].bar(xs, [m.loc[j, "completion_ms"] for j in jobs], width=0.27, label=fabric)
for ax, label in zip(axes, ("slowdown (shared / alone)", "completion time, ms")):
    ax.set_xticks(range(len(jobs)), jobs)
    ax.set_ylabel(label)
axes[0].axhline(1.0, color="grey", lw=0.6)
axes[0].legend(fontsize=7)
fig.suptitle(f"three all-reduce jobs on a k = 8 fat-tree, mean of {len(seeds)} seed(s)")
fig.tight_layout()
fig.savefig(out / "ai_jobs.png", dpi=120)
print(f"wrote {out / 'ai_jobs.csv'} and {out / 'ai_jobs.png'}")
