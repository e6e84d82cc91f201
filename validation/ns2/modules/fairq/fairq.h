/*
 * FairQ ("FairSwitch" in its NetFPGA form, "RWNDQ" in the authors' earlier papers) for
 * ns-2.35: a switch that steers every TCP flow through an output port to an equal share of
 * a target buffer occupancy by lowering the receive window of the ACKs that flow back.
 *
 * Written for the dcfair project from the paper "FairQ: Fair and Fast Rate Allocation in
 * Data Centers" (paper 001; sections III, III-B, IV-C, IV-D, IV-E) and from reading the
 * authors' public Open vSwitch code (github.com/ahmedcs/RWNDQ, OVS/rwndq.c). No code or
 * text of either is copied here; where a rule comes from one of them it is cited below.
 *
 * ------------------------------------------------------------------------------------
 * How it attaches in ns-2 (our choice; the paper has no simulator model)
 * ------------------------------------------------------------------------------------
 * A FairQ switch port has two halves:
 *   - Queue/DropTail/FairQ (FairQueue): the port's *egress* queue, a DropTail FIFO that
 *     also keeps the port's FairQ state (flow count, windows, the averaged queue, the
 *     timers). It sees the data the port sends and the SYN-ACK / FIN that leave through it.
 *   - FairQIngress: a Connector spliced at the end of the link that *enters* the switch
 *     through the same port (after the link's delay and TTL checker, before the switch's
 *     classifier). It sees the ACKs that come back from the receivers behind the port and
 *     rewrites them with the port's window, and counts the SYN-ACKs that arrive there.
 * Why not one object: in ns-2 a packet carries no "input interface", so the egress queue of
 * port q cannot tell which port an ACK came in by; the link-tail connector knows it by
 * construction (paper III-A: the ACK's window is compared with "the current local window
 * value of the ingress queue"; RWNDQ: process_packet(skb, in, out) rewrites with the state
 * of the input device, whose output queue carries that flow's data). A classifier hook
 * would see packets of every port mixed. Why DropTail underneath: the paper's switch keeps
 * its FIFO (FairQ does not drop or mark; NetFPGA's store_pkt drops on overflow), so the
 * queue is exactly Queue/DropTail and FairQ only adds bookkeeping and the ACK rewrite.
 *
 * ------------------------------------------------------------------------------------
 * The rules (paper section in brackets)
 * ------------------------------------------------------------------------------------
 * R1 Flow counting [III-B "Flow Tracking", IV-E1]: a packet with SYN and ACK set counts
 *    one flow more at the port it comes in by AND at the port it leaves by ("increased by
 *    one for the incoming and outgoing queue, each time a SYN-ACK is received"). A packet
 *    with FIN or RST counts one flow less at the port it leaves by ("decreased by one for
 *    the outgoing direction of the FIN-ACK"); never below 0. Counting happens on arrival,
 *    before the queue may drop the packet (the NetFPGA module sits before store_pkt), so a
 *    retransmitted SYN-ACK or FIN counts again, as in the hardware. (RWNDQ's OVS code
 *    decrements the *input* device on FIN/RST instead; the paper's NetFPGA rule is used,
 *    since the paper's experiments ran on the NetFPGA.)
 * R2 Idle reset [IV-E1]: "This value is reset whenever no data packets is received from
 *    any of the active flows for enough period of time (i.e., 1 sec)": if no data packet
 *    (a TCP packet longer than its header) has arrived at the port for idle_reset_ seconds,
 *    the count drops to 0 (checked at every timer tick).
 * R3 First flow [III-A]: when the count goes from 0 to 1 the port's local window W is set
 *    to the target T (bytes) and, if slow_start_, the port enters slow start; the
 *    accumulator and the tick phase restart (RWNDQ does the same in update_dev).
 * R4 Equal share [III-A, IV-E1]: the per-flow window is w = W / n (integer bytes), recomputed
 *    whenever n changes and at every window update ("the current window is divided equally
 *    among all flows"; "re-calculated each time a new flow is observed or an existing flow
 *    leaves"). W is kept in [n * min_window, n * max_window] (RWNDQ clamps the same way at
 *    its updates, with 65535 and TCP_MIN_MSS per flow); we clamp at every recomputation.
 * R5 Averaged queue [IV-E2, AVG_32]: q is the mean of the last avg_samples_ (32) samples of
 *    the port's queue in bytes (waiting packets), one sample every sample_interval_ (48 us).
 *    avg_samples_ = 1 uses the instantaneous queue (RWNDQ's OVS code reads the backlog).
 * R6 Control law [III-A, Algorithm 1 as the text describes it]: every interval_ (a "tick"),
 *    while n > 0:
 *      - in slow start, if q >= T slow start ends (RWNDQ: backlog >= target);
 *      - out of slow start, incr += gain_ * MSS * (T - q) / T  ("the ratio [of the drift
 *        to the target] controls the fraction of the MSS added or subtracted");
 *    every update_ticks_ (M) ticks the window is updated: W += 2 MSS in slow start ("FairQ
 *    adds two MSS to the window"), else W += incr; then incr = 0 and R4 applies.
 *    MSS is the largest TCP payload seen at the port (III-A: "updates the maximum packet
 *    size seen so far"), 1460 bytes before any.
 *    (RWNDQ's code adds (T - q) bytes per tick and divides the sum by M at the update, i.e.
 *    a step of the mean drift per update: that is gain_ = T / (M * MSS) here, 11.24 for a
 *    350 x 1500-byte buffer. The default gain_ 1 is the paper's prose.)
 * R7 ACK rewrite [III-A, IV-E1]: an ACK (ACK flag set, carrying a receive window) that
 *    enters the switch by port p while p counts flows (n > 0) has its window compared with
 *    p's w: the advertised window is field << wscale; if w is smaller, the field becomes
 *    w >> wscale. The window is only ever lowered, never raised. Data segments carry no
 *    window here (below) and pass untouched; SYNs (no ACK flag) are never rewritten.
 * R8 Window scale [III-B "TCP Window Scaling", IV-C]: the scale factor is read from the
 *    packet's "reserved bits" (hdr_rwnd::wscale_), which the end-host helper module of IV-C
 *    fills from the receiver's negotiated shift. ns-2's TCP has no window field and no
 *    scaling at all: the endpoints of this module (rwnd_tcp.h) carry a 16-bit window field
 *    and its shift in hdr_rwnd, the switch lowers only the field (so the rewritten window
 *    loses the low `wscale` bits, as on the wire), and the ns-2 sender, which sends whole
 *    segments only, turns the window back into segments (rwnd_tcp.h says how).
 *
 * ------------------------------------------------------------------------------------
 * Parameters (Tcl, Queue/DropTail/FairQ; defaults in fairq.tcl)
 * ------------------------------------------------------------------------------------
 *   interval_          s      0.001   timer tick (RWNDQ: interval = 1000 us; the paper's
 *                                      table names it but its value is lost in the text)
 *   update_ticks_      ticks  8       M, ticks per window update (RWNDQ: M = 8)
 *   target_fraction_   -      0.25    T = target_fraction_ x buffer (RWNDQ: limit*MTU >> 2;
 *                                      NetFPGA: q_maxwords shifted by rwndq_threshold)
 *   buffer_bytes_      bytes  0       buffer B; 0 = limit_ x mean_pktsize_
 *   gain_              -      1.0     R6's step scale (1 = the paper's prose)
 *   avg_samples_       -      32      R5 (AVG_32); 1 = instantaneous queue
 *   sample_interval_   s      48e-6   R5 (avg_queue_time: 4 x 1500 B at 1 Gbit/s)
 *   idle_reset_        s      1.0     R2; 0 = never
 *   min_window_        bytes  0       per-flow floor; 0 = one MSS (the largest payload seen)
 *   max_window_        bytes  65535   per-flow ceiling (RWNDQ's 16-bit bound)
 *   slow_start_        bool   1       R3 ("(optionally) enters the slow-start phase")
 *   header_bytes_      bytes  40      TCP/IP header (payload = size - header)
 *   mss_               bytes  1460    MSS until a larger payload is seen
 *   enabled_           bool   1       0: a plain DropTail (no counting, no rewrite)
 * Counters (read-only): rewrites_, synacks_, fins_, resets_. Command `$q fairq-state`
 * returns "n W w q_avg slow_start rewrites".
 *
 * ------------------------------------------------------------------------------------
 * Where the paper is silent or unreadable, and what is done here
 * ------------------------------------------------------------------------------------
 * - Algorithm 1 and Table I lost their symbols in the text we have; R6 is the prose's
 *   reading; the timer value and M come from RWNDQ's code (1 ms, 8).
 * - Whether slow start is left on the averaged or the instantaneous queue: the averaged one
 *   (the NetFPGA decides "by the current average number of occupied words").
 * - The per-flow floor: RWNDQ's is TCP_MIN_MSS (88 B); ns-2 senders send whole segments, so
 *   a floor below one MSS would only mean "one segment" (or a stall); one MSS is used.
 * - Clamping W when n changes (RWNDQ clamps only at updates): done at every recomputation,
 *   so w never falls below the floor between updates.
 * - Which queue length: bytes of the packets waiting (ns-2's DropTail queue), not the one
 *   being serialized.
 * - ECMP division of the share (III-B "Role of SDN") is not needed: single paths only.
 * - The "overhead" variant (III-B: mark ACKs and let ToRs rewrite) is not modelled.
 */

