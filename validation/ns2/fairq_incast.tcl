# The FairQ paper's incast experiments (paper 001, section IV-F, on the testbed of IV-E) in
# ns-2.35 with the project's FairQ module (validation/ns2/modules/fairq/), as dcfair's
# reproductions fairq-incast-mild, -heavy, -lowfreq and -highfreq run them
# (python/dcfair/reproduce/fairq.py; scenarios/papers/fairq/testbed_incast.toml and
# testbed_incast_elephants.toml). Needs the module build of ns (out/peers/ns2/bin/ns).
#
#   ns fairq_incast.tcl --out result.txt [--key value ...]
#
# Every setting is a --key value option; the defaults are testbed_incast.toml's (the mild
# incast with DropTail and CUBIC). The four reproductions:
#   mild:     (defaults)                         --rounds 1000
#   heavy:    --servers 630 --rounds 200
#   lowfreq:  --elephants 21 --rounds 100 --start_s 5 --duration_s 20
#   highfreq: --elephants 21 --rounds 100 --epochs 9 --epoch_interval_s 2 --start_s 2 --duration_s 20
# each with --cc reno|cubic and --fairq 0|1 (FairQ at the core switch, every core port),
# or the DCTCP baseline: --cc dctcp --mark_k 87 (every switch port marks at K packets).
#
# Model (the TOMLs' comments give the reasons for the settings):
# - 28 hosts r1h1..r4h7 in 4 racks under tor1..tor4, joined by "core"; every link 1 Gbit/s,
#   30 us each way (base RTT 240 us). Host NICs: DropTail of --host_buffer_pkts; switch ports:
#   DropTail of --limit_pkts (packets waiting, as dcfair counts them: ns-2's limit_ is one
#   more, validation/ns2/README.md "What limit_ means"). With --fairq 1 the four core ports
#   are Queue/DropTail/FairQ and a FairQIngress sits at the end of each tor->core link.
# - Incast: server i runs on src[i % 21] (r1h1..r3h7) and answers client dst[(i / 21) % 6]
#   (r4h1..r4h6). Each round every client requests --server_bytes from each of its servers
#   at once, each answer on a new connection (the client's SYN, the server's SYN-ACK, the
#   client's ACK + request, the answer with FIN on its last segment, the client's FIN-ACK;
#   rwnd_tcp.h). The next round leaves --gap_s after the last answer of the round.
#   --epochs epochs of --rounds rounds; epoch k starts at start_s + k x epoch_interval_s or
#   gap_s after the previous epoch's last answer, whichever is later. Without elephants the
#   run ends with the last answer (or at --duration_s).
# - Elephants (--elephants N): flow j from src[j % 21] to r4h[(j % 7) + 1], long-lived, its
#   connection opened (SYN) at a uniform time in [0, --elephant_start_max_s] drawn from the
#   run's RNG; the run lasts --duration_s.
# - TCP: --cc reno = Agent/TCP/Reno/Rwnd (ns-2's Reno), newreno = Agent/TCP/Newreno/Rwnd,
#   cubic = Agent/TCP/Newreno/Rwnd with cubic_ 1 (NewReno recovery, CUBIC window;
#   rwnd_tcp.h); dctcp = Agent/TCP/Newreno/Rwnd with dctcp_ 1 and ecn_ 1 (RFC 8257, the
#   clients echo every segment's CE), the switch ports Queue/DropTail/Mark (--mark_k). MSS 1460 + 40 header bytes, initial window 2, no SACK, no delayed ACK, no
#   limited transmit (singledup_ 0), min RTO 200 ms, initial RTO 1 s (SYN and SYN-ACK too),
#   receive buffer 1 MB (window scale 4).
# - Seed: $defaultRNG seeds from --seed (ns-2's TCP timer phase, boot_time_) and the
#   elephants' start times come from a stream of it. Nothing reads the clock.
#
# Output (--out): a text file, one record per line, fields separated by spaces:
#   P key value                      every option as used
#   A epoch round server time_s      one per completed answer (request -> last byte in order)
#   R epoch round start_s end_s      one per completed round
#   W flow delivered_bytes           per elephant, when the window opens (duration_s -
#                                    window_s; only if window_s is below duration_s)
#   L flow src dst start_s delivered_bytes timeouts      one per elephant, at the end
#   S server timeouts syn_retries    per incast pair, at the end (over all its connections)
#   D port drops                     drops of every switch and host port with at least one
#   F port rewrites synacks fins resets flows_at_end     per FairQ port
#   M port marks                     ECN marks of every marking port with at least one
#   X sim_end_s rounds_done answers_done                 last line
#
# Diagnostic traces of the port core->tor4 (opt-in, off by default; they change no result),
# each over [--trace_start_s, --trace_end_s]:
#   --trace_queue FILE  one line every --trace_interval_s (0.1 ms): "time pkts bytes drops
#                       n W w q_avg slow_start rewrites": the packets and bytes waiting in the
#                       queue (a QueueMonitor), the port's drops since the start of the run and,
#                       with --fairq 1, the FairQ state (`fairq-state`; zeros without FairQ)
#   --trace_pkts FILE   ns-2's queue trace of the link core->tor4 (+ - d r records; flow ids
#                       are 0, agents are told apart by their src.port / dst.port addresses)
#   --trace_acks FILE   with --fairq 1, every TCP packet coming in from tor4 to core after
#                       FairQ's rewrite (FairQProbe lines "ack time uid size seqno flags conn
#                       has_wnd wnd wscale"), and the same line ("in ...") before it

