# longflows.tcl -- ns-2 mirror of scenarios/papers/hcf/longflows.toml
#
# The HCF paper's long-flow setting (section V-B): N long-lived TCP NewReno flows,
# each from its own sender host, share one bottleneck (switch -> receiver) with a
# small buffer; a Poisson UDP source adds 5 % of the bottleneck rate.
#
# Usage:
#   ns longflows.tcl [--key value ...]
# Every key has a default equal to the value in longflows.toml (or to ns-2.35's
# default where the TOML follows ns-2); see `options` below and README.md.
# The most used ones:
#   --qdisc droptail|red|sfq|drr|hcf   bottleneck discipline (hcf: Queue/HCF, only in the
#                                  project's module build of ns-2.35, validation/ns2/build.py)
#   --seed N                       seed (> 0) of ns-2's RNG streams
#   --duration S                   simulated seconds
#   --window S                     measurement window (only recorded in the trace header)
#   --flows N                      number of TCP flows (= sender hosts)
#   --limit_pkts N                 bottleneck buffer in packets *waiting* (the one being
#                                  transmitted not counted), as dcfair's queue.limit_pkts;
#                                  translated per discipline (see "buffer" below)
#   --trace PATH|none              trace output (a file or a FIFO); "none" disables tracing
#   --hcf_bins K --hcf_credits C0 --hcf_hp_fraction F --hcf_swap 0|1 --hcf_zero_on_lp 0|1
#   --hcf_period_us P (0 = dynamic period) --hcf_hashes H
#                                  the TOML's queue.hcf.* (validation/ns2/modules/hcf/hcf.cc);
#                                  used with --qdisc hcf only (and written to the trace header
#                                  only then)
#
# Trace format (one record a line, whitespace separated):
#   # key value                    header: every parameter, ns version
#   S fid node start_s             one per TCP flow: flow id, sender node address, start time
#   U fid node start_s             the UDP source
#   r t from to type size flags fid src dst seq uid   arrival at the receiver end of the bottleneck
#   d t from to type size flags fid src dst seq uid   drop at the bottleneck queue
#   F fid ndatapack nrexmitpack nrexmit ack t_seqno cwnd   per TCP flow, at the end
#   W fid ndatapack nrexmitpack    per TCP flow at the window's start (duration - window), only
#                                  with --window_snapshot 1: F - W = data packets the flow sent
#                                  in the window, retransmissions included (the HCF paper's
#                                  "packets sent"; docs/metrics.md pkts_sent_in_window)
#   E t                            end of simulation
# The r/d lines are ns-2's standard link trace records (times rounded to 1 us).

# ---------------------------------------------------------------- options
array set cfg {
    qdisc                droptail
    seed                 1
    duration             180.0
    window               10.0
    flows                400
    trace                none
    access_rate_mbps     1000.0
    access_delay_us      25.0
    access_limit_pkts    1000
    bottleneck_rate_mbps 100.0
    bottleneck_delay_us  25.0
    limit_pkts           20
    pkt_bytes            1500
    reverse_limit_pkts   10000
    red_min_thresh       5.0
    red_max_thresh       15.0
    red_q_weight         0.002
    red_max_p            0.1
    red_gentle           1
    red_mean_pktsize     1500
    sfq_buckets          16
    drr_buckets          16
    drr_quantum          1500
    hcf_bins             20
    hcf_credits          1
    hcf_hp_fraction      0.5
    hcf_swap             1
    hcf_zero_on_lp       1
    hcf_period_us        0
    hcf_hashes           1
    mss_bytes            1460
    header_bytes         40
    rcv_window_pkts      44
    init_cwnd_pkts       2
    min_rto_s            0.2
    max_rto_s            60.0
    initial_rto_s        3.0
    tcp_tick_s           0.01
    syn                  0
    start_min_s          0.0
    start_max_s          1.0
    udp_rate_fraction    0.05
    udp_pkt_bytes        1500
    progress_s           0
    window_snapshot      0
}

