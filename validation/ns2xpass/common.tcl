# common.tcl -- dcfair's shared part of the ExpressPass second-opinion scripts
# (leafspine.tcl, parkinglot.tcl), run by a user-built ns-2.35 with the ExpressPass
# modules of kaist-ina/ns2-xpass (Agent/XPass, Queue/XPassDropTail); see README.md.
#
# What it does, for the topology script that sources it:
#
# - options: "-key value" pairs on the command line (xp_options); unknown keys are an error;
# - ExpressPass settings: the class defaults of Agent/XPass and Queue/XPassDropTail from the
#   options (xp_configure), credit sizes, credit queue in credits, token bucket, token rate
#   from the mean credit size, jitter, initial rate, w_init, feedback on or off;
# - the seed: ns-2's defaultRNG and the C library's rand() (which Agent/XPass draws its jitter
#   and credit sizes from) are both set from -seed (xp_burn_rand);
# - links: every port is a Queue/XPassDropTail (switch ports and host NICs alike), named by
#   dcfair's port names ("l0->sp0");
# - flows: "-flows" is a list of "src,dst,start_s,size_bytes" (size 0: long-lived), ids 0..;
# - measurements: a QueueMonitor on every port, a flow monitor (by flow id) on every port into
#   a receiving host; samples of every flow's delivered bytes every -sample_interval, and of
#   every counter at the window's start and end; written at the end as CSV files.
#
# Every time the scripts take or write is the experiment's time: the experiment starts at
# T0 (after the seed burner, below) and the files subtract T0.

set XP(frame) 1538      ;# data frame on the wire (Agent/XPass max_ethernet_size_)
set XP(hdr) 78          ;# ExpressPass header (Agent/XPass xpass_hdr_size_)
set XP(mss) [expr {$XP(frame) - $XP(hdr)}]
set XP(long_bytes) 100000000000  ;# a long-lived flow's bytes (never runs out in these runs)

# Defaults of every option (a topology script adds its own with xp_defaults before parsing).
array set OPT {
    seed 1
    duration 0.02
    window 0.01
    sample_interval 0
    flows ""
    measure ""
    credit_queue 8
    credit_min 84
    credit_max 92
    bucket_bytes 840
    jitter 0.1
    initial_rate 0.5
    w_init 0.5
    min_w 0.01
    target_loss_scaling 0.125
    retransmit_timeout 0.1
    stop_timeout 0.002
    feedback code
    air 0
    queue_pkts 100
    host_buffer_pkts 1000
}

proc xp_defaults {pairs} {
    global OPT
    array set OPT $pairs
}

proc xp_options {argv} {
    global OPT
    if {[llength $argv] % 2 != 0} {
        puts stderr "options come in pairs: -key value"
        exit 2
    }
    foreach {k v} $argv {
        set key [string range $k 1 end]
        if {[string index $k 0] ne "-" || ![info exists OPT($key)]} {
            puts stderr "unknown option $k; options: [lsort [array names OPT]]"
            exit 2
        }
        set OPT($key) $v
    }
    if {$OPT(feedback) ni {code none}} {
        puts stderr "-feedback is code (the ns-2 code's feedback control) or none (credits at the maximum rate)"
        exit 2
    }
}

# Mean credit size and the credit rate (bytes/s) of a link of rate_bps: the data frame and its
# credit share the link (scripts/large-scale-fattree.tcl's creditBW).
proc xp_credit_avg {} {
    global OPT
    return [expr {($OPT(credit_min) + $OPT(credit_max)) / 2.0}]
}
proc xp_credit_rate {rate_bps} {
    global XP
    set avg [xp_credit_avg]
    return [expr {int($rate_bps / 8.0 * $avg / ($avg + $XP(frame)))}]
}

proc xp_configure {} {
    global OPT XP
    # Credit queue of q credits whatever their sizes: q x the largest credit (exactly q credits
    # for q <= 10 with 84-92 B credits; the ns-2 queue limits bytes).
    Queue/XPassDropTail set credit_limit_ [expr {$OPT(credit_queue) * $OPT(credit_max)}]
    Queue/XPassDropTail set max_tokens_ $OPT(bucket_bytes)
    Agent/XPass set min_credit_size_ $OPT(credit_min)
    Agent/XPass set max_credit_size_ $OPT(credit_max)
    Agent/XPass set max_ethernet_size_ $XP(frame)
    Agent/XPass set xpass_hdr_size_ $XP(hdr)
    Agent/XPass set w_init_ $OPT(w_init)
    Agent/XPass set min_w_ $OPT(min_w)
    Agent/XPass set retransmit_timeout_ $OPT(retransmit_timeout)
    Agent/XPass set default_credit_stop_timeout_ $OPT(stop_timeout)
    Agent/XPass set min_jitter_ [expr {-1.0 * $OPT(jitter)}]
    Agent/XPass set max_jitter_ $OPT(jitter)
    Agent/XPass set target_loss_scaling_ $OPT(target_loss_scaling)
}

