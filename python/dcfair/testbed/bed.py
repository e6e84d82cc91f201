"""Building and removing a testbed: N host namespaces around one switch namespace.

Rules:

- Host ``i`` is namespace ``<prefix>h<i>`` with one interface ``eth0`` (address
  ``10.77.<i // 250>.<i % 250 + 1>/16``, MAC ``02:77:00:00:<i>``), joined by a veth pair to
  interface ``p<i>`` (no address, MAC ``02:77:01:00:<i>``) in ``<prefix>sw``. The veths are
  created directly inside their namespaces, so nothing of ours lives in the root namespace.
- The switch forwards at L2 without answering ARP for anyone, so every host gets a permanent
  neighbour entry for every other host; offloads are off on both ends (the switch re-injects
  frames through packet sockets: no partial checksums, no 64 KB super-frames); IPv6 is off
  (no router solicitations or DAD frames in the measurements).
- Per host: the TCP congestion control (one the kernel offers, else ``InvalidInput`` naming
  it; the namespace's default when the kernel allows it there, else only per socket, recorded
  as ``cc_scope``), ``rto_min``, ``quickack`` (no delayed ACKs) and ``initcwnd`` on the subnet route, TCP
  sysctls (SACK, timestamps, ECN, ...), and optionally a token bucket (``tbf``) with a packet FIFO on ``eth0`` for the access link's
  rate and the NIC's buffer.
- ``down`` removes every namespace matching ``<prefix>h<digits>``, ``<prefix>sw`` or
  ``<prefix>sw<digits>`` (a fabric's switches, ``fabnet.py``), ending the processes inside,
  then the state file and the owner record, with or without them: it cleans up after a crash
  too.
- The state file (``/run/dcfair-testbed/<prefix>.json``) lists what was created.
- A testbed that lives only as long as its process (a run without ``--keep``) has an owner
  record, ``<prefix>.owner`` beside the state file: the process's PID, its start time
  (``/proc/PID/stat`` field 22, so a reused PID is another process) and the boot it started
  in. :func:`claim` writes it before the first namespace exists, so a SIGKILL at any point
  leaves namespaces with their record. ``testbed up`` and ``run --keep`` make testbeds meant
  to outlive their process: no record.
- :func:`claim` (``up``, and ``fabnet.up``) decides about an existing testbed of the prefix,
  under a lock on the state directory so two runs never both decide: its owner alive ->
  refused, naming the PID; its owner gone -> removed with ``down``, one line on stderr
  (:func:`notice`, also with ``--quiet``); no record (``testbed up``, ``--keep``, or an older
  dcfair) -> refused, naming ``dcfair testbed down``, as nothing says it was left behind.
  A run removes its testbed at its end only while the record is still its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from dcfair.errors import InvalidInput
from dcfair.testbed import netns
from dcfair.testbed.netns import TestbedError

STATE_DIR = Path(os.environ.get("DCFAIR_TESTBED_STATE", "/run/dcfair-testbed"))
SUBNET_LEN = 16
MAX_HOSTS = 1000
DEFAULT_PREFIX = "dcf-"


def host_ip(i: int) -> str:
    return f"10.77.{i // 250}.{i % 250 + 1}"


def host_mac(i: int) -> str:
    return f"02:77:00:00:{i >> 8:02x}:{i & 0xFF:02x}"


def port_mac(i: int) -> str:
    return f"02:77:01:00:{i >> 8:02x}:{i & 0xFF:02x}"


@dataclass
class HostSpec:
    """One host namespace and its TCP settings."""

    index: int
    name: str  # the scenario's host name (s0, r0, udp) or h<i>
    cc: Optional[str] = None  # None: the kernel's default
    rto_min_ms: Optional[float] = None
    quickack: bool = False
    initcwnd: Optional[int] = None
    sysctls: Dict[str, str] = field(default_factory=dict)  # net.ipv4.tcp_sack -> "0", ...
    #: "namespace": ``cc`` is the namespace's default; "socket": the kernel restricts it
    #: (tcp_allowed_congestion_control), so each connection must set it (iperf3 -C).
    cc_scope: Optional[str] = None
    tx_rate_bps: Optional[float] = None  # tbf on eth0 (the access link); None: the veth's speed
    tx_limit_pkts: int = 1000

    @property
    def ip(self) -> str:
        return host_ip(self.index)

    @property
    def mac(self) -> str:
        return host_mac(self.index)

    @property
    def port(self) -> str:
        """Its interface in the switch namespace."""
        return f"p{self.index}"


@dataclass
class Testbed:
    prefix: str
    hosts: List[HostSpec] = field(default_factory=list)
    created_at: float = 0.0

    def ns(self, host: HostSpec) -> str:
        return f"{self.prefix}h{host.index}"

    @property
    def switch_ns(self) -> str:
        return f"{self.prefix}sw"

    def host(self, name: str) -> HostSpec:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def to_json(self) -> Dict:
        return {
            "prefix": self.prefix,
            "created_at": self.created_at,
            "switch_namespace": self.switch_ns,
            "subnet": f"10.77.0.0/{SUBNET_LEN}",
            "hosts": [
                dict(asdict(h), namespace=self.ns(h), ip=h.ip, mac=h.mac, switch_port=h.port, port_mac=port_mac(h.index))
                for h in self.hosts
            ],
        }


def uniform(n: int, prefix: str = DEFAULT_PREFIX, cc: Optional[str] = None, rto_min_ms: Optional[float] = None) -> Testbed:
    """``n`` hosts named ``h0 ..`` with the same settings (``dcfair testbed up``)."""
    return Testbed(prefix, [HostSpec(i, f"h{i}", cc=cc, rto_min_ms=rto_min_ms) for i in range(n)])


def check_prefix(prefix: str) -> None:
    # `<prefix>h<i>` must stay a usable namespace name; keep it short and plain.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,19}", prefix):
        raise InvalidInput("--prefix", f"1 to 20 letters, digits, '.', '_' or '-', got {prefix!r}")


def check(tb: Testbed) -> None:
    """Invalid input before anything is created: host count, congestion controls."""
    check_prefix(tb.prefix)
    if not 2 <= len(tb.hosts) <= MAX_HOSTS:
        raise InvalidInput("--hosts", f"must be 2 to {MAX_HOSTS}, got {len(tb.hosts)}")
    offered = netns.available_cc()
    for h in tb.hosts:
        if h.cc is not None and h.cc not in offered:
            raise InvalidInput("--cc" if h.name.startswith("h") else "tcp.cc",
                               f"the kernel does not offer {h.cc!r} (tcp_available_congestion_control: {' '.join(offered)})")
        if h.rto_min_ms is not None and not h.rto_min_ms > 0:
            raise InvalidInput("--rto-min-ms", f"must be positive, got {h.rto_min_ms}")


def ours(prefix: str) -> List[str]:
    """The namespaces a testbed of this prefix has: by name, whatever the state file says."""
    pat = re.compile(re.escape(prefix) + r"(h\d+|sw\d*)")
    return [n for n in netns.namespaces() if pat.fullmatch(n)]


def state_path(prefix: str) -> Path:
    return STATE_DIR / f"{prefix}.json"


def owner_path(prefix: str) -> Path:
    # not `.json`: no prefix's state file can have this name (prefixes may contain '.')
    return STATE_DIR / f"{prefix}.owner"


@dataclass(frozen=True)
class Owner:
    """The process a testbed lives as long as: PID, start time (clock ticks after boot,
    ``/proc/PID/stat`` field 22) and boot id."""

    pid: int
    start_ticks: int
    boot_id: str

    @staticmethod
    def of(pid: int) -> Optional["Owner"]:
        """The process ``pid`` as an owner; None if there is none (or only its zombie)."""
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return None
        if fields[0] in ("Z", "X"):  # field 3, the state: it has exited
            return None
        return Owner(pid, int(fields[19]), _boot_id())

    def alive(self) -> bool:
        return Owner.of(self.pid) == self


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def read_owner(prefix: str) -> Optional[Owner]:
    """The testbed's owner record; None without one (or unreadable: treated as none)."""
    try:
        d = json.loads(owner_path(prefix).read_text())
        return Owner(int(d["pid"]), int(d["start_ticks"]), str(d["boot_id"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def notice(msg: str) -> None:
    """A line on stderr that ``--quiet`` does not hide: the testbed removed something."""
    print(f"dcfair: {msg}", file=sys.stderr, flush=True)


@contextmanager
def _state_lock() -> Iterator[None]:
    import fcntl  # POSIX only; the mapping (no root) imports this module anywhere

    STATE_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(STATE_DIR, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def claim(prefix: str, owned: bool) -> None:
    """Makes the prefix ours before anything is built: refuses a testbed whose owner lives or
    that has no owner record, removes one whose owner is gone, and writes this process's owner
    record if ``owned``."""
    with _state_lock():
        existing = ours(prefix)
        owner = read_owner(prefix)
        if owner is not None and owner.alive():
            what = (f"a testbed with prefix {prefix!r} exists ({len(existing)} namespaces, e.g. {existing[0]})"
                    if existing else f"prefix {prefix!r} is taken")
            raise TestbedError(f"{what} and its run, PID {owner.pid}, is still going: wait for it or stop it, or "
                               f"remove the testbed under it with `dcfair testbed down --prefix {prefix}`")
        if existing and owner is None:
            raise TestbedError(
                f"a testbed with prefix {prefix!r} exists ({len(existing)} namespaces, e.g. {existing[0]}); "
                f"remove it with `dcfair testbed down --prefix {prefix}`"
            )
        if existing:
            removed = down(prefix)
            notice(f"testbed {prefix!r}: its run, PID {owner.pid}, is gone; removed its {len(removed)} namespaces")
        # the record is now this process's, or none (a dead owner's, left without namespaces
        # by a down cut short, must not make a later testbed look abandoned)
        if owned:
            tmp = owner_path(prefix).with_name(owner_path(prefix).name + ".tmp")
            tmp.write_text(json.dumps(asdict(Owner.of(os.getpid()))) + "\n")
            tmp.replace(owner_path(prefix))
        else:
            owner_path(prefix).unlink(missing_ok=True)


def owned_by_this_process(prefix: str) -> bool:
    owner = read_owner(prefix)
    return owner is not None and owner == Owner.of(os.getpid())


def up(tb: Testbed, log=None, owned: bool = False) -> Testbed:
    """Creates the testbed (``owned``: for as long as this process lives, with an owner
    record); on any failure removes what was made and raises."""
    check(tb)
    why = netns.why_not_available(("ip", "tc", "ethtool"))
    if why:
        raise TestbedError(why)
    claim(tb.prefix, owned)
    t0 = time.monotonic()
    try:
        _build(tb)
    except BaseException:
        down(tb.prefix)
        raise
    tb.created_at = time.time()
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    state_path(tb.prefix).write_text(json.dumps(tb.to_json(), indent=1) + "\n")
    if log:
        log(f"testbed {tb.prefix!r}: {len(tb.hosts)} hosts + switch namespace up in {time.monotonic() - t0:.1f} s")
    return tb


def _build(tb: Testbed) -> None:
    sw = tb.switch_ns
    netns.ip_batch([f"netns add {sw}"] + [f"netns add {tb.ns(h)}" for h in tb.hosts])
    netns.ip_batch(
        f"link add eth0 netns {tb.ns(h)} address {h.mac} type veth peer name {h.port} netns {sw} address {port_mac(h.index)}"
        for h in tb.hosts
    )
    # The switch namespace: ports up, no IPv6, offloads off. One shell for all ports.
    off = "tx off tso off gso off gro off"
    sysctl_v6 = "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1"
    script = sysctl_v6 + "\n" + "".join(f"ethtool -K {h.port} {off} 2>/dev/null || ethtool -K {h.port} tx off tso off gso off\n" for h in tb.hosts)
    netns.run(["sh", "-ec", script], ns=sw)
    netns.ip_batch(["link set lo up"] + [f"link set {h.port} up" for h in tb.hosts], ns=sw)
    # One shell and one `ip -batch` per host; a few at a time (each waits on the kernel).
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda h: _host(tb, h, off, sysctl_v6), tb.hosts))


def _host(tb: Testbed, h: HostSpec, off: str, sysctl_v6: str) -> None:
    ns = tb.ns(h)
    sysctls = [sysctl_v6]
    if h.cc is not None:
        # Outside the initial namespace the kernel lets a namespace's default be only one of
        # tcp_allowed_congestion_control (EPERM otherwise); sockets can still choose any
        # available one (TCP_CONGESTION, iperf3 -C), which is what the traffic does.
        sysctls.append(f"sysctl -qw net.ipv4.tcp_congestion_control={h.cc} 2>/dev/null || true")
    sysctls += [f"sysctl -qw {k}={v}" for k, v in sorted(h.sysctls.items())]
    script = "\n".join(sysctls) + f"\nethtool -K eth0 {off} 2>/dev/null || ethtool -K eth0 tx off tso off gso off\n"
    if h.tx_rate_bps is not None:
        # A token bucket at the access rate (burst: two full frames, the least tbf accepts at
        # these rates) over a packet FIFO of the NIC's buffer.
        rate = int(h.tx_rate_bps)
        script += (
            f"tc qdisc replace dev eth0 root handle 1: tbf rate {rate}bit burst 3028 latency 1s\n"
            f"tc qdisc replace dev eth0 parent 1:1 handle 10: pfifo limit {int(h.tx_limit_pkts)}\n"
        )
    script += "sysctl -n net.ipv4.tcp_congestion_control\n"
    got = netns.run(["sh", "-ec", script], ns=ns).stdout.split()
    if h.cc is not None:
        h.cc_scope = "namespace" if got and got[-1] == h.cc else "socket"
    route = f"route replace 10.77.0.0/{SUBNET_LEN} dev eth0 proto kernel scope link src {h.ip}"
    if h.rto_min_ms is not None:
        route += f" rto_min {_ms(h.rto_min_ms)}"
    if h.quickack:
        route += " quickack 1"
    if h.initcwnd is not None:
        route += f" initcwnd {int(h.initcwnd)}"
    lines = ["link set lo up", f"addr add {h.ip}/{SUBNET_LEN} dev eth0", "link set eth0 up", route]
    lines += [f"neigh replace {o.ip} lladdr {o.mac} dev eth0 nud permanent" for o in tb.hosts if o is not h]
    netns.ip_batch(lines, ns=ns)


def _ms(ms: float) -> str:
    """iproute2 takes whole milliseconds or microseconds (``rto_min 200ms`` / ``5000us``)."""
    us = round(ms * 1000)
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


class Interrupts:
    """What :func:`sigterm_interrupts` saw: ``fired`` is the first signal's number."""

    def __init__(self) -> None:
        self.fired: Optional[int] = None

    def check(self) -> None:
        """Raises ``KeyboardInterrupt`` if a signal came: its first raise can be lost when it
        lands in a finalizer (``__del__``, where Python only prints exceptions), so a run calls
        this on its way and before it writes results."""
        if self.fired is not None:
            raise KeyboardInterrupt


@contextmanager
def sigterm_interrupts() -> Iterator[Interrupts]:
    """Within the block SIGTERM and SIGINT raise ``KeyboardInterrupt`` and are remembered in the
    :class:`Interrupts` yielded, so a run that is told to stop unwinds through its own cleanup
    as on Ctrl-C even when that first raise is lost; the previous handlers come back after."""
    st = Interrupts()

    def interrupt(signum, frame):
        if st.fired is None:
            st.fired = signum
        raise KeyboardInterrupt

    old = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield st
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class Run:
    """What a running testbed run holds, for :func:`running` to clean up: ``switch`` (has
    ``kill()``) and ``traffic`` (has ``stop()``) while they run, ``created`` once the run made
    its namespaces, and ``stop`` (:class:`Interrupts`)."""

    def __init__(self, stop: Interrupts) -> None:
        self.stop = stop
        self.switch = None
        self.traffic = None
        self.created = False


@contextmanager
def running(prefix: str, keep: bool) -> Iterator[Run]:
    """A run's lifetime, the dumbbell's and the fabric's alike: SIGTERM and SIGINT interrupt it
    (:func:`sigterm_interrupts`); on any exception the switch it still holds is killed and its
    traffic stopped; whatever happens, the namespaces it made are removed unless ``keep``."""
    with sigterm_interrupts() as stop:
        r = Run(stop)
        try:
            yield r
        except BaseException:
            if r.switch is not None:
                r.switch.kill()
            if r.traffic is not None:
                r.traffic.stop()
            raise
        finally:
            # only while the testbed is still ours: after a `testbed down` by hand, the prefix
            # may be another run's by now
            if r.created and not keep and owned_by_this_process(prefix):
                down(prefix)


def down(prefix: str = DEFAULT_PREFIX, log=None) -> List[str]:
    """Removes every namespace of this prefix (switch first), the state file and the owner
    record; returns the namespaces."""
    names = ours(prefix)
    try:
        netns.delete_all(names)
    except TestbedError:
        pass  # `ip -force -batch` reports a name deleted meanwhile; what is left is checked below
    for path in (state_path(prefix), owner_path(prefix)):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    left = ours(prefix)
    if left:
        raise TestbedError(f"could not remove namespaces: {', '.join(left)}")
    if log:
        log(f"testbed {prefix!r}: removed {len(names)} namespaces")
    return names


def load_state(prefix: str) -> Optional[Dict]:
    try:
        return json.loads(state_path(prefix).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
