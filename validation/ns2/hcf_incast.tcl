# hcf_incast.tcl -- the HCF paper's TCP incast (section V-A, figures 2 and 3) in ns-2.35,
# mirroring scenarios/papers/hcf/incast_{typical,nextgen,fixed}.toml.
#
# A client (r0) requests a block from N servers at once; each server answers on its own
# persistent TCP Reno connection; the next request leaves when the last answer has reached the
# client in order. All links run at one rate; the switch port towards the client is the
# bottleneck (FIFO = DropTail, or Queue/HCF of the project's module build).
#
# Usage:
#   ns hcf_incast.tcl [--key value ...]          (keys and defaults: `options` below)
#   --qdisc droptail|hcf   hcf needs out/peers/ns2/bin/ns (validation/ns2/build.py)
#   --servers N --block_bytes B (split over the servers) | --server_bytes S (each), --rounds R
#   --trace PATH           the result file (below); "none": only the summary on stdout
#
# Settings (the TOMLs'): typical  --rate_mbps 1000  --delay_us 25 --block_bytes 1000000
#                        nextgen  --rate_mbps 10000 --delay_us 5  --block_bytes 80000000
#                        fixed    --rate_mbps 1000  --delay_us 25 --block_bytes 0 --server_bytes 10000 --hcf_bins 128
#
# Model (choices where the TOMLs leave ns-2 open):
# * nodes: 0 switch, 1 client r0, 2 .. N+1 servers s0 .. s<N-1> (server i on node i+2).
# * TCP: Agent/TCP/Reno + Agent/TCPSink (one ACK per packet), packetSize_ = mss (960):
#   1000-byte packets. Persistent connections open one after another before the first
#   request: server i at i x start_s / N sends ns-2's one-way "SYN" (syn_ true, a 40-byte
#   segment 0, cwnd 1 until it is acknowledged, then windowInit_ = init_cwnd; its RTT sample
#   sets the RTO to its minimum): the TOML's handshake = true.
# * An answer is ceil(bytes / mss) whole segments: ns-2's one-way TCP sends whole segments
#   only, so the last one is full-size (at most mss - 1 bytes more than the TOML's answer).
# * A request is instantaneous: the servers start answering at the moment the client issues
#   it (at start_s, then gap_s after the last answer of the previous request reached the
#   client). No request packet is simulated.
# * Buffers count waiting packets (the one in transmission not counted), as dcfair's
#   limit_pkts: DropTail limit_ = limit + 1, HCF limit_ = limit (validation/ns2/README.md).
#   Host NIC queues (servers' and client's) hold host_buffer_pkts.
# * The run ends when the last request's last answer is complete, or at duration_s.
#
# Result file (--trace), one record a line:
#   # key value                       header: every option, ns version
#   S fid node open_s                 server fid's connection opens (its SYN leaves)
#   Q round t                         request `round` (1-based) issued at t
#   A round fid t                     server fid's answer to `round` complete at the client
#   R round t_request t_done          round complete (its last answer)
#   r t from to type size flags fid src dst seq uid   arrival at r0 over the bottleneck
#   d t from to type size flags fid src dst seq uid   drop at the bottleneck queue
#   F fid ndatapack nrexmitpack nrexmit   per server, at the end
#   E t rounds_completed              end
# From it: block goodput = block x 8 x rounds / sum(t_done - t_request); drops = d records
# (every packet lost at the bottleneck, data and SYNs); a flow's starvation times = the gaps
# between its consecutive r records (from its S time, to E).
# stdout: one summary line "incast rounds R of R, block_goodput_bps G, drops D".

array set cfg {
    qdisc             droptail
    seed              1
    servers           16
    block_bytes       1000000
    server_bytes      0
    rounds            20
    start_s           0.01
    gap_s             0.0
    duration_s        60.0
    rate_mbps         1000.0
    delay_us          25.0
    limit_pkts        32
    host_buffer_pkts  1000
    mss_bytes         960
    header_bytes      40
    rcv_window_pkts   66
    init_cwnd_pkts    2
    min_rto_s         0.2
    max_rto_s         60.0
    initial_rto_s     3.0
    tcp_tick_s        0.01
    hcf_bins          16
    hcf_credits       1
    hcf_hp_fraction   0.5
    hcf_swap          1
    hcf_zero_on_lp    1
    hcf_period_us     0
    hcf_hashes        1
    trace             none
}