proc usage {msg} {
    global cfg
    puts stderr "longflows.tcl: $msg"
    puts stderr "usage: ns longflows.tcl \[--key value ...\]; keys and defaults:"
    foreach k [lsort [array names cfg]] { puts stderr "  --$k $cfg($k)" }
    exit 2
}

if {[expr {[llength $argv] % 2}] != 0} { usage "options come in --key value pairs" }
foreach {k v} $argv {
    if {![string match --* $k]} { usage "expected --key, got '$k'" }
    set key [string map {- _} [string range $k 2 end]]
    if {![info exists cfg($key)]} { usage "unknown option '$k'" }
    set cfg($key) $v
}

# ---------------------------------------------------------------- validation
foreach k [array names cfg] {
    if {$k eq "qdisc" || $k eq "trace"} continue
    if {![string is double -strict $cfg($k)]} { usage "--$k must be a number, got '$cfg($k)'" }
}
if {[lsearch -exact {droptail red sfq drr hcf} $cfg(qdisc)] < 0} {
    usage "--qdisc must be droptail, red, sfq, drr or hcf, got '$cfg(qdisc)'"
}
if {$cfg(qdisc) eq "hcf"} {
    if {[catch {Queue/HCF info vars}]} {
        puts stderr "longflows.tcl: --qdisc hcf needs the module build of ns-2.35 (Queue/HCF): run it with out/peers/ns2/bin/ns (python3 validation/ns2/build.py)"
        exit 2
    }
    if {$cfg(hcf_bins) < 1 || $cfg(hcf_bins) != int($cfg(hcf_bins))} { usage "--hcf_bins must be an integer >= 1" }
    if {$cfg(hcf_credits) < 0 || $cfg(hcf_credits) != int($cfg(hcf_credits))} { usage "--hcf_credits must be an integer >= 0" }
    if {$cfg(hcf_hp_fraction) < 0 || $cfg(hcf_hp_fraction) > 1} { usage "--hcf_hp_fraction must be in \[0, 1\]" }
    if {$cfg(hcf_period_us) < 0} { usage "--hcf_period_us must be >= 0 (0: dynamic period)" }
    if {$cfg(hcf_hashes) < 1 || $cfg(hcf_hashes) > 16 || $cfg(hcf_hashes) != int($cfg(hcf_hashes))} { usage "--hcf_hashes must be an integer in 1..16" }
}
if {$cfg(seed) < 1 || $cfg(seed) != int($cfg(seed))} { usage "--seed must be an integer >= 1" }
if {$cfg(flows) < 1 || $cfg(flows) != int($cfg(flows))} { usage "--flows must be an integer >= 1" }
if {$cfg(duration) <= 0} { usage "--duration must be > 0" }
if {$cfg(start_max_s) < $cfg(start_min_s)} { usage "--start_max_s must be >= --start_min_s" }
if {$cfg(limit_pkts) < 1} { usage "--limit_pkts must be >= 1" }

# ---------------------------------------------------------------- simulator, RNG streams
set ns [new Simulator]
# One seed drives three independent MRG32k3a streams: seeding defaultRNG resets the
# package seed, each later [new RNG] takes the next stream.
#   stream 0 (defaultRNG): RED's drop coin, TCP agents' boot_time_ (timer phase)
#   stream 1: flow start times
#   stream 2: UDP Poisson inter-arrival times
global defaultRNG
$defaultRNG seed [expr {int($cfg(seed))}]
set startRng [new RNG]
set udpRng [new RNG]

set tracing [expr {$cfg(trace) ne "none" && $cfg(trace) ne ""}]
if {$tracing} {
    if {[catch {set tf [open $cfg(trace) w]} err]} {
        puts stderr "longflows.tcl: cannot open trace '$cfg(trace)': $err"
        exit 2
    }
    fconfigure $tf -buffering full -buffersize 1048576
    puts $tf "# format dcfair-ns2-longflows-1"
    puts $tf "# ns_version [ns-version]"
    foreach k [lsort [array names cfg]] {
        # keys added for the module build stay out of the other runs' headers
        if {[string match hcf_* $k] && $cfg(qdisc) ne "hcf"} continue
        if {$k eq "window_snapshot" && !$cfg(window_snapshot)} continue
        puts $tf "# $k $cfg($k)"
    }
}