# ---- the seed -----------------------------------------------------------------------------
#
# Agent/XPass draws credit jitter and sizes from the C library's rand(), which no Tcl command
# seeds. The burner advances rand() by a number of draws that grows with the seed before the
# experiment starts: an isolated pair of nodes, one single-packet ExpressPass flow whose
# receiver paces jittered credits at 25 M credits/s until the credit stop comes back, over a
# link of seed x 20 us: about 1000 x seed draws. The experiment starts at T0, after it.
proc xp_burn_rand {} {
    global ns OPT XP
    set seed $OPT(seed)
    if {$seed < 1 || $seed != int($seed)} {
        puts stderr "-seed is a whole number >= 1"
        exit 2
    }
    global defaultRNG
    $defaultRNG seed $seed
    set d [expr {$seed * 20e-6}]
    set a [$ns node]
    set b [$ns node]
    $ns simplex-link $a $b 100Gb $d XPassDropTail
    $ns simplex-link $b $a 100Gb $d XPassDropTail
    foreach {x y} [list $a $b $b $a] {
        set q [[$ns link $x $y] queue]
        $q set token_refresh_rate_ 3e9
        $q set credit_limit_ 100000
        $q set max_tokens_ 100000
    }
    set snd [new Agent/XPass]
    set rcv [new Agent/XPass]
    foreach ag [list $snd $rcv] {
        $ag set fid_ 1000000
        $ag set min_credit_size_ 84
        $ag set max_credit_size_ 84
        $ag set min_jitter_ -0.1
        $ag set max_jitter_ 0.1
        $ag set max_credit_rate_ 2100000000
        $ag set alpha_ 40.0
    }
    $ns attach-agent $a $snd
    $ns attach-agent $b $rcv
    $ns connect $snd $rcv
    [$a get-module Manual] add-route-to-adj-node -default $b
    [$b get-module Manual] add-route-to-adj-node -default $a
    $ns at 0.0 "$snd advance-bytes 1"
    return [expr {3.0 * $d + 100e-6}]
}

# ---- links and monitors -------------------------------------------------------------------

# One port a -> b (names as dcfair's: "a->b"), an XPassDropTail of `buf` data packets, with a
# QueueMonitor (or, when `into_receiver`, a flow monitor by flow id).
proc xp_port {a b rate_bps delay_us buf {into_receiver 0}} {
    global ns NODE PORT PORTS XP
    $ns simplex-link $NODE($a) $NODE($b) $rate_bps [expr {$delay_us * 1e-6}] XPassDropTail
    set lnk [$ns link $NODE($a) $NODE($b)]
    set q [$lnk queue]
    $q set data_limit_ [expr {$buf * $XP(frame)}]
    $q set token_refresh_rate_ [xp_credit_rate $rate_bps]
    set name "$a->$b"
    if {$into_receiver} {
        set mon [$ns makeflowmon Fid]
        $ns attach-fmon $lnk $mon
    } else {
        set mon [new QueueMonitor]
        $lnk attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $mon
    }
    set PORT($name,mon) $mon
    set PORT($name,rate) $rate_bps
    set PORT($name,delay) [expr {$delay_us * 1e-6}]
    set PORT($name,fmon) $into_receiver
    lappend PORTS $name
}

proc xp_duplex {a b rate_bps delay_us buf_ab buf_ba {recv_b 0} {recv_a 0}} {
    xp_port $a $b $rate_bps $delay_us $buf_ab $recv_b
    xp_port $b $a $rate_bps $delay_us $buf_ba $recv_a
}

# Manual routing (the topology script calls `$ns rtproto Manual` before creating nodes): a
# route at `node` towards host `dst` through the port to the neighbour `nbr`. The static
# all-pairs tables of ns-2 take minutes for 2000 hosts; these topologies have one path.
proc xp_route {node dst nbr} {
    global ns NODE
    $NODE($node) add-route [$NODE($dst) set address_] [[$ns link $NODE($node) $NODE($nbr)] head]
}
proc xp_default_route {node nbr} {
    global NODE
    [$NODE($node) get-module Manual] add-route-to-adj-node -default $NODE($nbr)
}

