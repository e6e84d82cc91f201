# fattree.tcl -- ns-2 mirror of bench/fattree_k8.toml, for the speed benchmark
#
# A k-ary fat-tree (k = 8: 128 hosts, 80 switches) carrying one long-lived TCP NewReno flow
# per host along a permutation, with the routes of dcfair's routing.mode = "dst_bits"
# installed hop by hop, so that both simulators carry every packet over the same links.
# bench/fattree.py reads the TOML and passes every value below; the defaults equal the TOML.
#
# Usage:
#   ns fattree.tcl --pairs "0:127,1:43,..." [--key value ...]
# Keys (see `options`): k, rate_mbps, delay_us, limit_pkts (switch ports, packets waiting),
# host_limit_pkts (host NICs, packets waiting), duration, seed, start_min_s, start_max_s, the
# TCP keys of validation/ns2/longflows.tcl, and
#   --pairs "s:d,..."     flow i from host s to host d (host numbers), in flow order
#   --monitor PATH|none   with a path: count the packets every link sends (queue monitors on
#                         every link, which cost time; the timed runs go without) and write
#                         there: "link A B N" for every link that sent N > 0 packets from
#                         node id A to B, then "hops N" (their sum) and "timeouts N" (TCP
#                         retransmission timer expiries)
#
# Nodes are created in dcfair's order (hosts h0.., edges e<pod>_<i>, aggregations
# a<pod>_<i>, cores c<i>); links in dcfair's order too (host-edge, edge-aggregation,
# aggregation-core), 10 Gbit/s and 1 us each way by default.
#
# Routing ("destination mod k/2", two-level fat-tree tables): a switch with one shortest next
# hop takes it; an edge switch sends a packet for another edge up to its pod's aggregation
# switch number (dst mod k/2); an aggregation switch sends a packet for another pod up to its
# core number (dst mod k/2) of the k/2 it links to; cores and down links have one choice.
# ns-2's own route computation runs first at `$ns run`; these routes are then installed for
# every (switch, host) pair by an event at t = 0 scheduled before anything else, so they are
# in place before the first packet leaves.

array set cfg {
    k                    8
    rate_mbps            10000.0
    delay_us             1.0
    limit_pkts           100
    host_limit_pkts      1000
    duration             0.1
    seed                 1
    start_min_s          0.0
    start_max_s          0.001
    pairs                ""
    monitor              none
    mss_bytes            1460
    header_bytes         40
    rcv_window_pkts      44
    init_cwnd_pkts       2
    min_rto_s            0.2
    max_rto_s            60.0
    initial_rto_s        3.0
    tcp_tick_s           0.01
}