# ------------------------------------------------------------------ options
array set cfg {
    out             fairq_incast.txt
    seed            1
    cc              cubic
    fairq           0
    rate_mbps       1000
    delay_us        30
    limit_pkts      350
    mark_k          0
    host_buffer_pkts 1000
    mss_bytes       1460
    header_bytes    40
    init_cwnd_pkts  2
    rcv_buf_bytes   1000000
    wscale          -1
    min_rto_s       0.2
    max_rto_s       60
    initial_rto_s   1.0
    tcp_tick_s      0.00001
    servers         126
    clients         6
    server_bytes    11776
    rounds          1000
    epochs          1
    epoch_interval_s 0
    start_s         0.01
    gap_s           0
    elephants       0
    elephant_start_max_s 0.01
    duration_s      600
    window_s        0
    fq_interval_s   0.001
    fq_update_ticks 8
    fq_target_fraction 0.25
    fq_buffer_bytes 0
    fq_gain         1.0
    fq_avg_samples  32
    fq_sample_interval_s 48e-6
    fq_idle_reset_s 1.0
    fq_min_window   0
    fq_max_window   65535
    fq_slow_start   1
    fq_trace_interval_s 0
    trace_queue     ""
    trace_pkts      ""
    trace_acks      ""
    trace_start_s   0
    trace_end_s     0
    trace_interval_s 0.0001
}
foreach {k v} $argv {
    set k [string trimleft $k -]
    if {![info exists cfg($k)]} { puts stderr "fairq_incast.tcl: unknown option --$k"; exit 2 }
    set cfg($k) $v
}
if {$cfg(fq_buffer_bytes) == 0} {
    set cfg(fq_buffer_bytes) [expr {$cfg(limit_pkts) * ($cfg(mss_bytes) + $cfg(header_bytes))}]
}

set ns [new Simulator]
$defaultRNG seed $cfg(seed)
set startRng [new RNG]

set out [open $cfg(out) w]
fconfigure $out -buffering full -buffersize 1048576
foreach k [lsort [array names cfg]] { puts $out "P $k $cfg($k)" }

# ------------------------------------------------------------------ agents' defaults
Agent/TCP set packetSize_          [expr {int($cfg(mss_bytes))}]
Agent/TCP set tcpip_base_hdr_size_ [expr {int($cfg(header_bytes))}]
Agent/TCP set window_              [expr {int($cfg(rcv_buf_bytes) / $cfg(mss_bytes))}]
Agent/TCP set windowInit_          [expr {int($cfg(init_cwnd_pkts))}]
Agent/TCP set windowInitOption_    1
Agent/TCP set syn_                 true
Agent/TCP set delay_growth_        true
Agent/TCP set minrto_              $cfg(min_rto_s)
Agent/TCP set maxrto_              $cfg(max_rto_s)
Agent/TCP set rtxcur_init_         $cfg(initial_rto_s)
Agent/TCP set tcpTick_             $cfg(tcp_tick_s)
Agent/TCP set timestamps_          false
Agent/TCP set maxburst_            0
Agent/TCP set singledup_           0
Agent/TCPSink set packetSize_      [expr {int($cfg(header_bytes))}]
Agent/TCPSink/Rwnd set rcv_buf_    [expr {int($cfg(rcv_buf_bytes))}]
Agent/TCPSink/Rwnd set wscale_     [expr {int($cfg(wscale))}]
Agent/TCPSink/Rwnd set mss_        [expr {int($cfg(mss_bytes))}]
Agent/TCPSink/Rwnd set syn_rto_    $cfg(initial_rto_s)