#ifndef ns_fairq_h
#define ns_fairq_h

#include "packet.h"
#include "drop-tail.h"
#include "connector.h"
#include "timer-handler.h"
#include <stdio.h>

// TCP flag bits as on the wire (hdr_tcp::flags(), the field FullTcp also uses).
#define FQ_TH_FIN 0x01
#define FQ_TH_SYN 0x02
#define FQ_TH_RST 0x04
#define FQ_TH_ACK 0x10

/*
 * The receive-window part of a TCP header, which ns-2's hdr_tcp lacks.
 *   wnd_     the 16-bit "Receive Window" field (0..65535)
 *   wscale_  the shift the receiver negotiated, as the end-host helper writes it into the
 *            reserved bits (paper IV-C); the advertised window is wnd_ << wscale_
 *   has_wnd_ 1 if the packet carries a window the sender will read (the receiver's ACKs);
 *            0 for data segments of the one-way model and for stock ns-2 agents
 *   conn_    the connection incarnation: stands for the 4-tuple of a real connection so
 *            that an agent reused for a new connection ignores packets of its old one
 */
struct hdr_rwnd {
	int wnd_;
	int wscale_;
	int has_wnd_;
	int conn_;

	static int offset_;
	inline static int& offset() { return offset_; }
	inline static hdr_rwnd* access(const Packet* p) {
		return (hdr_rwnd*) p->access(offset_);
	}
	int advertised() const { return wnd_ << wscale_; }
};

