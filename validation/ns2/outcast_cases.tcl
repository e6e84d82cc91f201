# outcast_cases.tcl -- one point of the TCP Outcast reproductions (paper 004) in stock ns-2.35
#
# The ns2 peer's runner (python/dcfair/peers/ns2_outcast.py) writes a SPEC from the engine's
# resolved view of the point (dcfair.peers.Job.resolved: every node, every port with its rate,
# delay and discipline, every flow with its start time and the exact ports its data and its ACKs
# cross) and runs:
#
#   ns outcast_cases.tcl SPEC OUTDIR
#
# outcast.tcl (make validate-outcast) builds the case I fat-tree itself; this script builds
# whatever the SPEC lists, so that every case of the paper (fat-tree, waypoints, equal-length
# routing, background flows, the ON/OFF blackout dumbbell) runs from one script with dcfair's
# own paths.
#
# SPEC is Tcl calling these procs:
#   oc_param KEY VALUE         a setting (the keys and defaults are in `array set P` below)
#   oc_node NAME               a node; nodes are created in SPEC order, so the n-th node has the
#                              flat address n (the SPEC lists them in dcfair's node-id order:
#                              ns-2's SFQ hashes the addresses)
#   oc_port FROM TO RATE_BPS DELAY_S KIND ARGS...
#                              one simplex link FROM -> TO and the queue at its head:
#     nic PKTS                 DropTail, at most PKTS packets waiting (a host's NIC)
#     droptail_pkts PKTS       DropTail, at most PKTS packets waiting
#     droptail_bytes BYTES     DropTail that stores a packet iff the bytes waiting + its size
#                              <= BYTES (queue_in_bytes_, mean_pktsize_ 1, limit_ BYTES + 1)
#     red PKTS                 Queue/RED in packet mode (P(red_*)), forced drop at PKTS waiting
#     sfq PKTS                 Queue/SFQ, maxqueue_ PKTS, buckets_ P(sfq_buckets)
#     blackout PKTS OFF_S ON_S DropTail of PKTS packets behind an ErrorModel/TwoState in time
#                              units at the head of the link: OFF lasts an exponential time of
#                              mean OFF_S, ON a constant ON_S, every arrival during ON is
#                              dropped; the run starts OFF (the paper's section 4.3 device)
#   oc_flow FID GROUP SRC DST START_S PKTS TCP PATH ACKPATH
#                              a one-way TCP connection (SYN, then data); PKTS 0: long-lived
#                              (FTP), else PKTS segments. TCP: newreno (Agent/TCP/Newreno +
#                              TCPSink), sack (Agent/TCP/Sack1 + TCPSink/Sack1), cubic
#                              (Agent/TCP/Linux, select_ca cubic, + TCPSink), cubic_sack (the
#                              same + TCPSink/Sack1). PATH / ACKPATH: the ports ("a->b") the
#                              data / the ACKs cross, in order
#   oc_measure FROM TO         a measured port: bytes it sent in the window, its drops
#   oc_cubic PARAM VALUE       a parameter of ns-2's Linux CUBIC module (tcp/linux/src/tcp_cubic.c:
#                              beta in 1/1024, bic_scale, ...), set as the module's default
#   oc_droprun FROM TO         every arrival (+) and drop (d) at that port, ns-2's trace format,
#                              into OUTDIR/droprun-FROM-TO.tr
#
# Routing: every link that ends at a switch delivers to a Classifier/Hash/SrcDestFid of its own
# instead of the switch's address classifier, keyed by (source address, destination address,
# fid), whose slots are the heads of the next links of PATH (for data) and ACKPATH (for ACKs,
# which carry their data's fid). So each packet takes exactly the path dcfair drew for its flow,
# even a path that visits a switch twice (equal-length routing: up to a core and back down
# through the same ToR). A packet no entry matches falls back to the switch's own routing.
#
# Randomness: the package seed is fixed and the point's seed picks substreams of MRG32k3a (as
# outcast.tcl does): defaultRNG's substream P(seed) serves RED's coin and the TCP timers' phase,
# a second stream's substream P(seed) the blackout's OFF times. Start times come from the SPEC
# (dcfair's draws), so both simulators start every flow at the same instant.
#
# Output: OUTDIR/result.txt, one record a line:
#   # KEY VALUE                        every P(), ns version
#   T t b_0 b_1 ...                    every P(sample_s) from 0 to the end (last at P(duration)):
#                                      each flow's TCPSink bytes_ (in-order bytes delivered,
#                                      wire sizes, the 40-byte SYN included), flows in SPEC order
#   W t b_0 b_1 ...                    the same at the start of the measurement window
#   F fid ack ndatapack nrexmitpack nrexmit sink_bytes cwnd backoff   per flow at the end
#   Q from to pdrops parrivals bdep_at_window_start bdep_at_end       per measured port
#   E t

