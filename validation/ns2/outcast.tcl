# outcast.tcl -- ns-2 mirror of scenarios/papers/outcast/fattree.toml (TCP Outcast, paper 004)
#
# A k = 4 fat-tree (16 hosts, 8 edge, 8 aggregation, 4 core switches), every link 1 Gb/s,
# 5 us each way. Receiver h0; one 2-hop flow h1 -> h0 and N 6-hop flows h4 .. h(3+N) -> h0,
# TCP NewReno, one flow per sender, starts uniform in [0, start_max_s].
#
# Usage:
#   ns outcast.tcl [--key value ...]
# Keys (defaults below mirror the TOML; see README.md, "The Outcast fat-tree"):
#   --qdisc droptail|red|sfq   every switch port (hosts' NIC queues are DropTail, host_limit_pkts)
#   --seed N                   seed (>= 1) of ns-2's RNG streams
#   --six N                    number of 6-hop flows (1 .. 12)
#   --limit_bytes B            switch buffer in bytes *waiting* (dcfair's queue.limit_bytes);
#                              used when --limit_pkts is 0 (DropTail only)
#   --limit_pkts N             switch buffer in packets waiting (dcfair's queue.limit_pkts);
#                              0 = use --limit_bytes
#   --pin_routes 1|0           1: link costs make every route to h0 from another pod go
#                              a(p)_0 -> c0 -> a0_0 -> e0_0, dcfair's routing by destination bits;
#                              0: ns-2's own choice among equal-cost paths
#   --tcp_tick_s S             TCP clock granularity (ns-2 default 0.01, see README.md)
#   --trace PATH|none          ns-2's trace-all (every queue event), for checks; large
#   --route_trace PATH|none    arrivals (r records) on the links into e0_0 and a0_0/a0_1 only
#
# Output on stdout, one record a line:
#   # key value                       every option, ns version
#   S fid group src_node start_s      one per flow
#   F fid group src_node ack ndatapack nrexmitpack nrexmit sink_bytes cwnd ssthresh backoff
#                                     per flow at the end: ack_ = highest in-order segment
#                                     acknowledged (segment 0 is the SYN with syn_ 1),
#                                     nrexmit_ = retransmission timeouts, sink_bytes = bytes the
#                                     TCPSink delivered in order (wire sizes)
#   Q from to drops arrivals           per switch port: packets dropped / arrived (queue monitor)
#   E t

array set cfg {
    qdisc            droptail
    seed             1
    six              12
    duration         0.5
    rate_mbps        1000.0
    delay_us         5.0
    limit_bytes      16384
    limit_pkts       0
    host_limit_pkts  1000
    red_min_thresh   5.0
    red_max_thresh   15.0
    red_q_weight     0.002
    red_max_p        0.1
    red_gentle       0
    red_mean_pktsize 1500
    sfq_buckets      4
    mss_bytes        1460
    header_bytes     40
    rcv_window_pkts  718
    init_cwnd_pkts   2
    min_rto_s        0.002
    max_rto_s        60.0
    initial_rto_s    1.0
    tcp_tick_s       0.00001
    syn              1
    start_max_s      0.001
    pin_routes       1
    trace            none
    route_trace      none
}

proc usage {msg} {
    global cfg
    puts stderr "outcast.tcl: $msg"
    puts stderr "usage: ns outcast.tcl \[--key value ...\]; keys and defaults:"
    foreach k [lsort [array names cfg]] { puts stderr "  --$k $cfg($k)" }
    exit 2
}
if {[llength $argv] % 2 != 0} { usage "options come in --key value pairs" }
foreach {k v} $argv {
    if {![string match --* $k]} { usage "expected --key, got '$k'" }
    set key [string map {- _} [string range $k 2 end]]
    if {![info exists cfg($key)]} { usage "unknown option '$k'" }
    set cfg($key) $v
}
foreach k [array names cfg] {
    if {[lsearch -exact {qdisc trace route_trace} $k] >= 0} continue
    if {![string is double -strict $cfg($k)]} { usage "--$k must be a number, got '$cfg($k)'" }
}
if {[lsearch -exact {droptail red sfq} $cfg(qdisc)] < 0} { usage "--qdisc must be droptail, red or sfq" }
if {$cfg(seed) < 1} { usage "--seed must be >= 1" }
if {$cfg(six) < 1 || $cfg(six) > 12} { usage "--six must be in 1 .. 12" }
if {$cfg(limit_pkts) <= 0 && $cfg(qdisc) ne "droptail"} { usage "--qdisc $cfg(qdisc) needs --limit_pkts" }