Queue/DropTail/FairQ set interval_         $cfg(fq_interval_s)
Queue/DropTail/FairQ set update_ticks_     $cfg(fq_update_ticks)
Queue/DropTail/FairQ set target_fraction_  $cfg(fq_target_fraction)
Queue/DropTail/FairQ set buffer_bytes_     $cfg(fq_buffer_bytes)
Queue/DropTail/FairQ set gain_             $cfg(fq_gain)
Queue/DropTail/FairQ set avg_samples_      $cfg(fq_avg_samples)
Queue/DropTail/FairQ set sample_interval_  $cfg(fq_sample_interval_s)
Queue/DropTail/FairQ set idle_reset_       $cfg(fq_idle_reset_s)
Queue/DropTail/FairQ set min_window_       $cfg(fq_min_window)
Queue/DropTail/FairQ set max_window_       $cfg(fq_max_window)
Queue/DropTail/FairQ set slow_start_       $cfg(fq_slow_start)
Queue/DropTail/FairQ set header_bytes_     $cfg(header_bytes)
Queue/DropTail/FairQ set mss_              $cfg(mss_bytes)
Queue/DropTail set queue_in_bytes_ false
Queue/DropTail set drop_front_ false

set dctcp 0
switch $cfg(cc) {
    reno    { set tcpClass Agent/TCP/Reno/Rwnd;    set cubic 0 }
    newreno { set tcpClass Agent/TCP/Newreno/Rwnd; set cubic 0 }
    cubic   { set tcpClass Agent/TCP/Newreno/Rwnd; set cubic 1 }
    dctcp   { set tcpClass Agent/TCP/Newreno/Rwnd; set cubic 0; set dctcp 1 }
    default { puts stderr "fairq_incast.tcl: --cc must be reno, newreno, cubic or dctcp"; exit 2 }
}
if {$dctcp && $cfg(mark_k) <= 0} { puts stderr "fairq_incast.tcl: --cc dctcp needs --mark_k K"; exit 2 }
if {$cfg(mark_k) > 0 && $cfg(fairq)} { puts stderr "fairq_incast.tcl: --mark_k with --fairq 1 is not run"; exit 2 }
Agent/TCPSink/Rwnd set dctcp_ $dctcp
Queue/DropTail/Mark set mark_k_ [expr {int($cfg(mark_k))}]

# ------------------------------------------------------------------ topology
set rate  "[expr {$cfg(rate_mbps) * 1e6}]"
set delay "[expr {$cfg(delay_us) * 1e-6}]"
set swLimit   [expr {int($cfg(limit_pkts)) + 1}]
set hostLimit [expr {int($cfg(host_buffer_pkts)) + 1}]

set core [$ns node]
set nodeName($core) core
for {set r 1} {$r <= 4} {incr r} {
    set tor($r) [$ns node]
    set nodeName($tor($r)) tor$r
    for {set h 1} {$h <= 7} {incr h} {
        set host(r${r}h$h) [$ns node]
        set nodeName($host(r${r}h$h)) r${r}h$h
    }
}
set links {}
proc link2 {a b qab qba limab limba} {
    global ns rate delay links
    $ns simplex-link $a $b $rate $delay $qab
    $ns simplex-link $b $a $rate $delay $qba
    $ns queue-limit $a $b $limab
    $ns queue-limit $b $a $limba
    lappend links [list $a $b] [list $b $a]
}
# switch ports: DropTail, or DropTail with DCTCP's marking threshold (--mark_k)
set swQ [expr {$cfg(mark_k) > 0 ? "DropTail/Mark" : "DropTail"}]
for {set r 1} {$r <= 4} {incr r} {
    for {set h 1} {$h <= 7} {incr h} {
        link2 $host(r${r}h$h) $tor($r) DropTail $swQ $hostLimit $swLimit
    }
}
set coreQ [expr {$cfg(fairq) ? "DropTail/FairQ" : $swQ}]
for {set r 1} {$r <= 4} {incr r} {
    link2 $core $tor($r) $coreQ $swQ $swLimit $swLimit
}

# splice a connector at the tail of link a->b (after its delay and TTL checker)
proc splice {a b obj} {
    global ns
    set ttl [[$ns link $a $b] set ttl_]
    $obj target [$ttl target]
    $ttl target $obj
}
set fqPorts {}
if {$cfg(fairq)} {
    for {set r 1} {$r <= 4} {incr r} {
        set q [[$ns link $core $tor($r)] queue]
        set ing [new FairQIngress]
        $ing port $q
        splice $tor($r) $core $ing
        lappend fqPorts [list core->tor$r $q]
    }
}

