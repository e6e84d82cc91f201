#!/usr/bin/env python3
"""A stand-in for `dcfair-switch` that keeps its command-line contract (tests/test_testbed.py):
`--config switch.toml --stats stats.json [--seed N]`, prints `ready`, runs until SIGTERM or
SIGINT, then writes stats.json and exits 0. It forwards with a Linux bridge over the config's
interfaces (no queue discipline of its own), so the orchestration's dcfair path can be tested
before, or without, the real switch."""

import argparse
import json
import signal
import subprocess
import sys
import time

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

p = argparse.ArgumentParser()
p.add_argument("--config", required=True)
p.add_argument("--stats", required=True)
p.add_argument("--seed", type=int)
a = p.parse_args()
cfg = tomllib.load(open(a.config, "rb"))
ifaces = [port["iface"] for port in cfg["port"]]
for port in cfg["port"]:  # the contract's keys, checked
    assert set(port) <= {"iface", "prefixes", "rate_bps", "delay_us", "queue"}, port
    assert port["prefixes"] and port["rate_bps"] > 0 and "kind" in port["queue"], port
cmds = "link add fakebr type bridge\nlink set fakebr up\n" + "".join(f"link set {i} master fakebr\n" for i in ifaces)
subprocess.run(["ip", "-batch", "-"], input=cmds, text=True, check=True)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
signal.signal(signal.SIGINT, lambda *_: stop.append(1))
print("ready", flush=True)
while not stop:
    time.sleep(0.05)
subprocess.run(["ip", "link", "del", "fakebr"], check=False)
# The real switch's stats.json layout (docs/testbed.md), its queue figures zero: the bridge has
# none to give. "fake" in `io` tells the files apart.
queue = {k: 0 for k in ("received_pkts", "received_bytes", "enqueued_pkts", "dequeued_pkts", "dequeued_bytes",
                        "drops_pkts", "marks", "queued_pkts", "queued_bytes", "in_delay_line", "max_len_pkts",
                        "max_len_bytes", "mean_len_pkts", "mean_len_bytes")}
stats = {"switch": "dcfair-switch", "io": "fake: a Linux bridge", "seed": a.seed, "fairq_rewrites": 0,
         "ports": [{"iface": port["iface"], "tx_frames": 0, "tx_errors": 0, "fairq": None,
                    "series": {k: [] for k in ("t_s", "queue_pkts", "queue_bytes", "fairq_flows", "fairq_window_bytes")},
                    "queue": dict(queue, kind=port["queue"]["kind"], drops={})} for port in cfg["port"]]}
json.dump(stats, open(a.stats, "w"))
sys.exit(0)