class FairQueue;

class FairQTimer : public TimerHandler {
public:
	FairQTimer(FairQueue* q, int which) : q_(q), which_(which) {}
protected:
	virtual void expire(Event*);
	FairQueue* q_;
	int which_;	// 0: control tick, 1: queue sampler
};

class FairQueue : public DropTail {
	friend class FairQTimer;
	friend class FairQIngress;
public:
	FairQueue();
	~FairQueue();
protected:
	void enque(Packet*);
	int command(int argc, const char*const* argv);

	// R1: one flow more / less at this port
	void flow_in();
	void flow_out();
	// R7: rewrite an ACK that entered the switch by this port
	void rewrite(Packet*);
	// R4
	void recompute();
	void start_timers();
	void tick();
	void sample();
	double queue_measure() const;
	double target() const;
	double mss() const { return mss_seen_ > mss_ ? mss_seen_ : mss_; }
	int floor_window() const;

	// parameters
	int enabled_;
	double interval_;
	int update_ticks_;
	double target_fraction_;
	double buffer_bytes_;
	double gain_;
	int avg_samples_;
	double sample_interval_;
	double idle_reset_;
	int min_window_;
	int max_window_;
	int slow_start_;
	int header_bytes_;
	int mss_;

	// state
	int n_;			// flows counted (R1)
	double W_;		// local window of the port, bytes (R3, R6)
	int w_;			// per-flow window, bytes (R4)
	double incr_;		// accumulated increment (R6)
	int phase_;		// ticks since the last update
	int slow_;		// in slow start (R3, R6)
	int mss_seen_;		// largest payload seen
	double last_data_;	// time of the last data packet (R2)
	int timers_on_;
	double* ring_;		// R5 samples
	int ring_len_, ring_pos_, ring_fill_;
	double ring_sum_;

	// counters
	int rewrites_, synacks_, fins_, resets_;

	FairQTimer tick_timer_, sample_timer_;
};

/*
 * The ingress half of a FairQ port: spliced after the link that enters the switch by the
 * port (see the top of this file). `$ingress port $fairq_queue` names the port's queue.
 */
class FairQIngress : public Connector {
public:
	FairQIngress() : port_(0) {}
	void recv(Packet*, Handler*);
protected:
	int command(int argc, const char*const* argv);
	FairQueue* port_;
};

/*
 * Queue/DropTail/Mark: DropTail with DCTCP's switch side, for the reproductions' DCTCP
 * baseline (not part of FairQ): an ECN-capable packet that is stored is set CE when the
 * queue it finds (packets waiting) holds at least mark_k_ packets; a packet that does not
 * fit is dropped, not marked; Not-ECT packets are never marked. mark_k_ 0: no marking.
 */
class MarkQueue : public DropTail {
public:
	MarkQueue() : marks_(0) {
		bind("mark_k_", &mark_k_);
		bind("marks_", &marks_);
	}
protected:
	void enque(Packet*);
	int mark_k_;
	int marks_;
};

/*
 * FairQProbe: a test probe (check.tcl), not part of FairQ. Spliced anywhere on a path, it
 * writes one line per TCP packet that passes: "name time uid size seqno flags conn has_wnd
 * wnd wscale" (`$probe open FILE NAME`), and passes the packet on unchanged.
 */
class FairQProbe : public Connector {
public:
	FairQProbe() : out_(0) {}
	~FairQProbe();
	void recv(Packet*, Handler*);
protected:
	int command(int argc, const char*const* argv);
	FILE* out_;
	char name_[64];
};

#endif