array set P {
    seed             1
    duration         0.5
    window_start     0.0
    sample_s         0.0
    mss              1460
    hdr              40
    rcv_window_pkts  718
    init_cwnd        2
    min_rto          0.002
    max_rto          60.0
    initial_rto      1.0
    tick             0.00001
    syn              1
    singledup        1
    red_min          5.0
    red_max          15.0
    red_weight       0.002
    red_max_p        0.1
    red_gentle       0
    red_bytes        0
    red_wait         1
    red_mean_pktsize 1500
    sfq_buckets      4
}

if {[llength $argv] != 2} {
    puts stderr "usage: ns outcast_cases.tcl SPEC OUTDIR"
    exit 2
}
lassign $argv specFile outDir

set nodes {}
set ports {}
set flows {}
set measured {}
set droprun {}
proc oc_param {k v} {
    global P
    if {![info exists P($k)]} { error "outcast_cases.tcl: unknown param $k" }
    set P($k) $v
}
proc oc_node {name} { global nodes; lappend nodes $name }
proc oc_port {from to rate delay kind args} { global ports; lappend ports [list $from $to $rate $delay $kind $args] }
proc oc_flow {fid group src dst start pkts tcp path ackpath} {
    global flows
    lappend flows [list $fid $group $src $dst $start $pkts $tcp $path $ackpath]
}
proc oc_measure {from to} { global measured; lappend measured [list $from $to] }
proc oc_droprun {from to} { global droprun; lappend droprun [list $from $to] }
set cubicParams {}
proc oc_cubic {k v} { global cubicParams; lappend cubicParams $k $v }
source $specFile

set ns [new Simulator]
global defaultRNG
$defaultRNG seed 12345
set blackoutRng [new RNG]
for {set i 0} {$i < int($P(seed))} {incr i} {
    $defaultRNG next-substream
    $blackoutRng next-substream
}

set res [open [file join $outDir result.txt] w]
puts $res "# format dcfair-ns2-outcast-cases-1"
puts $res "# ns_version [ns-version]"
foreach k [lsort [array names P]] { puts $res "# $k $P($k)" }

# ---------------------------------------------------------------- TCP
Agent/TCP set packetSize_          [expr {int($P(mss))}]
Agent/TCP set tcpip_base_hdr_size_ [expr {int($P(hdr))}]
Agent/TCP set window_              [expr {int($P(rcv_window_pkts))}]
Agent/TCP set windowInit_          [expr {int($P(init_cwnd))}]
Agent/TCP set windowInitOption_    1
Agent/TCP set minrto_              $P(min_rto)
Agent/TCP set maxrto_              $P(max_rto)
Agent/TCP set rtxcur_init_         $P(initial_rto)
Agent/TCP set tcpTick_             $P(tick)
Agent/TCP set syn_                 [expr {$P(syn) ? "true" : "false"}]
Agent/TCP set singledup_           [expr {int($P(singledup))}]
Agent/TCP set timestamps_          false
Agent/TCP set maxburst_            0
Agent/TCPSink set packetSize_      [expr {int($P(hdr))}]