set ns [new Simulator]
# trace-all must precede the links it traces
if {$cfg(trace) ne "none"} {
    set tf [open $cfg(trace) w]
    $ns trace-all $tf
}
# Random streams (MRG32k3a): the package seed is fixed and the run's seed picks *substreams*,
# which L'Ecuyer's generator guarantees independent. Seeding with the run's seed instead
# ($defaultRNG seed N) makes the first draws of every stream nearly proportional to N (seed 2's
# start times were seed 1's doubled, modulo the range), so seeds were not independent samples.
#   defaultRNG, substream `seed`: RED's coin, the agents' timer phase (boot_time_)
#   startRng, substream `seed` of the next stream: flow start times
global defaultRNG
$defaultRNG seed 12345
set startRng [new RNG]
for {set i 0} {$i < int($cfg(seed))} {incr i} {
    $defaultRNG next-substream
    $startRng next-substream
}

puts "# format dcfair-ns2-outcast-1"
puts "# ns_version [ns-version]"
foreach k [lsort [array names cfg]] { puts "# $k $cfg($k)" }

# ---------------------------------------------------------------- TCP
Agent/TCP set packetSize_          [expr {int($cfg(mss_bytes))}]
Agent/TCP set tcpip_base_hdr_size_ [expr {int($cfg(header_bytes))}]
Agent/TCP set window_              [expr {int($cfg(rcv_window_pkts))}]
Agent/TCP set windowInit_          [expr {int($cfg(init_cwnd_pkts))}]
Agent/TCP set windowInitOption_    1
Agent/TCP set minrto_              $cfg(min_rto_s)
Agent/TCP set maxrto_              $cfg(max_rto_s)
Agent/TCP set rtxcur_init_         $cfg(initial_rto_s)
Agent/TCP set tcpTick_             $cfg(tcp_tick_s)
Agent/TCP set syn_                 [expr {$cfg(syn) ? "true" : "false"}]
Agent/TCP set timestamps_          false
Agent/TCP set maxburst_            0
Agent/TCPSink set packetSize_      [expr {int($cfg(header_bytes))}]

# ---------------------------------------------------------------- queues
# dcfair counts only packets waiting (the one being serialized is not in the queue), as ns-2
# does; the limits differ by one in how the comparison is written (README.md):
#   DropTail, packets: drops when waiting + 1 >= limit_        -> limit_ = limit_pkts + 1
#   DropTail, bytes:   drops when bytes + size >= limit_ x mean_pktsize_; dcfair stores when
#                      bytes + size <= limit_bytes               -> mean_pktsize_ 1,
#                                                                    limit_ = limit_bytes + 1
#   RED:               forced drop when waiting >= limit_       -> limit_ = limit_pkts
#   SFQ:               maxqueue_ = limit_pkts: dcfair's early rule (queue.sfq.drop_rule =
#                      "early") computes ns-2's left = maxqueue_ - occupied from the same number
set lp [expr {int($cfg(limit_pkts))}]
set bytesMode [expr {$lp <= 0}]
switch $cfg(qdisc) {
    droptail {
        set qtype DropTail
        set swLimit [expr {$bytesMode ? int($cfg(limit_bytes)) + 1 : $lp + 1}]
    }
    red {
        set qtype RED
        set swLimit $lp
        Queue/RED set bytes_          false
        Queue/RED set queue_in_bytes_ false
        Queue/RED set thresh_         $cfg(red_min_thresh)
        Queue/RED set maxthresh_      $cfg(red_max_thresh)
        Queue/RED set q_weight_       $cfg(red_q_weight)
        Queue/RED set linterm_        [expr {1.0 / $cfg(red_max_p)}]
        Queue/RED set gentle_         [expr {$cfg(red_gentle) ? "true" : "false"}]
        Queue/RED set mean_pktsize_   [expr {int($cfg(red_mean_pktsize))}]
        Queue/RED set setbit_         false
        Queue/RED set adaptive_       0
        Queue/RED set wait_           true
        Queue/RED set drop_tail_      true
        Queue/RED set drop_front_     false
        Queue/RED set drop_rand_      false
    }
    sfq {
        set qtype SFQ
        set swLimit $lp
        Queue/SFQ set maxqueue_ $lp
        Queue/SFQ set buckets_  [expr {int($cfg(sfq_buckets))}]
    }
}
puts "# ns_switch_limit $swLimit"
Queue/DropTail set drop_front_ false

set rate  "[expr {$cfg(rate_mbps) * 1e6}]"
set delay "[expr {$cfg(delay_us) * 1e-6}]"
set hostLimit [expr {int($cfg(host_limit_pkts)) + 1}]

# ---------------------------------------------------------------- topology
# Nodes in dcfair's order, so that ns-2's flat addresses equal dcfair's node ids (SFQ hashes
# them): hosts h0 .. h15 (0 .. 15), edges e<p>_<i> (16 .. 23), aggregations a<p>_<i>
# (24 .. 31), cores c0 .. c3 (32 .. 35).
set k 4
set half [expr {$k / 2}]
for {set i 0} {$i < $k * $k * $k / 4} {incr i} { set node(h$i) [$ns node] }
for {set p 0} {$p < $k} {incr p} { for {set i 0} {$i < $half} {incr i} { set node(e${p}_$i) [$ns node] } }
for {set p 0} {$p < $k} {incr p} { for {set i 0} {$i < $half} {incr i} { set node(a${p}_$i) [$ns node] } }
for {set c 0} {$c < $half * $half} {incr c} { set node(c$c) [$ns node] }