# drop counters on every port (called only on drops)
set nullAgent [$ns set nullAgent_]
foreach l $links {
    lassign $l a b
    set m [new QueueMonitor]
    set sd [new SnoopQueue/Drop]
    $sd set-monitor $m
    $sd target $nullAgent
    [[$ns link $a $b] set drophead_] target $sd
    set dropMon($nodeName($a)->$nodeName($b)) $m
    set portQ($nodeName($a)->$nodeName($b)) [[$ns link $a $b] queue]
}

# ------------------------------------------------------------------ workload
set src {}
foreach r {1 2 3} { for {set h 1} {$h <= 7} {incr h} { lappend src r${r}h$h } }
set dst {}
for {set c 1} {$c <= $cfg(clients)} {incr c} { lappend dst r4h$c }
set nsrc [llength $src]
set ndst [llength $dst]

proc pair {s d bytes} {
    global ns tcpClass cubic dctcp
    set t [new $tcpClass]
    $t set cubic_ $cubic
    if {$dctcp} { $t set dctcp_ 1; $t set ecn_ 1 }
    $t set answer_bytes_ $bytes
    set k [new Agent/TCPSink/Rwnd]
    $ns attach-agent $s $t
    $ns attach-agent $d $k
    $ns connect $t $k
    return [list $t $k]
}

set nServers [expr {int($cfg(servers))}]
for {set i 0} {$i < $nServers} {incr i} {
    set sh [lindex $src [expr {$i % $nsrc}]]
    set ch [lindex $dst [expr {($i / $nsrc) % $ndst}]]
    lassign [pair $host($sh) $host($ch) [expr {int($cfg(server_bytes))}]] snd($i) sink($i)
    set serverOf($sink($i)) $i
    set conn($i) 0
}

set nEle [expr {int($cfg(elephants))}]
for {set j 0} {$j < $nEle} {incr j} {
    set sh [lindex $src [expr {$j % $nsrc}]]
    set dh r4h[expr {($j % 7) + 1}]
    lassign [pair $host($sh) $host($dh) -1] esnd($j) esink($j)
    set eStart($j) [$startRng uniform 0 $cfg(elephant_start_max_s)]
    set eName($j) "$sh $dh"
    $ns at $eStart($j) "$esink($j) request 1 -1"
}

# the elephants' goodput window: [duration_s - window_s, duration_s] (window_s 0: the whole run)
proc window_open {} {
    global nEle esink out
    for {set j 0} {$j < $nEle} {incr j} { puts $out "W $j [$esink($j) delivered]" }
}
if {$nEle > 0 && $cfg(window_s) > 0 && $cfg(window_s) < $cfg(duration_s)} {
    $ns at [expr {$cfg(duration_s) - $cfg(window_s)}] window_open
}

# ------------------------------------------------------------------ incast rounds
set epoch 0
set round 0
set pending 0
set roundStart 0
set roundsDone 0
set answersDone 0
set incastDone [expr {$nServers == 0 || $cfg(rounds) == 0 || $cfg(epochs) == 0}]

proc start_round {} {
    global nServers sink conn cfg pending roundStart ns
    set roundStart [$ns now]
    set pending $nServers
    for {set i 0} {$i < $nServers} {incr i} {
        incr conn($i)
        $sink($i) request $conn($i) [expr {int($cfg(server_bytes))}]
    }
}

Agent/TCPSink/Rwnd instproc done {c t} {
    global serverOf epoch round pending out answersDone
    if {![info exists serverOf($self)]} { return }
    puts $out "A $epoch $round $serverOf($self) $t"
    incr answersDone
    incr pending -1
    if {$pending == 0} { round_done }
}

proc round_done {} {
    global ns cfg epoch round roundStart roundsDone out incastDone nEle
    set now [$ns now]
    puts $out "R $epoch $round $roundStart $now"
    incr roundsDone
    incr round
    if {$round < $cfg(rounds)} {
        $ns at [expr {$now + $cfg(gap_s)}] start_round
        return
    }
    set round 0
    incr epoch
    if {$epoch < $cfg(epochs)} {
        set t [expr {$cfg(start_s) + $epoch * $cfg(epoch_interval_s)}]
        set t2 [expr {$now + $cfg(gap_s)}]
        if {$t2 > $t} { set t $t2 }
        $ns at $t start_round
        return
    }
    set incastDone 1
    if {$nEle == 0} { $ns at-now finish }
}

if {!$incastDone} { $ns at $cfg(start_s) start_round }

