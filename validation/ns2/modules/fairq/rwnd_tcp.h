/*
 * TCP endpoints for the FairQ module: ns-2's one-way TCP made to carry what FairQ needs.
 *
 * ns-2.35's one-way TCP (Agent/TCP/Reno, Agent/TCP/Newreno + Agent/TCPSink) has no
 * receive-window field, no SYN/FIN flags and no connection identity; its FullTcp has flags
 * but no CUBIC and no window field either. FairQ reads SYN-ACK/FIN to count flows and
 * rewrites the window of ACKs, so these subclasses add exactly that and nothing else:
 *
 *   Agent/TCP/Reno/Rwnd, Agent/TCP/Newreno/Rwnd   (RwndTcp<Base>): the server / sender
 *   Agent/TCPSink/Rwnd                            (RwndSink): the client / receiver
 *
 * Connection model (one "answer" per connection, as Apache benchmark without keep-alive):
 *   1. the client (sink) sends a SYN (40 bytes, flag SYN, its window unscaled in the SYN as
 *      RFC 7323 says) at the request time: `$sink request CONN NBYTES`;
 *      it is retransmitted after syn_rto_ s, doubling, until the SYN-ACK arrives;
 *   2. the server (sender) receiving a SYN of a newer connection number resets itself (a new
 *      connection: slow start, fresh RTO estimate, initial window restored) and sends its
 *      segment 0 with ns-2's syn_ option: a 40-byte SYN-ACK (flags SYN|ACK), retransmitted
 *      by the ordinary RTO (initial value rtxcur_init_); a repeated SYN of the current
 *      connection, while the SYN-ACK is unacknowledged, resends the SYN-ACK at once;
 *   3. the client acknowledges it (the third packet of the handshake; the request itself is
 *      taken to ride on it), and every ACK of the client carries its receive window:
 *      field = min(65535, rcv_buf_ >> wscale_) with wscale_ in the reserved bits;
 *   4. the server sends NBYTES in ceil(NBYTES / packetSize_) segments, the last one short
 *      (its payload is the remainder), with FIN on the last one (a server that closes
 *      right after writing piggybacks its FIN); data segments carry flag ACK and no window;
 *   5. the client's ACK that first covers the last segment carries FIN|ACK (the client
 *      closes once it has the whole answer); the client then calls
 *      `$sink done CONN ANSWER_TIME` (a Tcl instproc the script defines), ANSWER_TIME being
 *      from its request to the arrival of the answer's last byte in order.
 *   NBYTES = -1 is a long-lived flow (no FIN, never done).
 *   Packets whose hdr_rwnd::conn_ is not the agent's current connection are dropped
 *   silently (a real host would not match their 4-tuple).
 *
 * The receive window at the sender (ns-2 counts windows in segments):
 *   - every acceptable ACK (ack >= the highest cumulative ACK seen, duplicates included)
 *     sets the window: RFC 9293 3.10.7.4 updates SND.WND when SND.WL1 < SEG.SEQ or
 *     (SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK); the client sends no data, so SEG.SEQ never
 *     changes and every acceptable ACK qualifies. (Linux's tcp_may_update_window would
 *     ignore a *shrinking* window on a duplicate ACK; not modelled.)
 *   - bytes = field << wscale; segments = floor((bytes + 2^wscale - 1) / MSS), at least 1.
 *     The "+ 2^wscale - 1" gives back the low bits the 16-bit field lost, so a window the
 *     switch set to exactly k MSS (k x 1460 >> 4 << 4 = k x 1460 - up to 15 bytes) is k
 *     segments, not k - 1: a real Linux sender would fill that window with a segment a few
 *     bytes short, an ns-2 sender can only send whole ones. At least 1: same reason (FairQ
 *     never writes less than one MSS here, fairq.h R4).
 *   - ns-2's send rule t_seqno_ <= highest_ack_ + min(cwnd, wnd) is the right-edge rule
 *     snd_nxt + MSS <= snd_una + min(cwnd, rwnd) in segments. There is no cwnd validation
 *     (a receiver-limited sender's cwnd keeps growing), as in ns-2 and the RFC 5681 sender;
 *     Linux 3.18 would hold cwnd near the flight (tcp_is_cwnd_limited).
 *
 * Congestion control: Reno (ns-2's RenoTcpAgent) or NewReno (NewRenoTcpAgent) unchanged;
 * with cubic_ 1 (only meaningful on Agent/TCP/Newreno/Rwnd) the window follows CUBIC,
 * written here from RFC 8312 / Linux's tcp_cubic.c behaviour (ns-2.35's own CUBIC lives in
 * Agent/TCP/Linux, which needs SACK and ignores the receive window, so it cannot be used):
 *   - slow start as ns-2 (cwnd += 1 per new ACK below ssthresh);
 *   - congestion avoidance: epoch start at the first CA ACK after a loss; K = cbrt((Wmax -
 *     cwnd) / C) if cwnd < Wmax, else K = 0 and the origin is cwnd; target = origin +
 *     C (t + dmin - K)^3 (dmin: the smallest RTT sample, as Linux's delay_min); cwnd grows
 *     by 1/cnt per ACK with cnt = cwnd / (target - cwnd) (100 cwnd if target <= cwnd; at
 *     most 20 before the first loss, as Linux); the TCP-friendly estimate Wtcp grows by
 *     alpha = 3 (1 - beta) / (1 + beta) per cwnd of ACKs and, when above cwnd, caps cnt at
 *     cwnd / (Wtcp - cwnd);
 *   - fast retransmit: w = min(cwnd, rwnd); fast convergence (Wmax = w (1 + beta) / 2 if
 *     w < Wmax, else w); ssthresh = max(2, floor(beta w)); cwnd = beta w (ns-2's NewReno
 *     then adds the duplicate-ACK inflation as usual);
 *   - timeout: ssthresh = max(2, floor(beta w)), cwnd = 1, Wmax forgotten (Linux resets
 *     CUBIC on entering Loss);
 *   - no HyStart (Linux 3.18 has it), no ECN.
 * With dctcp_ 1 (and ecn_ 1; for the reproductions' DCTCP baseline, not part of FairQ) the
 * sender is DCTCP over NewReno (RFC 8257 3.3, 3.5): data segments are ECT (ns-2's ecn_);
 * on every acceptable ACK the segments it acknowledges count as acked, and as marked if it
 * carries ECE; when the ACK passes the end of the observation window (snd_nxt when the
 * window opened) alpha = (1 - g) alpha + g marked / acked and a new window opens; an ECE
 * outside loss recovery, past the window of the previous reaction (snd_max then), sets
 * cwnd = ssthresh = max(2, cwnd - floor(cwnd alpha / 2)); ACKs with ECE and ACKs up to that
 * snd_max do not open cwnd. ns-2's RFC 3168 reaction is bypassed (the ECE bit is consumed
 * before the base agent sees the ACK). Loss: NewReno's halving. The client with dctcp_ 1
 * echoes in each ACK the CE bit of the segment it acknowledges (no delayed ACKs).
 *
 * Parameters (defaults in fairq.tcl):
 *   sender: cubic_ (0), cubic_c_ (0.4), cubic_beta_ (0.7), cubic_fast_convergence_ (1),
 *           cubic_tcp_friendly_ (1), dctcp_ (0), dctcp_g_ (1/16), dctcp_alpha_init_ (1),
 *           answer_bytes_ (-1: long-lived); read-only
 *           timeouts_total_ (RTO expirations over all its connections, SYN-ACK's included),
 *           stale_ (packets of old connections dropped), conn_.
 *   sink:   rcv_buf_ (bytes, 1000000), wscale_ (-1: the smallest shift that makes rcv_buf_
 *           fit 16 bits, as Linux and RFC 7323), mss_ (1460, to count segments), syn_rto_
 *           (1.0 s), dctcp_ (0), syn_retries_ (read-only), stale_.
 */

