# Check of the FairQ module's ACK rewrite (fairq.h, R1, R4, R7, R8), run by check.py.
#
#   ns check.tcl --out DIR [--tamper 0|1]
#
# Topology: server S -- switch X -- ToR T -- clients C1, C2 (1 Gbit/s, 10 us links). X's port
# towards T is a FairQ port (Queue/DropTail/FairQ on X->T, FairQIngress at the end of T->X).
# Its control timer is frozen (interval_ 1e6 s), so the port's local window stays at the
# target T = target_fraction_ x buffer_bytes_ = 0.25 x 15000 = 3750 bytes and the per-flow
# window is known in advance: w = T / n with n the SYN-ACKs that went out through the port.
#   flow A: S -> C1, long-lived, C1 advertises 1,000,000 bytes (field 62500, shift 4)
#   flow B: S -> C2, long-lived, C2 advertises 1500 bytes (field 1500, shift 0), below any w
# Four probes (FairQProbe, one file each) log every TCP packet: ACKs as the clients sent them (before X)
# and as they leave X; data as it enters X and as it leaves it. check.py recomputes what
# every ACK's window must be and checks that data packets are untouched.
# --tamper 1 sets the port's min_window_ to 4000 bytes, which changes w behind check.py's
# back: check.py must then fail (it shows the check can fail).

array set opt {out . tamper 0 duration 0.5}
foreach {k v} $argv { set opt([string trimleft $k -]) $v }

set ns [new Simulator]
$defaultRNG seed 1

Agent/TCP set packetSize_ 1460
Agent/TCP set tcpip_base_hdr_size_ 40
Agent/TCP set window_ 1000
Agent/TCP set windowInit_ 2
Agent/TCP set syn_ true
Agent/TCP set rtxcur_init_ 1.0
Agent/TCP set tcpTick_ 0.0001
Agent/TCPSink set packetSize_ 40

set S [$ns node]
set X [$ns node]
set T [$ns node]
set C1 [$ns node]
set C2 [$ns node]

$ns duplex-link $S $X 1Gb 10us DropTail
$ns simplex-link $X $T 1Gb 10us DropTail/FairQ
$ns simplex-link $T $X 1Gb 10us DropTail
$ns duplex-link $T $C1 1Gb 10us DropTail
$ns duplex-link $T $C2 1Gb 10us DropTail
foreach {a b} [list $S $X $X $S $X $T $T $X $T $C1 $C1 $T $T $C2 $C2 $T] {
    $ns queue-limit $a $b 1000
}

set fq [[$ns link $X $T] queue]
$fq set buffer_bytes_ 15000
$fq set target_fraction_ 0.25
$fq set interval_ 1e6
$fq set sample_interval_ 1e6
if {$opt(tamper)} { $fq set min_window_ 4000 }

# splice a connector at the tail of link a->b (after its delay and TTL checker)
proc splice {a b obj} {
    global ns
    set ttl [[$ns link $a $b] set ttl_]
    $obj target [$ttl target]
    $ttl target $obj
}
set ing [new FairQIngress]
$ing port $fq
splice $T $X $ing

file mkdir $opt(out)
foreach {name a b} {ack_in T X ack_out X S data_in S X data_out X T} {
    set trace [file join $opt(out) probe_$name.txt]
    file delete -force $trace
    set p($name) [new FairQProbe]
    $p($name) open $trace $name
    splice [set $a] [set $b] $p($name)
}

proc flow {src dst rcvbuf wscale} {
    global ns
    set s [new Agent/TCP/Newreno/Rwnd]
    set k [new Agent/TCPSink/Rwnd]
    $k set rcv_buf_ $rcvbuf
    $k set wscale_ $wscale
    $ns attach-agent $src $s
    $ns attach-agent $dst $k
    $ns connect $s $k
    $s set answer_bytes_ -1
    return [list $s $k]
}
lassign [flow $S $C1 1000000 -1] sA kA
lassign [flow $S $C2 1500 0] sB kB
$ns at 0.01 "$kA request 1 -1"
$ns at 0.20 "$kB request 1 -1"

proc finish {} {
    global p fq opt
    foreach n [array names p] { $p($n) close }
    set f [open [file join $opt(out) params.txt] w]
    foreach v {buffer_bytes_ target_fraction_ min_window_ max_window_ mss_ rewrites_ synacks_} {
        puts $f "$v [$fq set $v]"
    }
    puts $f "tamper $opt(tamper)"
    close $f
    exit 0
}
$ns at $opt(duration) finish
$ns run