proc usage {msg} {
    global cfg
    puts stderr "hcf_incast.tcl: $msg"
    puts stderr "usage: ns hcf_incast.tcl \[--key value ...\]; keys and defaults:"
    foreach k [lsort [array names cfg]] { puts stderr "  --$k $cfg($k)" }
    exit 2
}
if {[llength $argv] % 2} { usage "options come in --key value pairs" }
foreach {k v} $argv {
    set key [string range $k 2 end]
    if {![string match --* $k] || ![info exists cfg($key)]} { usage "unknown option '$k'" }
    set cfg($key) $v
}
foreach k [array names cfg] {
    if {$k in {qdisc trace}} continue
    if {![string is double -strict $cfg($k)]} { usage "--$k must be a number, got '$cfg($k)'" }
}
if {$cfg(qdisc) ni {droptail hcf}} { usage "--qdisc must be droptail or hcf" }
if {$cfg(qdisc) eq "hcf" && [catch {Queue/HCF info vars}]} {
    puts stderr "hcf_incast.tcl: --qdisc hcf needs the module build of ns-2.35 (Queue/HCF): out/peers/ns2/bin/ns"
    exit 2
}
set N [expr {int($cfg(servers))}]
if {$N < 1} { usage "--servers must be >= 1" }
if {($cfg(block_bytes) > 0) == ($cfg(server_bytes) > 0)} { usage "give exactly one of --block_bytes and --server_bytes" }
if {$cfg(rounds) < 1} { usage "--rounds must be >= 1" }
if {$cfg(seed) < 1 || $cfg(seed) != int($cfg(seed))} { usage "--seed must be an integer >= 1" }

# bytes per answer and per block, segments per answer
set mss [expr {int($cfg(mss_bytes))}]
if {$cfg(block_bytes) > 0} {
    set block [expr {wide($cfg(block_bytes))}]
    set answer [expr {($block + $N - 1) / $N}]
} else {
    set answer [expr {wide($cfg(server_bytes))}]
    set block [expr {$answer * $N}]
}
set segs [expr {($answer + $mss - 1) / $mss}]
set pktBytes [expr {$mss + int($cfg(header_bytes))}]

set ns [new Simulator]
global defaultRNG
$defaultRNG seed [expr {int($cfg(seed))}]

set tracing [expr {$cfg(trace) ne "none" && $cfg(trace) ne ""}]
if {$tracing} {
    if {[catch {set tf [open $cfg(trace) w]} err]} { puts stderr "hcf_incast.tcl: $err"; exit 2 }
    fconfigure $tf -buffering full -buffersize 1048576
    puts $tf "# format dcfair-ns2-hcf-incast-1"
    puts $tf "# ns_version [ns-version]"
    foreach k [lsort [array names cfg]] {
        if {[string match hcf_* $k] && $cfg(qdisc) ne "hcf"} continue
        puts $tf "# $k $cfg($k)"
    }
    puts $tf "# answer_bytes $answer"
    puts $tf "# answer_segments $segs"
    puts $tf "# block_bytes_used $block"
}

# ---------------------------------------------------------------- TCP defaults
Agent/TCP set packetSize_          $mss
Agent/TCP set tcpip_base_hdr_size_ [expr {int($cfg(header_bytes))}]
Agent/TCP set window_              [expr {int($cfg(rcv_window_pkts))}]
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
Agent/TCPSink set packetSize_      [expr {int($cfg(header_bytes))}]

# ---------------------------------------------------------------- topology
set rate  [expr {$cfg(rate_mbps) * 1e6}]
set delay [expr {$cfg(delay_us) * 1e-6}]
set hostLimit [expr {int($cfg(host_buffer_pkts)) + 1}]
set limit [expr {int($cfg(limit_pkts))}]
set sw  [$ns node]
set rcv [$ns node]
switch $cfg(qdisc) {
    droptail {
        set qtype DropTail
        set nsLimit [expr {$limit + 1}]
        Queue/DropTail set queue_in_bytes_ false
        Queue/DropTail set drop_front_ false
    }
    hcf {
        set qtype HCF
        set nsLimit $limit
        Queue/HCF set bins_        [expr {int($cfg(hcf_bins))}]
        Queue/HCF set credits_     [expr {int($cfg(hcf_credits))}]
        Queue/HCF set hp_fraction_ $cfg(hcf_hp_fraction)
        Queue/HCF set swap_        [expr {$cfg(hcf_swap) ? "true" : "false"}]
        Queue/HCF set zero_on_lp_  [expr {$cfg(hcf_zero_on_lp) ? "true" : "false"}]
        Queue/HCF set period_      [expr {$cfg(hcf_period_us) * 1e-6}]
        Queue/HCF set hashes_      [expr {int($cfg(hcf_hashes))}]
        Queue/HCF set seed_        [expr {int($cfg(seed))}]
    }
}
if {$tracing} { puts $tf "# ns_queue_limit $nsLimit" }
$ns simplex-link $sw $rcv $rate $delay $qtype
$ns queue-limit $sw $rcv $nsLimit
$ns simplex-link $rcv $sw $rate $delay DropTail
$ns queue-limit $rcv $sw $hostLimit
set bnLink [$ns link $sw $rcv]