# ---------------------------------------------------------------- defaults of the agents
# ns-2 puts packetSize_ + tcpip_base_hdr_size_ on the wire (useHeaders_ true), so
# mss_bytes 1460 + header_bytes 40 gives 1500-byte data packets.
Agent/TCP set packetSize_           [expr {int($cfg(mss_bytes))}]
Agent/TCP set tcpip_base_hdr_size_  [expr {int($cfg(header_bytes))}]
Agent/TCP set window_               [expr {int($cfg(rcv_window_pkts))}]
Agent/TCP set windowInit_           [expr {int($cfg(init_cwnd_pkts))}]
Agent/TCP set windowInitOption_     1
Agent/TCP set minrto_               $cfg(min_rto_s)
Agent/TCP set maxrto_               $cfg(max_rto_s)
Agent/TCP set rtxcur_init_          $cfg(initial_rto_s)
Agent/TCP set tcpTick_              $cfg(tcp_tick_s)
# syn_ true (the ns-2.35 default) sends a 40-byte "SYN" as segment 0 with cwnd 1;
# the TOML says handshake = false, so it is off unless --syn 1.
Agent/TCP set syn_                  [expr {$cfg(syn) ? "true" : "false"}]
Agent/TCP set timestamps_           false
Agent/TCP set maxburst_             0
Agent/TCPSink set packetSize_       [expr {int($cfg(header_bytes))}]

# ---------------------------------------------------------------- topology
# Node addresses (ns-2 flat addressing = creation order):
#   0 switch, 1 receiver, 2 .. flows+1 TCP senders (flow i on node i+2), flows+2 UDP sender.
# SFQ hashes on saddr+daddr and DRR on saddr, so these addresses decide the buckets.
set sw  [$ns node]
set rcv [$ns node]

set bnRate   "[expr {$cfg(bottleneck_rate_mbps) * 1e6}]"
set bnDelay  "[expr {$cfg(bottleneck_delay_us) * 1e-6}]"
set acRate   "[expr {$cfg(access_rate_mbps) * 1e6}]"
set acDelay  "[expr {$cfg(access_delay_us) * 1e-6}]"
# buffer: limit_pkts counts packets waiting, as dcfair does. ns-2's disciplines count
# differently (README.md, "What limit_ means"), so each gets the value that holds exactly
# limit_pkts waiting packets:
#   DropTail drops an arrival when waiting + 1 >= limit_   -> limit_   = limit_pkts + 1
#   RED      drops an arrival when waiting >= limit_       -> limit_   = limit_pkts
#   SFQ      refuses once maxqueue_ - 1 are waiting        -> maxqueue_ = limit_pkts + 1
#   DRR      keeps total bytes <= blimit_                  -> blimit_  = limit_pkts x pkt_bytes
#   HCF      refuses an arrival once limit_ packets wait   -> limit_   = limit_pkts
set limit    [expr {int($cfg(limit_pkts))}]
switch $cfg(qdisc) {
    droptail { set nsLimit [expr {$limit + 1}] }
    sfq      { set nsLimit [expr {$limit + 1}] }
    default  { set nsLimit $limit }
}
if {$tracing} { puts $tf "# ns_queue_limit $nsLimit" }

