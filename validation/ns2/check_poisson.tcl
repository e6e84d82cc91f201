# check_poisson.tcl -- does longflows.tcl's UDP source give Poisson arrivals in ns-2.35?
#
# The same construction as in longflows.tcl (Application/Traffic/Exponential,
# burst_time_ 0, rate_ 1e15, idle_time_ = 1/lambda - 8*size/rate_, own RNG stream),
# sending over one 1 Tb/s, zero-delay link so that the arrival times are the send
# times (+ 12 ns serialization). Writes one arrival time a line to the given file.
#
# Usage: ns check_poisson.tcl OUT SEED DURATION_S [LAMBDA_PPS] [PKT_BYTES]
if {[llength $argv] < 3} {
    puts stderr "usage: ns check_poisson.tcl OUT SEED DURATION_S \[LAMBDA_PPS\] \[PKT_BYTES\]"
    exit 2
}
set out [lindex $argv 0]
set seed [lindex $argv 1]
set duration [lindex $argv 2]
set lambda [expr {[llength $argv] > 3 ? [lindex $argv 3] : 0.05 * 100e6 / (8.0 * 1500)}]
set size [expr {[llength $argv] > 4 ? [lindex $argv 4] : 1500}]

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
set startRng [new RNG]
set udpRng [new RNG]

set a [$ns node]
set b [$ns node]
$ns simplex-link $a $b 1e12 0 DropTail
$ns queue-limit $a $b 100000
set tf [open $out w]
set recvT [$ns create-trace Recv $tf $a $b ""]
set link [$ns link $a $b]
set ttl [$link set ttl_]
$recvT target [$ttl target]
$ttl target $recvT

set udp [new Agent/UDP]
$udp set packetSize_ $size
$ns attach-agent $a $udp
set sink [new Agent/Null]
$ns attach-agent $b $sink
$ns connect $udp $sink
set burstRate 1e15
set src [new Application/Traffic/Exponential]
$src set packetSize_ $size
$src set burst_time_ 0
$src set idle_time_ [expr {1.0 / $lambda - 8.0 * $size / $burstRate}]
$src set rate_ $burstRate
$src attach-agent $udp
$src use-rng $udpRng
$ns at 0.0 "$src start"
$ns at $duration "close $tf; exit 0"
$ns run
