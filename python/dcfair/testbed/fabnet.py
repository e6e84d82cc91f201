"""Building a fabric testbed: a namespace per simulated node, a veth pair per simulated link.

Rules:

- Names (fabric.py): host ``i`` is ``<prefix>h<i>`` with ``eth0``; switch ``j`` is
  ``<prefix>sw<j>`` with ``p<k>`` for the simulator's port ``k``. ``bed.down`` removes both
  kinds (it matches ``<prefix>h<digits>`` and ``<prefix>sw<digits>``), with or without the
  state file, so a crash at any point is cleaned up by ``dcfair testbed down``.
- Every veth is created directly inside its two namespaces (nothing in the root namespace).
- Switch namespaces: IPv6 off, offloads off on every port, ports up, no addresses (the kernel
  there must not answer or route what the switch forwards). Hosts: exactly as the dumbbell's
  (``bed._host``: address, static neighbours of every other host, offloads off, TCP settings,
  the NIC's token bucket).
- ``up`` decides about an existing testbed of the prefix as ``bed.up`` does (``bed.claim``:
  refused while its owner lives or without an owner record, removed when its owner is gone)
  and removes what it made if it fails.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import List

from dcfair.testbed import bed, netns
from dcfair.testbed.bed import Testbed, port_mac
from dcfair.testbed.fabric import FabricPlan
from dcfair.testbed.netns import TestbedError

OFF = "tx off tso off gso off gro off"
SYSCTL_V6 = "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1"


def _ns(tb: Testbed, end) -> str:
    kind, i, _ = end
    return f"{tb.prefix}h{i}" if kind == "h" else f"{tb.prefix}sw{i}"


def up(fp: FabricPlan, prefix: str, log=None, owned: bool = False) -> Testbed:
    """Creates the fabric's namespaces and links (``owned``: as ``bed.up``); returns the hosts'
    :class:`Testbed`."""
    tb = Testbed(prefix, fp.plan.hosts)
    bed.check(tb)
    why = netns.why_not_available(("ip", "tc", "ethtool"))
    if why:
        raise TestbedError(why)
    bed.claim(prefix, owned)
    t0 = time.monotonic()
    try:
        _build(tb, fp)
    except BaseException:
        bed.down(prefix)
        raise
    tb.created_at = time.time()
    bed.STATE_DIR.mkdir(parents=True, exist_ok=True)
    state = tb.to_json()
    state["switch_namespaces"] = {s.name: s.ns(prefix) for s in fp.switches}
    bed.state_path(prefix).write_text(json.dumps(state, indent=1) + "\n")
    if log:
        log(f"testbed {prefix!r}: {len(tb.hosts)} hosts, {len(fp.switches)} switch namespaces, {len(fp.links)} links "
            f"up in {time.monotonic() - t0:.1f} s")
    return tb


def _build(tb: Testbed, fp: FabricPlan) -> None:
    sws = [s.ns(tb.prefix) for s in fp.switches]
    netns.ip_batch([f"netns add {n}" for n in sws] + [f"netns add {tb.ns(h)}" for h in tb.hosts])
    lines: List[str] = []
    for a, b in fp.links:
        if b[0] == "h":
            a, b = b, a
        if a[0] == "h":  # host eth0 <-> switch port
            h = tb.hosts[a[1]]
            lines.append(f"link add eth0 netns {_ns(tb, a)} address {h.mac} type veth peer name {b[2]} netns {_ns(tb, b)} "
                         f"address {port_mac(h.index)}")
        else:
            lines.append(f"link add {a[2]} netns {_ns(tb, a)} type veth peer name {b[2]} netns {_ns(tb, b)}")
    netns.ip_batch(lines)

    def switch(s) -> None:
        ns = s.ns(tb.prefix)
        script = SYSCTL_V6 + "\nsysctl -qw net.ipv4.ip_forward=0\n" + "".join(
            f"ethtool -K {p.iface} {OFF} 2>/dev/null || ethtool -K {p.iface} tx off tso off gso off\n" for p in s.ports)
        netns.run(["sh", "-ec", script], ns=ns)
        netns.ip_batch(["link set lo up"] + [f"link set {p.iface} up" for p in s.ports], ns=ns)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(switch, fp.switches))
        list(pool.map(lambda h: bed._host(tb, h, OFF, SYSCTL_V6), tb.hosts))