# ---------------------------------------------------------------- queues (class defaults)
Queue/DropTail set drop_front_ false
Queue/RED set bytes_          [expr {$P(red_bytes) ? "true" : "false"}]
Queue/RED set queue_in_bytes_ false
Queue/RED set thresh_         $P(red_min)
Queue/RED set maxthresh_      $P(red_max)
Queue/RED set q_weight_       $P(red_weight)
Queue/RED set linterm_        [expr {1.0 / $P(red_max_p)}]
Queue/RED set gentle_         [expr {$P(red_gentle) ? "true" : "false"}]
Queue/RED set mean_pktsize_   [expr {int($P(red_mean_pktsize))}]
Queue/RED set setbit_         false
Queue/RED set adaptive_       0
Queue/RED set wait_           [expr {$P(red_wait) ? "true" : "false"}]
Queue/RED set drop_tail_      true
Queue/RED set drop_front_     false
Queue/RED set drop_rand_      false
Queue/SFQ set buckets_        [expr {int($P(sfq_buckets))}]

# ---------------------------------------------------------------- topology
foreach n $nodes { set node($n) [$ns node] }
foreach p $ports {
    lassign $p from to rate delay kind args
    set qtype [dict get {nic DropTail droptail_pkts DropTail droptail_bytes DropTail red RED sfq SFQ blackout DropTail} $kind]
    if {$kind eq "sfq"} { Queue/SFQ set maxqueue_ [lindex $args 0] }
    $ns simplex-link $node($from) $node($to) $rate $delay $qtype
    set link($from->$to) [$ns link $node($from) $node($to)]
    set q [$link($from->$to) queue]
    switch $kind {
        nic - droptail_pkts - blackout { $q set limit_ [expr {[lindex $args 0] + 1}] }
        droptail_bytes {
            $q set queue_in_bytes_ true
            $q set mean_pktsize_ 1
            $q set limit_ [expr {[lindex $args 0] + 1}]
        }
        red { $q set limit_ [lindex $args 0] }
        sfq {}
    }
    if {$kind eq "blackout"} {
        lassign $args pkts off on
        set offRv [new RandomVariable/Exponential]
        $offRv set avg_ $off
        $offRv use-rng $blackoutRng
        set onRv [new RandomVariable/Constant]
        $onRv set val_ $on
        set em [new ErrorModel/TwoState $offRv $onRv time]
        $ns lossmodel $em $node($from) $node($to)
    }
}

foreach m $measured {
    lassign $m a b
    set mon($a->$b) [$ns monitor-queue $node($a) $node($b) ""]
}
foreach d $droprun {
    lassign $d a b
    set trf($a->$b) [open [file join $outDir "droprun-$a-$b.tr"] w]
    $ns trace-queue $node($a) $node($b) $trf($a->$b)
}

# ---------------------------------------------------------------- routes: dcfair's paths
proc link_tail {l} {
    # the last object of link l, the one that hands packets to the next node's entry
    set entry [[$l set toNode_] entry]
    set o [$l set ttl_]
    while {[$o target] ne $entry} { set o [$o target] }
    return $o
}
proc install_path {fid from to path} {
    global link node cls slot
    set sa [$node($from) id]
    set da [$node($to) id]
    for {set i 0} {$i + 1 < [llength $path]} {incr i} {
        set in [lindex $path $i]
        set out [lindex $path [expr {$i + 1}]]
        if {![info exists cls($in)]} {
            set c [new Classifier/Hash/SrcDestFid 64]
            set sw [$link($in) set toNode_]
            $c install 0 [$sw entry]
            $c set default_ 0
            set cls($in) $c
            set slot($in) 1
            [link_tail $link($in)] target $c
        }
        if {![info exists slot($in,$out)]} {
            set slot($in,$out) $slot($in)
            $cls($in) install $slot($in) [$link($out) head]
            incr slot($in)
        }
        $cls($in) set-hash 0 $sa $da $fid $slot($in,$out)
    }
}

