# leafspine.tcl -- ExpressPass (kaist-ina/ns2-xpass's Agent/XPass and Queue/XPassDropTail) on
# dcfair's leaf-spine of scenarios/papers/xpass/credit_*.toml: `leaves` leaves under one spine,
# `hosts_per_leaf` hosts per leaf (h0, h1, ... leaf by leaf), every port an XPassDropTail.
# dcfair's reproductions xpass-fig6a, xpass-fig8 and xpass-fig9 run here (README.md).
#
# Usage: ns leafspine.tcl -hosts_per_leaf N -flows "h0,h2,0.0,0 ..." [options]
#   topology: -leaves 2 -hosts_per_leaf 2 -host_rate_mbps 10000 -fabric_rate_mbps 10000
#             -delay_us 3 -queue_pkts 100 (switch ports) -host_buffer_pkts 1000 (host NICs)
#   the rest: common.tcl (seed, duration, window, sample_interval, measure, ExpressPass)
# Writes ns2xpass_*.csv and ns2xpass_run.txt into the working directory (and the agents'
# own outputs/fct.out, outputs/waste.out).
source [file join [file dirname [info script]] common.tcl]

xp_defaults {
    leaves 2
    spines 1
    hosts_per_leaf 2
    host_rate_mbps 10000
    fabric_rate_mbps 10000
    delay_us 3
}
xp_options $argv
xp_parse_flows

set ns [new Simulator]
# Manual routes (common.tcl, xp_route): the one shortest path of a single-spine leaf-spine.
$ns rtproto Manual
xp_configure

set hr [expr {$OPT(host_rate_mbps) * 1e6}]
set fr [expr {$OPT(fabric_rate_mbps) * 1e6}]
set PORTS {}
set NODE(sp0) [$ns node]
for {set l 0} {$l < $OPT(leaves)} {incr l} {
    set NODE(l$l) [$ns node]
}
set nh [expr {$OPT(leaves) * $OPT(hosts_per_leaf)}]
for {set h 0} {$h < $nh} {incr h} {
    set NODE(h$h) [$ns node]
}
set recv [xp_receivers]
# dcfair's port order: host ports leaf by leaf, then the fabric.
for {set h 0} {$h < $nh} {incr h} {
    set l [expr {$h / $OPT(hosts_per_leaf)}]
    set r [expr {[lsearch -exact $recv h$h] >= 0}]
    xp_duplex l$l h$h $hr $OPT(delay_us) $OPT(queue_pkts) $OPT(host_buffer_pkts) $r 0
}
for {set l 0} {$l < $OPT(leaves)} {incr l} {
    xp_duplex sp0 l$l $fr $OPT(delay_us) $OPT(queue_pkts) $OPT(queue_pkts)
}
if {$OPT(spines) != 1} {
    puts stderr "-spines: one spine (the reproductions' leaf-spine; a single path per pair)"
    exit 2
}
for {set h 0} {$h < $nh} {incr h} {
    set l [expr {$h / $OPT(hosts_per_leaf)}]
    xp_default_route h$h l$l
    xp_route l$l h$h h$h
    xp_route sp0 h$h l$l
}
for {set l 0} {$l < $OPT(leaves)} {incr l} {
    xp_default_route l$l sp0
}
foreach p $OPT(measure) {
    if {[lsearch -exact $PORTS $p] < 0} {
        puts stderr "-measure: no port $p"
        exit 2
    }
}
xp_run