# ------------------------------------------------------------------ FairQ state trace
proc fq_trace {} {
    global ns fqPorts cfg out
    foreach p $fqPorts {
        lassign $p name q
        if {$name eq "core->tor4"} { puts $out "Q [$ns now] [$q fairq-state]" }
    }
    $ns at [expr {[$ns now] + $cfg(fq_trace_interval_s)}] fq_trace
}
if {$cfg(fairq) && $cfg(fq_trace_interval_s) > 0} { $ns at 0 fq_trace }

# ------------------------------------------------------------------ diagnostic traces
set trOn [expr {$cfg(trace_end_s) > $cfg(trace_start_s)}]
if {$trOn && $cfg(trace_queue) ne ""} {
    set trQmon [$ns monitor-queue $core $tor(4) 0]
    set trQf [open $cfg(trace_queue) w]
    fconfigure $trQf -buffering full -buffersize 1048576
    set trQ [[$ns link $core $tor(4)] queue]
    proc trace_queue_sample {} {
        global ns cfg trQmon trQf trQ dropMon
        set st "0 0 0 0 0 0"
        if {$cfg(fairq)} { set st [$trQ fairq-state] }
        puts $trQf "[format %.6f [$ns now]] [$trQmon set pkts_] [$trQmon set size_] [$dropMon(core->tor4) set pdrops_] $st"
        set nxt [expr {[$ns now] + $cfg(trace_interval_s)}]
        if {$nxt <= $cfg(trace_end_s) + 1e-9} { $ns at $nxt trace_queue_sample } else { flush $trQf }
    }
    $ns at $cfg(trace_start_s) trace_queue_sample
}
if {$trOn && $cfg(trace_pkts) ne ""} {
    set trPf [open $cfg(trace_pkts) w]
    fconfigure $trPf -buffering full -buffersize 1048576
    $ns trace-queue $core $tor(4) $trPf
    set trLink [$ns link $core $tor(4)]
    foreach part {enqT_ deqT_ drpT_ rcvT_} { [$trLink set $part] detach }
    proc trace_pkts_on {on} {
        global trLink trPf
        foreach part {enqT_ deqT_ drpT_ rcvT_} {
            if {$on} { [$trLink set $part] attach $trPf } else { [$trLink set $part] detach }
        }
        if {!$on} { flush $trPf }
    }
    $ns at $cfg(trace_start_s) "trace_pkts_on 1"
    $ns at $cfg(trace_end_s) "trace_pkts_on 0"
}
if {$trOn && $cfg(trace_acks) ne "" && $cfg(fairq)} {
    set trIng [[$ns link $tor(4) $core] set ttl_]
    set trIngress [$trIng target]
    # before the rewrite: between the TTL checker and FairQIngress; after it: behind FairQIngress
    set trPin [new FairQProbe]
    $trPin target $trIngress
    $trIng target $trPin
    set trPout [new FairQProbe]
    $trPout target [$trIngress target]
    $trIngress target $trPout
    exec rm -f $cfg(trace_acks)
    $ns at $cfg(trace_start_s) "$trPin open $cfg(trace_acks) in; $trPout open $cfg(trace_acks) ack"
    $ns at $cfg(trace_end_s) "$trPin close; $trPout close"
}

# ------------------------------------------------------------------ end
proc finish {} {
    global ns out nEle esnd esink eStart eName nServers snd sink dropMon portQ fqPorts roundsDone answersDone cfg
    for {set j 0} {$j < $nEle} {incr j} {
        puts $out "L $j $eName($j) $eStart($j) [$esink($j) delivered] [$esnd($j) timeouts]"
    }
    for {set i 0} {$i < $nServers} {incr i} {
        puts $out "S $i [$snd($i) timeouts] [$sink($i) set syn_retries_]"
    }
    foreach p [lsort [array names dropMon]] {
        set d [$dropMon($p) set pdrops_]
        if {$d > 0 || $p eq "core->tor4"} { puts $out "D $p $d" }
    }
    if {$cfg(mark_k) > 0} {
        foreach p [lsort [array names portQ]] {
            if {[$portQ($p) info class] eq "Queue/DropTail/Mark"} {
                set mk [$portQ($p) set marks_]
                if {$mk > 0 || $p eq "core->tor4"} { puts $out "M $p $mk" }
            }
        }
    }
    foreach p $fqPorts {
        lassign $p name q
        puts $out "F $name [$q set rewrites_] [$q set synacks_] [$q set fins_] [$q set resets_] [$q set flows_]"
    }
    puts $out "X [$ns now] $roundsDone $answersDone"
    close $out
    exit 0
}
$ns at $cfg(duration_s) finish
$ns run