proc attach_rd_trace {link chan from to} {
    global ns
    set dropT [$ns create-trace Drop $chan $from $to ""]
    set head [$link set drophead_]
    $dropT target [$head target]
    $head target $dropT
    set recvT [$ns create-trace Recv $chan $from $to ""]
    set ttl [$link set ttl_]
    $recvT target [$ttl target]
    $ttl target $recvT
}
if {$tracing} { attach_rd_trace $bnLink $tf $sw $rcv }

for {set i 0} {$i < $N} {incr i} {
    set srv($i) [$ns node]
    $ns duplex-link $srv($i) $sw $rate $delay DropTail
    $ns queue-limit $srv($i) $sw $hostLimit
    $ns queue-limit $sw $srv($i) $hostLimit
}

# ---------------------------------------------------------------- client side
# The client's application on each sink counts the bytes TCPSink hands it in order (ns-2's
# Application::recv upcall): the SYN's 40 bytes, then 1000 per data segment.
Class Application/IncastClient -superclass Application
Application/IncastClient instproc init {fid} {
    $self next
    $self instvar fid_ got_ want_
    set fid_ $fid
    set got_ 0
    set want_ -1
}
Application/IncastClient instproc expect {bytes} {
    $self instvar want_
    set want_ $bytes
}
Application/IncastClient instproc recv {nbytes} {
    $self instvar fid_ got_ want_
    incr got_ $nbytes
    if {$want_ >= 0 && $got_ >= $want_} {
        set want_ -1
        answer_done $fid_
    }
}

set round 0
set pending 0
set roundTimes {}
set synBytes [expr {int($cfg(header_bytes))}]
for {set i 0} {$i < $N} {incr i} {
    set tcp($i) [new Agent/TCP/Reno]
    $tcp($i) set fid_ $i
    $ns attach-agent $srv($i) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $rcv $sink($i)
    $ns connect $tcp($i) $sink($i)
    set app($i) [new Application/IncastClient $i]
    $app($i) attach-agent $sink($i)
    $app($i) start
    set open($i) [expr {$i * $cfg(start_s) / $N}]
    # the SYN alone: advance to segment 0, which syn_ turns into the 40-byte SYN, and take
    # back the segment the SYN moved ahead
    $ns at $open($i) "$tcp($i) advanceby 1; $tcp($i) advanceby -1"
    if {$tracing} { puts $tf [format "S %d %d %.9f" $i [$srv($i) id] $open($i)] }
}

proc request {} {
    global ns N tcp app round pending segs synBytes pktBytes tracing tf tRequest
    incr round
    set pending $N
    set tRequest [$ns now]
    if {$tracing} { puts $tf [format "Q %d %.9f" $round $tRequest] }
    for {set i 0} {$i < $N} {incr i} {
        $app($i) expect [expr {$synBytes + $round * $segs * $pktBytes}]
        $tcp($i) advanceby $segs
    }
}

proc answer_done {fid} {
    global ns round pending tracing tf tRequest roundTimes cfg
    set now [$ns now]
    if {$tracing} { puts $tf [format "A %d %d %.9f" $round $fid $now] }
    incr pending -1
    if {$pending == 0} {
        lappend roundTimes [expr {$now - $tRequest}]
        if {$tracing} { puts $tf [format "R %d %.9f %.9f" $round $tRequest $now] }
        if {$round >= int($cfg(rounds))} {
            $ns at $now finish
        } else {
            $ns at [expr {$now + $cfg(gap_s)}] request
        }
    }
}

proc finish {} {
    global ns tf tracing tcp N roundTimes block
    set done [llength $roundTimes]
    set total 0.0
    foreach t $roundTimes { set total [expr {$total + $t}] }
    set goodput [expr {$total > 0 ? $block * 8.0 * $done / $total : 0}]
    set drops 0
    if {$tracing} {
        for {set i 0} {$i < $N} {incr i} {
            puts $tf [format "F %d %d %d %d" $i [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_]]
        }
        puts $tf [format "E %.9f %d" [$ns now] $done]
        flush $tf
        close $tf
    }
    puts [format "incast rounds %d, block_goodput_bps %.6g, sim_time_s %.6f" $done $goodput [$ns now]]
    exit 0
}

$ns at $cfg(start_s) request
$ns at $cfg(duration_s) finish
$ns run
