"""A dcfair dumbbell scenario (TOML) -> the options of the ns-3 program dumbbell.cc.

Every key of the scenario is either translated, checked against the one value ns-3 can mirror,
or ignored because it only names or describes the run; any other key is an error, so the two
sides cannot silently drift apart. Keys the file leaves out take dcfair's defaults
(docs/scenarios.md, docs/tcp.md); the table in validation/ns3/README.md lists the mapping.

Keys dcfair does not have yet (SACK, pacing, CUBIC; being added on other branches) use the
defaults announced for them: sack false, pacing false, ratios 1.0, cubic_c 0.4, cubic_beta 0.7,
fast convergence true, Reno-friendly region true (which ns-3.37 cannot mirror: see README).
"""

from __future__ import annotations

import tomllib

# dcfair's defaults for every key this mapping reads (dotted paths).
DEFAULTS: dict[str, object] = {
    "seed": 1,
    "sim.tie_break": "fifo",
    "topology.receivers": 1,
    "topology.host_buffer_pkts": 1000,
    "queue.kind": "droptail",
    "queue.limit_pkts": 100,
    "tcp.cc": "newreno",
    "tcp.mss_bytes": 1460,
    "tcp.header_bytes": 40,
    "tcp.init_cwnd_pkts": 2,
    "tcp.rcv_buf_bytes": 65535,
    "tcp.window_scaling": True,
    "tcp.delayed_ack": False,
    "tcp.delack_timeout_ms": 40.0,
    "tcp.min_rto_ms": 200.0,
    "tcp.max_rto_s": 60.0,
    "tcp.initial_rto_s": 1.0,
    "tcp.dupack_threshold": 3,
    "tcp.handshake": True,
    "tcp.max_backoff": 64,
    "tcp.timestamps": False,
    "tcp.limited_transmit": False,
    "tcp.clock_granularity_us": 0.0,
    "tcp.ssthresh_from": "flight_size",
    "tcp.recovery_cwnd": "ssthresh",
    "tcp.recovery_exit": "ssthresh",
    "tcp.recovery_max_burst": 0,
    "tcp.headerless_first_segment": False,
    "tcp.first_ack_resets_cwnd": False,
    # announced, not in today's engine
    "tcp.sack": False,
    "tcp.pacing": False,
    "tcp.pacing_ss_ratio": 1.0,
    "tcp.pacing_ca_ratio": 1.0,
    "tcp.cubic_c": 0.4,
    "tcp.cubic_beta": 0.7,
    "tcp.cubic_fast_convergence": True,
    "tcp.cubic_reno_friendly": True,
    "flows.start_min_s": 0.0,
    "flows.start_max_s": 0.0,
}

# Keys that only name, describe or shape dcfair's own output.
IGNORED = {"name", "description", "measure.cwnd", "measure.sample_flows"}

# ns-3's frame for a data segment on a point-to-point link: 20 IP + 20 TCP (no options:
# timestamps off, SACK blocks only on ACKs) + 2 PPP.
NS3_HEADER_BYTES = 42


class MappingError(ValueError):
    """The scenario asks for something the ns-3 mirror cannot reproduce."""