proc usage {msg} {
    global cfg
    puts stderr "fattree.tcl: $msg"
    puts stderr "usage: ns fattree.tcl --pairs \"s:d,...\" \[--key value ...\]; keys and defaults:"
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
foreach k [array names cfg] {
    if {$k eq "pairs" || $k eq "monitor"} continue
    if {![string is double -strict $cfg($k)]} { usage "--$k must be a number, got '$cfg($k)'" }
}
set k [expr {int($cfg(k))}]
if {$k < 2 || $k % 2 != 0} { usage "--k must be even and at least 2" }
set half [expr {$k / 2}]
set nhosts [expr {$k * $k * $k / 4}]
set flows {}
foreach p [split $cfg(pairs) ","] {
    set sd [split $p ":"]
    if {[llength $sd] != 2} { usage "--pairs: expected s:d, got '$p'" }
    lassign $sd s d
    if {![string is integer -strict $s] || ![string is integer -strict $d]
        || $s < 0 || $d < 0 || $s >= $nhosts || $d >= $nhosts || $s == $d} {
        usage "--pairs: bad pair '$p' (hosts 0..[expr {$nhosts - 1}])"
    }
    lappend flows [list $s $d]
}
if {[llength $flows] == 0} { usage "--pairs: give at least one flow" }

set ns [new Simulator]
global defaultRNG
$defaultRNG seed [expr {int($cfg(seed))}]
set startRng [new RNG]

Agent/TCP set packetSize_           [expr {int($cfg(mss_bytes))}]
Agent/TCP set tcpip_base_hdr_size_  [expr {int($cfg(header_bytes))}]
Agent/TCP set window_               [expr {int($cfg(rcv_window_pkts))}]
Agent/TCP set windowInit_           [expr {int($cfg(init_cwnd_pkts))}]
Agent/TCP set windowInitOption_     1
Agent/TCP set minrto_               $cfg(min_rto_s)
Agent/TCP set maxrto_               $cfg(max_rto_s)
Agent/TCP set rtxcur_init_          $cfg(initial_rto_s)
Agent/TCP set tcpTick_              $cfg(tcp_tick_s)
Agent/TCP set syn_                  false
Agent/TCP set timestamps_           false
Agent/TCP set maxburst_             0
Agent/TCPSink set packetSize_       [expr {int($cfg(header_bytes))}]
Queue/DropTail set queue_in_bytes_  false
Queue/DropTail set drop_front_      false

# ---------------------------------------------------------------- nodes, in dcfair's order
for {set i 0} {$i < $nhosts} {incr i} { set host($i) [$ns node] }
for {set p 0} {$p < $k} {incr p} {
    for {set i 0} {$i < $half} {incr i} { set edge($p,$i) [$ns node] }
}
for {set p 0} {$p < $k} {incr p} {
    for {set i 0} {$i < $half} {incr i} { set agg($p,$i) [$ns node] }
}
for {set c 0} {$c < $half * $half} {incr c} { set core($c) [$ns node] }

# ---------------------------------------------------------------- links
# DropTail drops an arrival when waiting + 1 >= limit_, so limit_ = packets waiting + 1
# (validation/ns2/README.md, "What limit_ means").
set rate "[expr {$cfg(rate_mbps) * 1e6}]"
set delay "[expr {$cfg(delay_us) * 1e-6}]"
set swLimit [expr {int($cfg(limit_pkts)) + 1}]
set hostLimit [expr {int($cfg(host_limit_pkts)) + 1}]
set links {}
proc link {a b limA limB} {
    global ns rate delay links
    $ns duplex-link $a $b $rate $delay DropTail
    $ns queue-limit $a $b $limA
    $ns queue-limit $b $a $limB
    lappend links [list $a $b] [list $b $a]
}
for {set p 0} {$p < $k} {incr p} {
    for {set i 0} {$i < $half} {incr i} {
        for {set j 0} {$j < $half} {incr j} {
            set h [expr {($p * $half + $i) * $half + $j}]
            link $edge($p,$i) $host($h) $swLimit $hostLimit
        }
    }
}
for {set p 0} {$p < $k} {incr p} {
    for {set j 0} {$j < $half} {incr j} {
        for {set i 0} {$i < $half} {incr i} { link $agg($p,$j) $edge($p,$i) $swLimit $swLimit }
    }
}
for {set c 0} {$c < $half * $half} {incr c} {
    set j [expr {$c / $half}]
    for {set p 0} {$p < $k} {incr p} { link $core($c) $agg($p,$j) $swLimit $swLimit }
}

# ---------------------------------------------------------------- routes (dst mod k/2)
proc next_hop {kind p i d} {
    # kind e|a|c, (pod, index) of the switch; d the destination host number
    global k half edge agg core host
    set dpod [expr {$d / ($half * $half)}]
    set dedge [expr {($d / $half) % $half}]
    switch $kind {
        e {
            if {$dpod == $p && $dedge == $i} { return $host($d) }
            return $agg($p,[expr {$d % $half}])
        }
        a {
            if {$dpod == $p} { return $edge($p,$dedge) }
            return $core([expr {$i * $half + $d % $half}])
        }
        c { return $agg($dpod,[expr {$p / $half}]) }
    }
}
proc install_routes {} {
    global ns k half nhosts edge agg core host
    for {set d 0} {$d < $nhosts} {incr d} {
        set daddr [$host($d) id]
        for {set p 0} {$p < $k} {incr p} {
            for {set i 0} {$i < $half} {incr i} {
                foreach {kind sw} [list e $edge($p,$i) a $agg($p,$i)] {
                    set nh [next_hop $kind $p $i $d]
                    $sw add-route $daddr [[$ns link $sw $nh] head]
                }
            }
        }
        for {set c 0} {$c < $half * $half} {incr c} {
            set nh [next_hop c $c 0 $d]
            $core($c) add-route $daddr [[$ns link $core($c) $nh] head]
        }
    }
}
$ns at 0.0 "install_routes"

# ---------------------------------------------------------------- monitors (counting runs only)
set monitoring [expr {$cfg(monitor) ne "none" && $cfg(monitor) ne ""}]
if {$monitoring} {
    set qmons {}
    foreach l $links {
        lassign $l a b
        lappend qmons [$ns monitor-queue $a $b ""]
    }
}

# ---------------------------------------------------------------- TCP flows
set i 0
foreach f $flows {
    lassign $f s d
    set tcp($i) [new Agent/TCP/Newreno]
    $tcp($i) set fid_ $i
    $ns attach-agent $host($s) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $host($d) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    $ns at [$startRng uniform $cfg(start_min_s) $cfg(start_max_s)] "$ftp($i) start"
    incr i
}
set nflows $i

proc finish {} {
    global ns cfg monitoring qmons tcp nflows
    if {$monitoring} {
        global links
        set fh [open $cfg(monitor) w]
        set hops 0
        foreach q $qmons l $links {
            set n [$q set pdepartures_]
            incr hops $n
            if {$n > 0} { puts $fh "link [[lindex $l 0] id] [[lindex $l 1] id] $n" }
        }
        set timeouts 0
        for {set i 0} {$i < $nflows} {incr i} { incr timeouts [$tcp($i) set nrexmit_] }
        puts $fh "hops $hops"
        puts $fh "timeouts $timeouts"
        close $fh
    }
    exit 0
}
$ns at $cfg(duration) "finish"
$ns run