# ---------------------------------------------------------------- flows
set fids {}
foreach f $flows {
    lassign $f fid group src dst start pkts tcpv path ackpath
    switch $tcpv {
        newreno    { set tcp($fid) [new Agent/TCP/Newreno]; set sink($fid) [new Agent/TCPSink] }
        sack       { set tcp($fid) [new Agent/TCP/Sack1];   set sink($fid) [new Agent/TCPSink/Sack1] }
        cubic      { set tcp($fid) [new Agent/TCP/Linux];   set sink($fid) [new Agent/TCPSink] }
        cubic_sack { set tcp($fid) [new Agent/TCP/Linux];   set sink($fid) [new Agent/TCPSink/Sack1] }
        default    { error "outcast_cases.tcl: unknown TCP $tcpv" }
    }
    $tcp($fid) set fid_ $fid
    $ns attach-agent $node($src) $tcp($fid)
    $ns attach-agent $node($dst) $sink($fid)
    $ns connect $tcp($fid) $sink($fid)
    if {[string match cubic* $tcpv]} {
        if {![info exists cubicSet]} {
            foreach {k v} $cubicParams { $tcp($fid) set_ca_default_param cubic $k $v }
            set cubicSet 1
        }
        $ns at 0.0 "$tcp($fid) select_ca cubic"
    }
    if {$pkts == 0} {
        set ftp($fid) [$tcp($fid) attach-app FTP]
        $ns at $start "$ftp($fid) start"
    } else {
        $ns at $start "$tcp($fid) advanceby [expr {int($pkts)}]"
    }
    install_path $fid $src $dst $path
    install_path $fid $dst $src $ackpath
    lappend fids $fid
}

# ---------------------------------------------------------------- measurement
proc delivered {} {
    global fids sink
    set out {}
    foreach fid $fids { lappend out [$sink($fid) set bytes_] }
    return $out
}
proc sample {t} {
    global res
    puts $res "T [format %.9f $t] [delivered]"
}
proc window_open {} {
    global res ns measured mon bdep0
    puts $res "W [format %.9f [$ns now]] [delivered]"
    foreach m $measured {
        lassign $m a b
        set bdep0($a->$b) [$mon($a->$b) set bdepartures_]
    }
}
foreach m $measured { lassign $m a b; set bdep0($a->$b) 0 }
if {$P(window_start) > 0} { $ns at $P(window_start) "window_open" }
set lastSample -1
if {$P(sample_s) > 0} {
    set n [expr {int(floor($P(duration) / $P(sample_s) + 1e-9))}]
    for {set k 0} {$k <= $n} {incr k} {
        set t [expr {$k * $P(sample_s)}]
        if {abs($t - $P(duration)) < 1e-9} { break }
        $ns at $t "sample $t"
    }
}

proc finish {} {
    global ns res fids tcp sink measured mon bdep0 droprun trf P
    if {$P(sample_s) > 0} { sample $P(duration) }
    foreach fid $fids {
        set t $tcp($fid)
        puts $res [format "F %d %d %d %d %d %d %.3f %d" $fid [$t set ack_] [$t set ndatapack_] \
            [$t set nrexmitpack_] [$t set nrexmit_] [$sink($fid) set bytes_] [$t set cwnd_] [$t set backoff_]]
    }
    foreach m $measured {
        lassign $m a b
        set q $mon($a->$b)
        puts $res [format "Q %s %s %d %d %.0f %.0f" $a $b [$q set pdrops_] [$q set parrivals_] \
            $bdep0($a->$b) [$q set bdepartures_]]
    }
    puts $res [format "E %.9f" [$ns now]]
    close $res
    foreach d $droprun {
        lassign $d a b
        close $trf($a->$b)
    }
    exit 0
}
$ns at $P(duration) "finish"
$ns run