#ifndef ns_rwnd_tcp_h
#define ns_rwnd_tcp_h

#include "tcp.h"
#include "tcp-sink.h"
#include "timer-handler.h"
#include "fairq.h"

template <class Base>
class RwndTcp : public Base {
public:
	RwndTcp();
	virtual void recv(Packet*, Handler*);
	virtual void timeout(int tno);
	virtual int command(int argc, const char*const* argv);
protected:
	virtual void output_helper(Packet*);
	virtual void opencwnd();
	virtual void dupack_action();
	virtual void rtt_update(double tao);
	void start_connection(Packet* syn);
	void set_window(const hdr_rwnd* rh);
	void cubic_update();
	void cubic_loss(double w);

	int conn_;
	int answer_bytes_;	// bytes of each answer; -1 = long-lived
	int last_seq_;		// seqno of the last data segment of the answer (-1: none)
	int last_payload_;	// its payload
	double wnd_init_saved_;	// windowInit_ as configured (ns-2 lowers it after a SYN loss)
	int timeouts_total_;
	int stale_;

	int cubic_;
	double cubic_c_, cubic_beta_;
	int cubic_fast_convergence_, cubic_tcp_friendly_;
	double epoch_, K_, origin_, wmax_, wtcp_, ack_cnt_, min_rtt_;

	// DCTCP (dctcp_ 1, with ecn_ 1)
	void dctcp_ack(Packet* p);
	int dctcp_;
	double dctcp_g_, dctcp_alpha_init_, dctcp_alpha_;
	int d_acked_, d_marked_, d_window_end_, ecn_high_, cur_ece_, cur_ack_;
};

class RwndSink;

class RwndSynTimer : public TimerHandler {
public:
	RwndSynTimer(RwndSink* s) : s_(s) {}
protected:
	virtual void expire(Event*);
	RwndSink* s_;
};

class RwndSink : public TcpSink {
	friend class RwndSynTimer;
public:
	RwndSink(Acker* a);
	void recv(Packet*, Handler*);
	int command(int argc, const char*const* argv);
protected:
	virtual void add_to_ack(Packet*);
	void send_syn();
	int shift() const;

	int conn_;
	int segments_;		// data segments of the current answer (-1: long-lived)
	int done_;
	int fin_sent_;
	int established_;
	double t_request_;
	double syn_backoff_;

	int rcv_buf_;
	int wscale_;
	int mss_;
	double syn_rto_;
	int syn_retries_;
	int stale_;
	int dctcp_;		// echo each segment's CE in its ACK (RFC 8257 3.2, no delayed ACKs)
	int last_ce_;

	RwndSynTimer syn_timer_;
};

#endif
