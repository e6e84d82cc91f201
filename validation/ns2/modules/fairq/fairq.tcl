# Defaults of the FairQ module (fairq.h, rwnd_tcp.h), appended to ns-default.tcl by the
# module build. Units: seconds, bytes, packets as each variable says in fairq.h.

# The receive-window header (hdr_rwnd) the module's agents and the FairQ switch use.
add-packet-header Rwnd

# --- the switch port (fairq.h: R1..R8)
Queue/DropTail/FairQ set enabled_ true
Queue/DropTail/FairQ set interval_ 0.001 ;        # timer tick, s (RWNDQ: 1000 us)
Queue/DropTail/FairQ set update_ticks_ 8 ;        # M (RWNDQ: 8)
Queue/DropTail/FairQ set target_fraction_ 0.25 ;  # T = 1/4 of the buffer (RWNDQ: >> 2)
Queue/DropTail/FairQ set buffer_bytes_ 0 ;        # 0: limit_ x mean_pktsize_
Queue/DropTail/FairQ set gain_ 1.0 ;              # 1: the paper's prose (RWNDQ's code: T/(M MSS))
Queue/DropTail/FairQ set avg_samples_ 32 ;        # NetFPGA AVG_32; 1 = instantaneous
Queue/DropTail/FairQ set sample_interval_ 48e-6 ; # NetFPGA avg_queue_time, s
Queue/DropTail/FairQ set idle_reset_ 1.0 ;        # s without data before the count resets; 0 = never
Queue/DropTail/FairQ set min_window_ 0 ;          # bytes per flow; 0 = one MSS
Queue/DropTail/FairQ set max_window_ 65535 ;      # bytes per flow
Queue/DropTail/FairQ set slow_start_ true
Queue/DropTail/FairQ set header_bytes_ 40
Queue/DropTail/FairQ set mss_ 1460
Queue/DropTail/FairQ set rewrites_ 0
Queue/DropTail/FairQ set synacks_ 0
Queue/DropTail/FairQ set fins_ 0
Queue/DropTail/FairQ set resets_ 0
Queue/DropTail/FairQ set flows_ 0

# --- the endpoints (rwnd_tcp.h)
foreach cls {Agent/TCP/Reno/Rwnd Agent/TCP/Newreno/Rwnd} {
    $cls set conn_ 0
    $cls set answer_bytes_ -1
    $cls set timeouts_total_ 0
    $cls set stale_ 0
    $cls set cubic_ false
    $cls set cubic_c_ 0.4
    $cls set cubic_beta_ 0.7
    $cls set cubic_fast_convergence_ true
    $cls set cubic_tcp_friendly_ true
    $cls set dctcp_ false
    $cls set dctcp_g_ 0.0625
    $cls set dctcp_alpha_init_ 1.0
    $cls set dctcp_alpha_ 1.0
}
Agent/TCPSink/Rwnd set dctcp_ false
Agent/TCPSink/Rwnd set rcv_buf_ 1000000
Agent/TCPSink/Rwnd set wscale_ -1 ;     # -1: the smallest shift that fits rcv_buf_ in 16 bits
Agent/TCPSink/Rwnd set mss_ 1460
Agent/TCPSink/Rwnd set syn_rto_ 1.0
Agent/TCPSink/Rwnd set syn_retries_ 0
Agent/TCPSink/Rwnd set stale_ 0
Agent/TCPSink/Rwnd set conn_ 0
# The client's callback when an answer is complete (scripts redefine it).
Agent/TCPSink/Rwnd instproc done {conn t} {}
FairQIngress set debug_ false
FairQProbe set debug_ false
Queue/DropTail/Mark set mark_k_ 0
Queue/DropTail/Mark set marks_ 0