# ---- flows ----------------------------------------------------------------------------------

proc xp_parse_flows {} {
    global OPT FLOWS
    set FLOWS {}
    foreach f $OPT(flows) {
        set parts [split $f ","]
        if {[llength $parts] != 4} {
            puts stderr "a flow is src,dst,start_s,size_bytes: $f"
            exit 2
        }
        lappend FLOWS $parts
    }
    if {[llength $FLOWS] == 0} {
        puts stderr "no flows (-flows \"src,dst,start_s,size_bytes ...\")"
        exit 2
    }
}

# Hosts that receive some flow (their downlink gets a flow monitor).
proc xp_receivers {} {
    global FLOWS
    set r {}
    foreach f $FLOWS {
        lappend r [lindex $f 1]
    }
    return [lsort -unique $r]
}

proc xp_start_flows {t0} {
    global ns OPT XP FLOWS NODE AGENT
    set id 0
    foreach f $FLOWS {
        lassign $f src dst start size
        set snd [new Agent/XPass]
        set rcv [new Agent/XPass]
        $snd set fid_ $id
        $rcv set fid_ $id
        set bytes [expr {$size > 0 ? $size : $XP(long_bytes)}]
        set pkts [expr {int(ceil($bytes / double($XP(mss))))}]
        # The credit sender is the flow's receiver: its alpha_ is the initial rate. The code
        # scales it by pkts / 40 for flows under 40 packets (its adaptive initial rate, "AIR");
        # -air 0 undoes that, so that the flow starts at -initial_rate as figure 8 varies it.
        set alpha $OPT(initial_rate)
        if {$OPT(feedback) eq "none"} {
            # No feedback: the rate stays one byte/s under the maximum (cur_credit_rate_ < max
            # with a target loss far above 1 never decreases; the increase rounds down to it).
            set alpha [expr {1.0 - 1e-9}]
            $rcv set target_loss_scaling_ 1e12
        }
        if {$pkts < 40 && ($OPT(air) == 0 || $OPT(feedback) eq "none")} {
            set alpha [expr {$alpha * 40.0 / $pkts}]
        }
        $rcv set alpha_ $alpha
        # The credit rate of the receiver's own link (every link of a run has one rate here).
        set r [xp_host_rate $dst]
        $rcv set max_credit_rate_ [xp_credit_rate $r]
        $snd set max_credit_rate_ [xp_credit_rate [xp_host_rate $src]]
        $ns attach-agent $NODE($src) $snd
        $ns attach-agent $NODE($dst) $rcv
        $ns connect $snd $rcv
        $ns at [expr {$t0 + $start}] "$snd advance-bytes $bytes"
        set AGENT($id) [list $snd $rcv]
        incr id
    }
}

proc xp_host_rate {host} {
    global PORT PORTS
    foreach p $PORTS {
        if {[string match "$host->*" $p]} {
            return $PORT($p,rate)
        }
    }
    error "host $host has no port"
}

# ---- sampling -------------------------------------------------------------------------------

# Per-flow delivered data: departures from the flow monitors of the ports into receivers,
# payload = bytes - header x packets. A departure leaves the queue one frame time plus the
# link delay before it reaches the host, so "delivered by t" is sampled at t - lag.
proc xp_flow_counters {} {
    global PORT PORTS XP
    set out {}
    foreach p $PORTS {
        if {!$PORT($p,fmon)} continue
        foreach fl [$PORT($p,mon) flows] {
            set fid [$fl set flowid_]
            if {$fid >= 1000000} continue
            dict incr out $fid [expr {[$fl set bdepartures_] - $XP(hdr) * [$fl set pdepartures_]}]
        }
    }
    return $out
}

proc xp_sample_flows {t} {
    global SAMPLES
    lappend SAMPLES [list $t [xp_flow_counters]]
}

proc xp_port_counters {} {
    global PORT PORTS
    set out {}
    foreach p $PORTS {
        set m $PORT($p,mon)
        dict set out $p [list [$m set bdepartures_] [$m set pdepartures_] [$m set parrivals_] \
                             [$m set pdrops_] [$m set bdrops_]]
    }
    return $out
}

proc xp_snapshot {which} {
    global SNAP
    set SNAP($which,ports) [xp_port_counters]
}
proc xp_snapshot_flows {which} {
    global SNAP
    set SNAP($which,flows) [xp_flow_counters]
}

