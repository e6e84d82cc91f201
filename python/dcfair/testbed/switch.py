"""The switch in the switch namespace: ``dcfair-switch`` (default) or a Linux bridge (baseline).

Rules:

- ``dcfair``: writes ``switch.toml`` (the plan's ports: ``iface``, ``prefixes``, ``rate_bps``,
  ``delay_us``, ``[port.queue]``; ``seed``; ``[fairq]``), starts the binary inside the switch
  namespace, waits for its ``ready`` line (it has opened its sockets), and on stop sends
  SIGTERM and reads the ``stats.json`` it writes on exit. The switch is ``$DCFAIR_SWITCH``,
  else ``target/release/dcfair-switch`` of this checkout, else ``dcfair-switch`` on PATH, else
  the one inside the Python extension (``python -m dcfair.switch``: what a wheel install has).
  ``$DCFAIR_SWITCH_SET`` (``KEY=VALUE,...``, top-level keys of ``switch.toml`` with word
  values, e.g. ``wait=hybrid,arrival=kernel``), when set, adds those keys: a diagnostic for
  the switch's own settings (docs/validation.md, testbed section); the switch refuses a bad one.
- ``bridge``: a kernel bridge over the ports, each port a token bucket (``tbf``) at its rate
  over a packet FIFO of its queue's ``limit_pkts``: DropTail at the right rate whatever
  ``queue.kind`` says, and no delay line (this kernel has no netem). A diagnostic and a
  baseline for the plumbing, not a discipline under test; ``summary.json`` says so.
- Port counters for both come from the kernel's interface statistics in the switch namespace
  (``ip -s -j link``): a frame counts when the switch hands it to the veth. The queue's own
  figures (drops, marks, occupancy, FairQ) come from the dcfair switch's ``stats.json``, read by
  :func:`switch_port` with the exact keys of docs/testbed.md.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from dcfair.procs import child_of_this_process
from dcfair.testbed import netns
from dcfair.testbed.bed import Testbed
from dcfair.testbed.mapping import Plan
from dcfair.testbed.netns import TestbedError

KINDS = ("dcfair", "bridge")
REPO = Path(__file__).resolve().parents[3]


def find_binary() -> Optional[List[str]]:
    """The command that runs the switch (module rules), or None on a system without it."""
    env = os.environ.get("DCFAIR_SWITCH")
    if env:
        return [env]
    local = REPO / "target" / "release" / "dcfair-switch"
    if local.exists():
        return [str(local)]
    on_path = shutil.which("dcfair-switch")
    if on_path:
        return [on_path]
    from dcfair import _engine

    return [sys.executable, "-m", "dcfair.switch"] if hasattr(_engine, "switch_main") else None


def toml_dumps(doc: Dict[str, Any]) -> str:
    """A small TOML writer for the switch's config: scalars, lists of scalars, tables, arrays of tables."""
    out: List[str] = []
    _table(doc, [], out)
    return "\n".join(out).strip() + "\n"


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def _table(doc: Dict[str, Any], path: List[str], out: List[str]) -> None:
    subs, arrays = [], []
    for k, v in doc.items():
        if isinstance(v, dict):
            subs.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            out.append(f"{_key(k)} = {_scalar(v)}")
    for k, v in subs:
        out.append("")
        out.append("[" + ".".join(_key(p) for p in path + [k]) + "]")
        _table(v, path + [k], out)
    for k, items in arrays:
        for item in items:
            out.append("")
            out.append("[[" + ".".join(_key(p) for p in path + [k]) + "]]")
            _table(item, path + [k], out)


def port_counters(tb: Testbed) -> Dict[str, Dict[str, int]]:
    """``p<i>`` -> the kernel's tx/rx packet and byte counters of that switch port."""
    p = netns.run(["ip", "-n", tb.switch_ns, "-s", "-j", "link", "show"])
    out = {}
    for link in json.loads(p.stdout):
        st = link.get("stats64") or link.get("stats") or {}
        out[link["ifname"]] = {
            "tx_packets": st.get("tx", {}).get("packets", 0), "tx_bytes": st.get("tx", {}).get("bytes", 0),
            "rx_packets": st.get("rx", {}).get("packets", 0), "rx_bytes": st.get("rx", {}).get("bytes", 0),
            "tx_dropped": st.get("tx", {}).get("dropped", 0),
        }
    return out


