# parkinglot.tcl -- ExpressPass (kaist-ina/ns2-xpass's Agent/XPass and Queue/XPassDropTail) on
# dcfair's parking lot of scenarios/papers/xpass/parking_lot.toml and multi_bottleneck.toml:
# switches p0 .. pN in a chain (N = -bottlenecks), hosts src<i> and dst<i> on switch p<i>,
# every port an XPassDropTail. dcfair's xpass-fig10 and xpass-fig11 run here (README.md).
#
# Usage: ns parkinglot.tcl -bottlenecks N -flows "src0,dst2,0.00005,0 ..." [options]
#   topology: -bottlenecks 6 -host_rate_mbps 10000 -bottleneck_rate_mbps 10000 -delay_us 1
#             -queue_pkts 100 (switch ports) -host_buffer_pkts 1000 (host NICs)
#   the rest: common.tcl (seed, duration, window, sample_interval, measure, ExpressPass)
# Writes ns2xpass_*.csv and ns2xpass_run.txt into the working directory.
source [file join [file dirname [info script]] common.tcl]

xp_defaults {
    bottlenecks 6
    host_rate_mbps 10000
    bottleneck_rate_mbps 10000
    delay_us 1
}
xp_options $argv
xp_parse_flows

set ns [new Simulator]
# Manual routes (common.tcl, xp_route): the one path along the chain.
$ns rtproto Manual
xp_configure

set hr [expr {$OPT(host_rate_mbps) * 1e6}]
set br [expr {$OPT(bottleneck_rate_mbps) * 1e6}]
set n $OPT(bottlenecks)
set PORTS {}
for {set i 0} {$i <= $n} {incr i} {
    set NODE(src$i) [$ns node]
    set NODE(dst$i) [$ns node]
}
for {set i 0} {$i <= $n} {incr i} {
    set NODE(p$i) [$ns node]
}
set recv [xp_receivers]
for {set i 0} {$i <= $n} {incr i} {
    foreach h [list src$i dst$i] {
        set r [expr {[lsearch -exact $recv $h] >= 0}]
        xp_duplex p$i $h $hr $OPT(delay_us) $OPT(queue_pkts) $OPT(host_buffer_pkts) $r 0
    }
}
for {set i 0} {$i < $n} {incr i} {
    xp_duplex p$i p[expr {$i + 1}] $br $OPT(delay_us) $OPT(queue_pkts) $OPT(queue_pkts)
}
for {set i 0} {$i <= $n} {incr i} {
    foreach h [list src$i dst$i] {
        xp_default_route $h p$i
        for {set j 0} {$j <= $n} {incr j} {
            if {$j == $i} {
                xp_route p$j $h $h
            } elseif {$j < $i} {
                xp_route p$j $h p[expr {$j + 1}]
            } else {
                xp_route p$j $h p[expr {$j - 1}]
            }
        }
    }
}
if {$OPT(measure) eq ""} {
    for {set i 0} {$i < $n} {incr i} {
        lappend OPT(measure) "p$i->p[expr {$i + 1}]"
    }
}
foreach p $OPT(measure) {
    if {[lsearch -exact $PORTS $p] < 0} {
        puts stderr "-measure: no port $p"
        exit 2
    }
}
xp_run
