# dumbbell.tcl -- small-scale ns-2 scenario for differential tests against dcfair.
#
# N TCP NewReno flows (flow i on its own sender host, fixed start times) -> switch ->
# one bottleneck link -> receiver, no UDP, everything traced:
#   * ns-2's standard trace of every link (+ - r d records),
#   * every change of the TCP agents' variables cwnd_ ssthresh_ t_seqno_ ack_ dupacks_
#     maxseq_ rtt_ backoff_ (ns-2's variable trace: "t saddr sport daddr dport var value").
# The dcfair side is scenarios written by diff.py and run by `simtrace` (feature `trace`).
#
# Usage: ns dumbbell.tcl --out PREFIX [--key value ...]; keys below. Writes PREFIX.tr.
#
# To put 1500 bytes on the wire for every data segment (ns-2 sends segment 0 without the
# 40 header bytes when useHeaders_ is on), the default here is packetSize_ 1500 with
# useHeaders_ false, which is exactly 1460 payload + 40 header as dcfair sends. With
# --headers 1, ns-2's own accounting (packetSize_ 1460 + useHeaders_: segment 0 is 1460
# bytes), to compare with dcfair's tcp.headerless_first_segment = true.

array set cfg {
    out                  /tmp/ns2diff
    flows                1
    starts               "0.0"
    duration             1.0
    access_rate_mbps     1000.0
    access_delay_us      25.0
    bottleneck_rate_mbps 100.0
    bottleneck_delay_us  25.0
    limit                6
    window               44
    init_cwnd            2
    singledup            1
    maxburst             0
    min_rto_s            0.2
    max_rto_s            60.0
    initial_rto_s        3.0
    pkt_bytes            1500
    delay_growth         false
    headers              0
}
foreach {k v} $argv {
    set key [string map {- _} [string range $k 2 end]]
    if {![info exists cfg($key)]} { puts stderr "unknown option $k"; exit 2 }
    set cfg($key) $v
}

set ns [new Simulator]
global defaultRNG
$defaultRNG seed 1
set tf [open $cfg(out).tr w]
$ns trace-all $tf

if {$cfg(headers)} {
    # ns-2's default accounting: packetSize_ payload + 40 header bytes, except segment 0
    Agent/TCP set packetSize_           [expr {$cfg(pkt_bytes) - 40}]
    Agent/TCP set useHeaders_           true
    Agent/TCP set tcpip_base_hdr_size_  40
} else {
    Agent/TCP set packetSize_           $cfg(pkt_bytes)
    Agent/TCP set useHeaders_           false
}
Agent/TCP set window_               $cfg(window)
Agent/TCP set windowInit_           $cfg(init_cwnd)
Agent/TCP set windowInitOption_     1
Agent/TCP set minrto_               $cfg(min_rto_s)
Agent/TCP set maxrto_               $cfg(max_rto_s)
Agent/TCP set rtxcur_init_          $cfg(initial_rto_s)
Agent/TCP set syn_                  false
# delay_growth_ (default true) resets cwnd_ to windowInit_ on the ACK of segment 0 even
# without a SYN, so the first ACK does not open the window; off here so that the traces
# align from the start (a one-time startup quirk, see ../differences.md).
Agent/TCP set delay_growth_         $cfg(delay_growth)
Agent/TCP set timestamps_           false
Agent/TCP set maxburst_             $cfg(maxburst)
Agent/TCP set singledup_            $cfg(singledup)
Agent/TCPSink set packetSize_       40

set sw  [$ns node]
set rcv [$ns node]
$ns simplex-link $sw $rcv [expr {$cfg(bottleneck_rate_mbps)*1e6}] [expr {$cfg(bottleneck_delay_us)*1e-6}] DropTail
$ns queue-limit $sw $rcv $cfg(limit)
$ns simplex-link $rcv $sw [expr {$cfg(bottleneck_rate_mbps)*1e6}] [expr {$cfg(bottleneck_delay_us)*1e-6}] DropTail
$ns queue-limit $rcv $sw 10000

for {set i 0} {$i < $cfg(flows)} {incr i} {
    set snd($i) [$ns node]
    $ns duplex-link $snd($i) $sw [expr {$cfg(access_rate_mbps)*1e6}] [expr {$cfg(access_delay_us)*1e-6}] DropTail
    $ns queue-limit $snd($i) $sw 1000
    $ns queue-limit $sw $snd($i) 1000
    set tcp($i) [new Agent/TCP/Newreno]
    $tcp($i) set fid_ $i
    $ns attach-agent $snd($i) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $rcv $sink($i)
    $ns connect $tcp($i) $sink($i)
    $tcp($i) attach $tf
    foreach v {cwnd_ ssthresh_ t_seqno_ ack_ dupacks_ maxseq_ backoff_ rtt_} { $tcp($i) trace $v }
    set ftp($i) [$tcp($i) attach-app FTP]
    set st [lindex $cfg(starts) $i]
    if {$st eq ""} { set st 0.0 }
    $ns at $st "$ftp($i) start"
}

proc finish {} {
    global ns tf
    $ns flush-trace
    close $tf
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