switch $cfg(qdisc) {
    droptail {
        set qtype DropTail
        Queue/DropTail set queue_in_bytes_ false
        Queue/DropTail set drop_front_ false
    }
    red {
        set qtype RED
        Queue/RED set bytes_           false
        Queue/RED set queue_in_bytes_  false
        Queue/RED set thresh_          $cfg(red_min_thresh)
        Queue/RED set maxthresh_       $cfg(red_max_thresh)
        Queue/RED set q_weight_        $cfg(red_q_weight)
        Queue/RED set linterm_         [expr {1.0 / $cfg(red_max_p)}]
        Queue/RED set gentle_          [expr {$cfg(red_gentle) ? "true" : "false"}]
        Queue/RED set mean_pktsize_    [expr {int($cfg(red_mean_pktsize))}]
        Queue/RED set setbit_          false
        Queue/RED set adaptive_        0
        Queue/RED set wait_            true
        Queue/RED set drop_tail_       true
        Queue/RED set drop_front_      false
        Queue/RED set drop_rand_       false
    }
    sfq {
        set qtype SFQ
        # SFQ ignores limit_; its capacity is maxqueue_ (packets), one less waiting.
        Queue/SFQ set maxqueue_ $nsLimit
        Queue/SFQ set buckets_  [expr {int($cfg(sfq_buckets))}]
    }
    drr {
        set qtype DRR
        # DRR ignores limit_; its capacity is blimit_ (bytes over all buckets).
        Queue/DRR set buckets_ [expr {int($cfg(drr_buckets))}]
        Queue/DRR set quantum_ [expr {int($cfg(drr_quantum))}]
        Queue/DRR set blimit_  [expr {$limit * int($cfg(pkt_bytes))}]
        Queue/DRR set mask_    0
    }
    hcf {
        # Queue/HCF (validation/ns2/modules/hcf): limit_ = B, the packets waiting in HP and
        # LP together (the packet in transmission not counted), as limit_pkts.
        set qtype HCF
        Queue/HCF set bins_        [expr {int($cfg(hcf_bins))}]
        Queue/HCF set credits_     [expr {int($cfg(hcf_credits))}]
        Queue/HCF set hp_fraction_ $cfg(hcf_hp_fraction)
        Queue/HCF set swap_        [expr {$cfg(hcf_swap) ? "true" : "false"}]
        Queue/HCF set zero_on_lp_  [expr {$cfg(hcf_zero_on_lp) ? "true" : "false"}]
        Queue/HCF set period_      [expr {$cfg(hcf_period_us) * 1e-6}]
        Queue/HCF set hashes_      [expr {int($cfg(hcf_hashes))}]
        Queue/HCF set hash_mode_   0
        Queue/HCF set rehash_      true
        # the hash functions' salts come from the run's seed
        Queue/HCF set seed_        [expr {int($cfg(seed))}]
    }
}

# Bottleneck: switch -> receiver with the chosen discipline; the reverse direction
# (ACKs only) is a DropTail queue that never fills.
$ns simplex-link $sw $rcv $bnRate $bnDelay $qtype
$ns queue-limit $sw $rcv $nsLimit
$ns simplex-link $rcv $sw $bnRate $bnDelay DropTail
$ns queue-limit $rcv $sw [expr {int($cfg(reverse_limit_pkts))}]

set bnLink [$ns link $sw $rcv]
set bnQueue [$bnLink queue]

# Trace only arrivals at the receiver end of the bottleneck and drops at its queue.
proc attach_rd_trace {link chan from to} {
    global ns
    # drops: the queue hands dropped packets to the link's drop head
    set dropT [$ns create-trace Drop $chan $from $to ""]
    set head [$link set drophead_]
    $dropT target [$head target]
    $head target $dropT
    # arrivals: after the link's TTL checker, i.e. packets handed to the receiver node
    set recvT [$ns create-trace Recv $chan $from $to ""]
    set ttl [$link set ttl_]
    $recvT target [$ttl target]
    $ttl target $recvT
}
if {$tracing} { attach_rd_trace $bnLink $tf $sw $rcv }