def flatten(d: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def parse_value(text: str) -> object:
    """A --set / KEY=VALUE value as dcfair reads it: a TOML literal, or a bare word as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def load(path: str, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, object]:
    """The scenario's keys (flattened, dotted) with KEY=VALUE overrides applied."""
    with open(path, "rb") as fh:
        flat = flatten(tomllib.load(fh))
    for kv in overrides:
        if "=" not in kv:
            raise MappingError(f"override {kv!r} is not KEY=VALUE")
        k, v = kv.split("=", 1)
        flat[k.strip()] = parse_value(v.strip())
    return flat


def ns3_args(flat: dict[str, object]) -> list[str]:
    """The dumbbell.cc options that mirror the scenario; MappingError names the key otherwise."""
    known = set(DEFAULTS) | IGNORED | {
        "sim.duration_s", "measure.window_s", "measure.sample_interval_s", "topology.kind",
        "topology.senders", "topology.access_rate_mbps", "topology.access_delay_us",
        "topology.bottleneck_rate_mbps", "topology.bottleneck_delay_us", "flows.count"}
    extra = sorted(k for k in flat if k not in known)
    if extra:
        raise MappingError(f"no ns-3 mirror for key(s) {', '.join(extra)}")
    g = lambda k: flat.get(k, DEFAULTS.get(k))  # noqa: E731

    def need(key: str, ok: bool, why: str) -> None:
        if not ok:
            raise MappingError(f"{key} = {g(key)!r}: {why}")

    for k in ("sim.duration_s", "measure.sample_interval_s", "topology.senders", "flows.count",
              "topology.access_rate_mbps", "topology.access_delay_us",
              "topology.bottleneck_rate_mbps", "topology.bottleneck_delay_us"):
        if k not in flat:
            raise MappingError(f"{k} is required for the ns-3 comparison")
    need("topology.kind", g("topology.kind") == "dumbbell", "only the dumbbell is mirrored")
    need("topology.receivers", g("topology.receivers") == 1, "the mirror has one receiver")
    need("queue.kind", g("queue.kind") == "droptail", "the mirror's bottleneck is DropTail")
    need("sim.tie_break", g("sim.tie_break") == "fifo",
         "ns-3 runs events of the same time in the order they were scheduled (fifo)")
    need("tcp.header_bytes", g("tcp.header_bytes") == NS3_HEADER_BYTES,
         "ns-3's data frame is 20 IP + 20 TCP + 2 PPP bytes (timestamps off)")
    need("tcp.handshake", g("tcp.handshake") is True, "ns-3 always opens with a handshake")
    need("tcp.max_rto_s", float(g("tcp.max_rto_s")) == 60.0, "ns-3 caps the RTO at 60 s")
    need("tcp.max_backoff",
         float(g("tcp.max_backoff")) * float(g("tcp.min_rto_ms")) / 1000.0 >= 60.0,
         "ns-3 doubles the RTO up to 60 s without a multiplier limit")
    need("tcp.timestamps", g("tcp.timestamps") is True,
         "ns-3 takes an RTT sample from every ACK (its send history), which dcfair does with "
         "timestamps = true; ns-3's own Timestamp option stays off (12 bytes per segment)")
    for k, v in (("tcp.ssthresh_from", "flight_size"), ("tcp.recovery_cwnd", "ssthresh"),
                 ("tcp.recovery_exit", "ssthresh"), ("tcp.recovery_max_burst", 0),
                 ("tcp.headerless_first_segment", False), ("tcp.first_ack_resets_cwnd", False)):
        need(k, g(k) == v, "an ns-2 rule that ns-3 does not have")
    need("tcp.cc", g("tcp.cc") in ("newreno", "cubic"), "ns-3 side: newreno or cubic")
    need("tcp.cubic_reno_friendly", g("tcp.cubic_reno_friendly") is False or g("tcp.cc") != "cubic",
         "ns-3.37's TcpCubic has no Reno-friendly region (added in ns-3.41): set it false")
    window = flat.get("measure.window_s", flat["sim.duration_s"])
    ratio = lambda k: round(float(g(k)) * 100)  # noqa: E731
    for k in ("tcp.pacing_ss_ratio", "tcp.pacing_ca_ratio"):
        need(k, abs(float(g(k)) * 100 - ratio(k)) < 1e-9 and ratio(k) > 0,
             "ns-3 takes the ratio in whole percent")

    b = lambda v: "1" if v else "0"  # noqa: E731
    return [
        f"--senders={g('topology.senders')}",
        f"--flows={g('flows.count')}",
        f"--accessRateMbps={g('topology.access_rate_mbps')!r}",
        f"--accessDelayUs={g('topology.access_delay_us')!r}",
        f"--bottleneckRateMbps={g('topology.bottleneck_rate_mbps')!r}",
        f"--bottleneckDelayUs={g('topology.bottleneck_delay_us')!r}",
        f"--bufferPkts={g('queue.limit_pkts')}",
        f"--hostBufferPkts={g('topology.host_buffer_pkts')}",
        f"--startMin={g('flows.start_min_s')!r}",
        f"--startMax={g('flows.start_max_s')!r}",
        f"--cc={g('tcp.cc')}",
        "--recovery=classic",
        f"--segmentSize={g('tcp.mss_bytes')}",
        f"--initCwnd={g('tcp.init_cwnd_pkts')}",
        f"--sndBuf={g('tcp.rcv_buf_bytes')}",
        f"--rcvBuf={g('tcp.rcv_buf_bytes')}",
        f"--windowScaling={b(g('tcp.window_scaling'))}",
        f"--sack={b(g('tcp.sack'))}",
        "--timestamps=0",
        f"--limitedTransmit={b(g('tcp.limited_transmit'))}",
        f"--dupThresh={g('tcp.dupack_threshold')}",
        f"--delAckCount={2 if g('tcp.delayed_ack') else 1}",
        f"--delAckTimeoutMs={g('tcp.delack_timeout_ms')!r}",
        f"--minRtoMs={g('tcp.min_rto_ms')!r}",
        f"--clockGranularityMs={float(g('tcp.clock_granularity_us')) / 1000.0!r}",
        f"--initialRtoS={g('tcp.initial_rto_s')!r}",
        f"--connTimeoutS={g('tcp.initial_rto_s')!r}",
        "--dataRetries=1000000",
        f"--sendSize={int(g('tcp.mss_bytes')) * 10}",
        f"--pacing={b(g('tcp.pacing'))}",
        f"--pacingSsRatio={ratio('tcp.pacing_ss_ratio')}",
        f"--pacingCaRatio={ratio('tcp.pacing_ca_ratio')}",
        "--paceInitialWindow=0",
        "--maxPacingRateGbps=4",
        f"--cubicC={g('tcp.cubic_c')!r}",
        f"--cubicBeta={g('tcp.cubic_beta')!r}",
        f"--cubicFastConvergence={b(g('tcp.cubic_fast_convergence'))}",
        "--hystart=0",
        "--cubicDeltaMs=10",
        "--cubicCntClamp=20",
        f"--duration={g('sim.duration_s')!r}",
        f"--window={window!r}",
        f"--sampleInterval={g('measure.sample_interval_s')!r}",
        f"--run={g('seed')}",
    ]