set swPorts {}
proc switch_port {from to} {
    global ns node swLimit qtype bytesMode swPorts
    $ns queue-limit $node($from) $node($to) $swLimit
    if {$qtype eq "DropTail" && $bytesMode} {
        set q [[$ns link $node($from) $node($to)] queue]
        $q set queue_in_bytes_ true
        $q set mean_pktsize_ 1
    }
    lappend swPorts [list $from $to]
}
# host <-> edge: the host's NIC queue is DropTail (never drops), the edge's port the discipline
for {set i 0} {$i < 16} {incr i} {
    set e "e[expr {$i / ($half * $half)}]_[expr {($i / $half) % $half}]"
    $ns simplex-link $node(h$i) $node($e) $rate $delay DropTail
    $ns queue-limit $node(h$i) $node($e) $hostLimit
    $ns simplex-link $node($e) $node(h$i) $rate $delay $qtype
    switch_port $e h$i
}
# edge <-> aggregation inside each pod, aggregation <-> core: the discipline both ways
for {set p 0} {$p < $k} {incr p} {
    for {set j 0} {$j < $half} {incr j} {
        for {set i 0} {$i < $half} {incr i} {
            $ns duplex-link $node(a${p}_$j) $node(e${p}_$i) $rate $delay $qtype
            switch_port a${p}_$j e${p}_$i
            switch_port e${p}_$i a${p}_$j
        }
    }
}
for {set c 0} {$c < $half * $half} {incr c} {
    set j [expr {$c / $half}]
    for {set p 0} {$p < $k} {incr p} {
        $ns duplex-link $node(c$c) $node(a${p}_$j) $rate $delay $qtype
        switch_port c$c a${p}_$j
        switch_port a${p}_$j c$c
    }
}
# dcfair routes by destination bits: for h0 every ToR takes its aggregation 0 and every
# aggregation 0 its core c0, so the 6-hop flows come down c0 -> a0_0 -> e0_0. ns-2's static
# routing keeps one next hop per destination as well; costs on the other core -> pod-0 links
# make that path the only shortest one (the links are simplex: nothing else changes cost).
if {$cfg(pin_routes)} {
    $ns cost $node(c1) $node(a0_0) 10
    $ns cost $node(c2) $node(a0_1) 10
    $ns cost $node(c3) $node(a0_1) 10
}

if {$cfg(route_trace) ne "none"} {
    set rtf [open $cfg(route_trace) w]
    foreach {a b} {a0_0 e0_0 a0_1 e0_0 c0 a0_0 c1 a0_0 c2 a0_1 c3 a0_1 e0_0 h0 h1 e0_0} {
        $ns trace-queue $node($a) $node($b) $rtf
    }
}
# a monitor on every switch port: arrivals and drops
foreach pq $swPorts {
    lassign $pq a b
    set mon($a,$b) [$ns monitor-queue $node($a) $node($b) ""]
}

# ---------------------------------------------------------------- flows
set flows {}
lappend flows [list 0 two_hop h1]
for {set i 0} {$i < $cfg(six)} {incr i} { lappend flows [list [expr {$i + 1}] six_hop h[expr {$i + 4}]] }
foreach f $flows {
    lassign $f fid group src
    set tcp($fid) [new Agent/TCP/Newreno]
    $tcp($fid) set fid_ $fid
    $ns attach-agent $node($src) $tcp($fid)
    set sink($fid) [new Agent/TCPSink]
    $ns attach-agent $node(h0) $sink($fid)
    $ns connect $tcp($fid) $sink($fid)
    set ftp($fid) [$tcp($fid) attach-app FTP]
    set st [$startRng uniform 0 $cfg(start_max_s)]
    $ns at $st "$ftp($fid) start"
    puts [format "S %d %s %d %.9f" $fid $group [$node($src) id] $st]
}

proc finish {} {
    global ns flows tcp sink swPorts mon cfg
    foreach f $flows {
        lassign $f fid group src
        set t $tcp($fid)
        puts [format "F %d %s %s %d %d %d %d %d %.3f %d %d" $fid $group $src \
            [$t set ack_] [$t set ndatapack_] [$t set nrexmitpack_] [$t set nrexmit_] \
            [$sink($fid) set bytes_] [$t set cwnd_] [$t set ssthresh_] [$t set backoff_]]
    }
    foreach pq $swPorts {
        lassign $pq a b
        set m $mon($a,$b)
        puts [format "Q %s %s %d %d" $a $b [$m set pdrops_] [$m set parrivals_]]
    }
    puts [format "E %.9f" [$ns now]]
    if {$cfg(trace) ne "none"} { $ns flush-trace }
    if {$cfg(route_trace) ne "none"} { global rtf; flush $rtf }
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
