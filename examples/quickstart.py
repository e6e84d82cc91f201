"""dcfair quick start: load a scenario, override it, run it, sweep it, plot it.

    python examples/quickstart.py [OUT_DIR]        # default out/quickstart

The HCF paper's long-flow setting (400 TCP flows, one 100 Mbps bottleneck, a 20-packet buffer),
shortened to 20 simulated seconds so that the whole script takes a few seconds.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files; no window needed
import matplotlib.pyplot as plt

import dcfair

ROOT = Path(__file__).resolve().parents[1]
out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/quickstart")

# 1. Load a scenario (parsed and validated by the engine; a bad key raises dcfair.InvalidInput).
base = dcfair.Scenario.load(ROOT / "scenarios/papers/hcf/longflows.toml")
print(base.name, "-", base.get("queue.kind"), "with a", base.get("queue.limit_pkts"), "packet buffer")

# 2. Override any key by its dotted path: each call returns a new Scenario.
short = base.with_overrides({"sim.duration_s": 20, "measure.sample_interval_s": 0.01, "measure.sample_flows": False})
hcf = short.set("queue.kind", "hcf")

# 3. Run it: a Result with the summary and the tables as pandas DataFrames.
res = dcfair.run(hcf, seed=1, out=out / "hcf")
print("HCF: jain_index", round(res.metrics["jain_index"], 3), "starved_fraction", res.metrics["starved_fraction"])
tcp = res.flows[res.flows["kind"] == "tcp"]
print("flows that delivered nothing in the window:", int((tcp["pkts_in_window"] == 0).sum()), "of", len(tcp))

# 4. Sweep: the product of the varied values and the seeds, on all local cores (resumable).
table = dcfair.sweep(short, vary={"queue.kind": ["droptail", "sfq", "hcf"]}, seeds=2, out=out / "sweep")
print(table.groupby("queue.kind", sort=False)[["jain_index", "starved_fraction"]].mean())

# 5. Plot: the starved fraction per discipline, and HCF's bottleneck queue over time.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
means = table.groupby("queue.kind", sort=False)["starved_fraction"].agg(["mean", "std"])
ax1.bar(means.index, means["mean"], yerr=means["std"], capsize=4)
ax1.set_ylabel("fraction of flows starved (last 10 s)")
queue = res.series("queue_pkts")
ax2.plot(queue.index, queue["sw->r0"], linewidth=0.6)
ax2.set_xlim(19, 20)
ax2.set_xlabel("simulated time (s)")
ax2.set_ylabel("HCF queue (packets)")
fig.tight_layout()
png = out / "quickstart.png"
fig.savefig(png, dpi=100)
print("wrote", png)

# 6. The HTML report of the sweep (self-contained: open it in any browser).
print("wrote", dcfair.report(out / "sweep"))