class Switch:
    """A running switch; :meth:`stop` returns its statistics (``stats.json`` or the bridge's tc counters)."""

    def __init__(self, kind: str, tb: Testbed, plan: Plan, out_dir: Path, log=None):
        if kind not in KINDS:
            raise ValueError(kind)
        self.kind, self.tb, self.plan, self.dir, self.log = kind, tb, plan, Path(out_dir), log
        self.proc: Optional[subprocess.Popen] = None
        self.stats: Dict[str, Any] = {}
        self.ready_at: Optional[float] = None

    def start(self) -> "Switch":
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.kind == "bridge":
            self._bridge()
        else:
            self._dcfair()
        return self

    def _dcfair(self) -> None:
        binary = find_binary()
        if binary is None:
            raise TestbedError("dcfair-switch not found, and this dcfair was built without it (not Linux): build it "
                               "(`cargo build --release -p dcfair-switch`), set DCFAIR_SWITCH, or use --switch bridge")
        cfg = self.dir / "switch.toml"
        doc = self.plan.switch_config()
        extra = os.environ.get("DCFAIR_SWITCH_SET", "")
        for item in filter(None, (x.strip() for x in extra.split(","))):
            key, _, value = item.partition("=")
            doc = {key.strip(): value.strip(), **doc}
        cfg.write_text(toml_dumps(doc))
        self.stats_path = self.dir / "switch-stats.json"
        argv = ["ip", "netns", "exec", self.tb.switch_ns, *binary, "--config", str(cfg), "--stats", str(self.stats_path),
                "--seed", str(self.plan.seed)]
        self.stderr = open(self.dir / "switch.log", "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                     preexec_fn=child_of_this_process())
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestbedError(f"dcfair-switch exited ({self.proc.returncode}) before it was ready; "
                                   f"see {self.dir / 'switch.log'}")
            r, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if r:
                line = self.proc.stdout.readline()
                if line.strip() == "ready":
                    # The switch's clock (its stats' time series) starts just before `ready`.
                    self.ready_at = time.monotonic()
                    # Keep draining its stdout (into switch.log) so a chatty switch never
                    # blocks on a full pipe.
                    import threading

                    def drain(src=self.proc.stdout, dst=self.stderr):
                        for rest in src:
                            dst.write(rest)

                    threading.Thread(target=drain, daemon=True).start()
                    return
        raise TestbedError("dcfair-switch did not print `ready` within 15 s")

    def _bridge(self) -> None:
        sw = self.tb.switch_ns
        index = {h.name: h for h in self.tb.hosts}
        lines = ["link add br0 type bridge forward_delay 0 stp_state 0", "link set br0 up"]
        lines += [f"link set {index[p.host].port} master br0" for p in self.plan.ports]
        netns.ip_batch(lines, ns=sw)
        script = ""
        for p in self.plan.ports:
            dev = index[p.host].port
            limit = int(p.queue.get("limit_pkts", 100))
            script += (f"tc qdisc replace dev {dev} root handle 1: tbf rate {int(p.rate_bps)}bit burst 3028 latency 1s\n"
                       f"tc qdisc replace dev {dev} parent 1:1 handle 10: pfifo limit {limit}\n")
        netns.run(["sh", "-ec", script], ns=sw)

    def stop(self) -> Dict[str, Any]:
        """Stops the switch (SIGTERM, then KILL after 10 s) and returns its statistics."""
        if self.kind == "bridge":
            self.stats = self._bridge_stats()
            return self.stats
        if not self._terminate(10.0):
            raise TestbedError("dcfair-switch did not exit within 10 s of SIGTERM")
        if self.proc is not None:
            self.stderr.close()
            if self.proc.returncode not in (0, None):
                raise TestbedError(f"dcfair-switch exited {self.proc.returncode}; see {self.dir / 'switch.log'}")
            self.proc = None
        try:
            self.stats = json.loads(self.stats_path.read_text())
        except (OSError, ValueError) as e:
            raise TestbedError(f"dcfair-switch wrote no readable stats ({self.stats_path}): {e}") from None
        return self.stats

    def kill(self) -> None:
        """On error: end the process without collecting anything."""
        self._terminate(5.0)

    def _terminate(self, timeout_s: float) -> bool:
        """SIGTERM to a running switch, KILL if it has not exited within ``timeout_s``; False
        only if it had to be killed."""
        if self.proc is None or self.proc.poll() is not None:
            return True
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
            return True
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False

    def _bridge_stats(self) -> Dict[str, Any]:
        p = netns.run(["tc", "-s", "-j", "qdisc", "show"], ns=self.tb.switch_ns)
        ports: Dict[str, Dict[str, int]] = {}
        for q in json.loads(p.stdout or "[]"):
            if q.get("kind") == "pfifo":
                ports[q["dev"]] = {"packets_out": q.get("packets", 0), "bytes_out": q.get("bytes", 0),
                                   "drops": q.get("drops", 0), "backlog_pkts_at_end": q.get("qlen", 0)}
        return {"switch": "bridge", "ports": ports}


def switch_port(stats: Dict[str, Any], iface: str, window_s: Optional[tuple] = None) -> Dict[str, Any]:
    """One port of ``dcfair-switch``'s ``stats.json`` (docs/testbed.md, "stats.json"), by its
    interface, as the figures the orchestration reports. Exact keys, no guessing: a file that is
    not the switch's, or lacks the port or a key, raises :class:`TestbedError` naming it.

    Returns ``kind``, ``received_pkts``, ``dequeued_pkts``, ``dequeued_bytes``, ``drops_pkts``,
    ``marks``, ``queued_pkts``, ``in_delay_line``, ``max_len_pkts``, ``max_len_bytes``,
    ``mean_len_pkts``, ``mean_len_bytes`` (the port's ``queue``), ``tx_frames``, ``tx_errors``,
    and ``fairq``: ``None`` or the port's ``fairq`` object (``window_rewrites``, ``flows``,
    ``window_bytes``, ``port_window_bytes``, ``avg_queue_bytes``, ``target_bytes``, ...).
    With ``window_s = (t0, t1)`` (seconds on the switch's clock, which starts when it opens its
    sockets), also the means of the port's time series over the samples in that window:
    ``window_queue_mean_pkts``, ``window_queue_mean_bytes``, ``window_fairq_window_mean_bytes``
    (None without samples) and ``window_samples``."""
    try:
        if stats["switch"] != "dcfair-switch":
            raise TestbedError(f"switch stats: `switch` is {stats['switch']!r}, not 'dcfair-switch'")
        port = next((p for p in stats["ports"] if p["iface"] == iface), None)
        if port is None:
            raise TestbedError(f"switch stats: no port with iface {iface!r}")
        q = port["queue"]
        out = {k: q[k] for k in ("kind", "received_pkts", "dequeued_pkts", "dequeued_bytes", "drops_pkts", "marks",
                                 "queued_pkts", "in_delay_line", "max_len_pkts", "max_len_bytes", "mean_len_pkts",
                                 "mean_len_bytes")}
        out.update(tx_frames=port["tx_frames"], tx_errors=port["tx_errors"], fairq=port["fairq"])
        if window_s is not None:
            ser = port["series"]
            idx = [i for i, t in enumerate(ser["t_s"]) if window_s[0] <= t <= window_s[1]]

            def mean(key):
                return sum(ser[key][i] for i in idx) / len(idx) if idx else None

            out.update(window_samples=len(idx), window_queue_mean_pkts=mean("queue_pkts"),
                       window_queue_mean_bytes=mean("queue_bytes"),
                       window_fairq_window_mean_bytes=mean("fairq_window_bytes"))
        return out
    except KeyError as e:
        raise TestbedError(f"switch stats: missing key {e.args[0]!r} (port {iface!r})") from None