set nflows [expr {int($cfg(flows))}]
set accessLimit [expr {int($cfg(access_limit_pkts))}]
for {set i 0} {$i < $nflows} {incr i} {
    set snd($i) [$ns node]
    $ns duplex-link $snd($i) $sw $acRate $acDelay DropTail
    $ns queue-limit $snd($i) $sw $accessLimit
    $ns queue-limit $sw $snd($i) $accessLimit
}
set udpNode [$ns node]
$ns duplex-link $udpNode $sw $acRate $acDelay DropTail
$ns queue-limit $udpNode $sw $accessLimit
$ns queue-limit $sw $udpNode $accessLimit

# ---------------------------------------------------------------- TCP flows
for {set i 0} {$i < $nflows} {incr i} {
    set tcp($i) [new Agent/TCP/Newreno]
    $tcp($i) set fid_ $i
    $ns attach-agent $snd($i) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $rcv $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    set start($i) [$startRng uniform $cfg(start_min_s) $cfg(start_max_s)]
    $ns at $start($i) "$ftp($i) start"
    if {$tracing} { puts $tf [format "S %d %d %.9f" $i [$snd($i) id] $start($i)] }
}

# ---------------------------------------------------------------- Poisson UDP
# Application/Traffic/Exponential with burst_time_ 0 sends one packet a "burst" and
# waits interval_ + Exp(idle_time_) between packets, interval_ = 8 * size / rate_.
# A very high rate_ makes interval_ negligible (12 ps here) and idle_time_ is reduced
# by it, so the gaps are Exp(1/lambda) shifted by 12 ps: Poisson arrivals.
set udpFid $nflows
set udp [new Agent/UDP]
$udp set packetSize_ [expr {int($cfg(udp_pkt_bytes))}]
$udp set fid_ $udpFid
$ns attach-agent $udpNode $udp
set udpSink [new Agent/Null]
$ns attach-agent $rcv $udpSink
$ns connect $udp $udpSink
set lambda [expr {$cfg(udp_rate_fraction) * $cfg(bottleneck_rate_mbps) * 1e6 / (8.0 * $cfg(udp_pkt_bytes))}]
set burstRate 1e15
set burstInterval [expr {8.0 * $cfg(udp_pkt_bytes) / $burstRate}]
set poisson [new Application/Traffic/Exponential]
$poisson set packetSize_ [expr {int($cfg(udp_pkt_bytes))}]
$poisson set burst_time_ 0
$poisson set idle_time_ [expr {1.0 / $lambda - $burstInterval}]
$poisson set rate_ $burstRate
$poisson attach-agent $udp
$poisson use-rng $udpRng
if {$cfg(udp_rate_fraction) > 0} {
    $ns at 0.0 "$poisson start"
}
if {$tracing} { puts $tf [format "U %d %d %.9f" $udpFid [$udpNode id] 0.0] }

# ---------------------------------------------------------------- progress, end
proc progress {} {
    global ns cfg
    set now [$ns now]
    puts stderr [format "ns2 longflows %s seed %s: t = %.1f / %.1f s" $cfg(qdisc) $cfg(seed) $now $cfg(duration)]
    if {$now + $cfg(progress_s) < $cfg(duration)} {
        $ns at [expr {$now + $cfg(progress_s)}] progress
    }
}
if {$cfg(progress_s) > 0} { $ns at $cfg(progress_s) progress }

proc window_snapshot {} {
    global tf tcp nflows
    for {set i 0} {$i < $nflows} {incr i} {
        puts $tf [format "W %d %d %d" $i [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_]]
    }
}
if {$tracing && $cfg(window_snapshot)} {
    $ns at [expr {$cfg(duration) - $cfg(window)}] window_snapshot
}

proc finish {} {
    global ns tf tracing tcp nflows
    if {$tracing} {
        for {set i 0} {$i < $nflows} {incr i} {
            set t $tcp($i)
            puts $tf [format "F %d %d %d %d %d %d %.3f" $i \
                [$t set ndatapack_] [$t set nrexmitpack_] [$t set nrexmit_] \
                [$t set ack_] [$t set t_seqno_] [$t set cwnd_]]
        }
        puts $tf [format "E %.9f" [$ns now]]
        flush $tf
        close $tf
    }
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