proc xp_schedule {t0} {
    global ns OPT XP PORT PORTS
    set lag_port [expr {$XP(frame) * 8.0 / 10e9}]
    # The longest lag of a port into a receiver (all ports of these topologies have one rate
    # and one delay; the lag differs by nanoseconds otherwise).
    set lag 0.0
    foreach p $PORTS {
        if {$PORT($p,fmon)} {
            set l [expr {$XP(frame) * 8.0 / $PORT($p,rate) + $PORT($p,delay)}]
            if {$l > $lag} { set lag $l }
        }
    }
    set w0 [expr {$OPT(duration) - $OPT(window)}]
    $ns at [expr {$t0 + $w0 - $lag_port}] "xp_snapshot start"
    $ns at [expr {$t0 + $OPT(duration) - $lag_port}] "xp_snapshot end"
    $ns at [expr {$t0 + $w0 - $lag}] "xp_snapshot_flows start"
    $ns at [expr {$t0 + $OPT(duration) - $lag}] "xp_snapshot_flows end"
    if {$OPT(sample_interval) > 0} {
        set k 0
        while {1} {
            set t [expr {$k * $OPT(sample_interval)}]
            if {$t > $OPT(duration) + 1e-12} break
            $ns at [expr {$t0 + $t - $lag}] "xp_sample_flows $t"
            incr k
        }
    }
    $ns at [expr {$t0 + $OPT(duration)}] "xp_finish $t0"
}

# ---- results --------------------------------------------------------------------------------

proc xp_finish {t0} {
    global OPT FLOWS SAMPLES SNAP PORT PORTS XP
    set fin [xp_flow_counters]
    # flows
    set f [open ns2xpass_flows.csv w]
    puts $f "flow_id,src,dst,start_s,size_bytes,delivered_bytes,window_delivered_bytes"
    set id 0
    foreach fl $FLOWS {
        lassign $fl src dst start size
        set d [expr {[dict exists $fin $id] ? [dict get $fin $id] : 0}]
        set a [expr {[dict exists $SNAP(start,flows) $id] ? [dict get $SNAP(start,flows) $id] : 0}]
        set b [expr {[dict exists $SNAP(end,flows) $id] ? [dict get $SNAP(end,flows) $id] : 0}]
        puts $f "$id,$src,$dst,$start,$size,$d,[expr {$b - $a}]"
        incr id
    }
    close $f
    # ports
    set f [open ns2xpass_ports.csv w]
    puts $f "port,rate_bps,delay_s,measured,bytes_out,pkts_out,arrivals_pkts,drops_pkts,drops_bytes,window_bytes_out,window_pkts_out"
    set fin [xp_port_counters]
    foreach p $PORTS {
        lassign [dict get $fin $p] bo po pa pd bd
        lassign [dict get $SNAP(start,ports) $p] bs ps
        lassign [dict get $SNAP(end,ports) $p] be pe
        set meas [expr {[lsearch -exact $OPT(measure) $p] >= 0 ? 1 : 0}]
        puts $f "$p,$PORT($p,rate),$PORT($p,delay),$meas,$bo,$po,$pa,$pd,$bd,[expr {$be - $bs}],[expr {$pe - $ps}]"
    }
    close $f
    # samples
    if {$OPT(sample_interval) > 0} {
        set f [open ns2xpass_samples.csv w]
        puts $f "time_s,flow_id,delivered_bytes"
        set n [llength $FLOWS]
        foreach s $SAMPLES {
            lassign $s t c
            for {set id 0} {$id < $n} {incr id} {
                set v [expr {[dict exists $c $id] ? [dict get $c $id] : 0}]
                puts $f "[format %.9f $t],$id,$v"
            }
        }
        close $f
    }
    set f [open ns2xpass_run.txt w]
    foreach k [lsort [array names OPT]] {
        if {$k eq "flows"} continue
        puts $f "$k=$OPT($k)"
    }
    puts $f "t0_s=$t0"
    puts $f "flows_count=[llength $FLOWS]"
    puts $f "credit_rate_Bps_10G=[xp_credit_rate 10e9]"
    close $f
    exit 0
}

# ---- the common run ---------------------------------------------------------------------------

# The topology script creates `ns`, parses options, builds NODE()/ports, then calls xp_run.
proc xp_run {} {
    global ns OPT SAMPLES
    set SAMPLES {}
    # Agent/XPass appends to outputs/fct.out and outputs/waste.out (relative to the working
    # directory) and crashes when it cannot open them: they are made here, empty.
    file mkdir outputs
    close [open outputs/fct.out w]
    close [open outputs/waste.out w]
    set t0 [xp_burn_rand]
    xp_start_flows $t0
    xp_schedule $t0
    $ns run
}
