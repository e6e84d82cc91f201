/*
 * FairQ for ns-2.35: the switch side. The rules, parameters and choices are stated in
 * fairq.h (R1..R8); this file implements them and cites the rule at each step.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fairq.h"
#include "tcp.h"
#include "flags.h"

int hdr_rwnd::offset_;

static class RwndHeaderClass : public PacketHeaderClass {
public:
	RwndHeaderClass() : PacketHeaderClass("PacketHeader/Rwnd", sizeof(hdr_rwnd)) {
		bind_offset(&hdr_rwnd::offset_);
	}
} class_rwnd_hdr;

static class FairQueueClass : public TclClass {
public:
	FairQueueClass() : TclClass("Queue/DropTail/FairQ") {}
	TclObject* create(int, const char*const*) { return (new FairQueue); }
} class_fairq;

static class FairQIngressClass : public TclClass {
public:
	FairQIngressClass() : TclClass("FairQIngress") {}
	TclObject* create(int, const char*const*) { return (new FairQIngress); }
} class_fairq_ingress;

static class MarkQueueClass : public TclClass {
public:
	MarkQueueClass() : TclClass("Queue/DropTail/Mark") {}
	TclObject* create(int, const char*const*) { return (new MarkQueue); }
} class_mark_queue;

static class FairQProbeClass : public TclClass {
public:
	FairQProbeClass() : TclClass("FairQProbe") {}
	TclObject* create(int, const char*const*) { return (new FairQProbe); }
} class_fairq_probe;

void FairQTimer::expire(Event*)
{
	if (which_ == 0)
		q_->tick();
	else
		q_->sample();
}

FairQueue::FairQueue()
	: n_(0), W_(0), w_(0), incr_(0), phase_(0), slow_(0), mss_seen_(0), last_data_(0),
	  timers_on_(0), ring_(0), ring_len_(0), ring_pos_(0), ring_fill_(0), ring_sum_(0),
	  rewrites_(0), synacks_(0), fins_(0), resets_(0),
	  tick_timer_(this, 0), sample_timer_(this, 1)
{
	bind_bool("enabled_", &enabled_);
	bind_time("interval_", &interval_);
	bind("update_ticks_", &update_ticks_);
	bind("target_fraction_", &target_fraction_);
	bind("buffer_bytes_", &buffer_bytes_);
	bind("gain_", &gain_);
	bind("avg_samples_", &avg_samples_);
	bind_time("sample_interval_", &sample_interval_);
	bind_time("idle_reset_", &idle_reset_);
	bind("min_window_", &min_window_);
	bind("max_window_", &max_window_);
	bind_bool("slow_start_", &slow_start_);
	bind("header_bytes_", &header_bytes_);
	bind("mss_", &mss_);
	bind("rewrites_", &rewrites_);
	bind("synacks_", &synacks_);
	bind("fins_", &fins_);
	bind("resets_", &resets_);
	bind("flows_", &n_);
}

FairQueue::~FairQueue()
{
	delete[] ring_;
}

double FairQueue::target() const
{
	double b = buffer_bytes_ > 0 ? buffer_bytes_ : (double) qlim_ * mean_pktsize_;
	return target_fraction_ * b;
}

int FairQueue::floor_window() const
{
	return min_window_ > 0 ? min_window_ : (int) mss();
}

// R5: the averaged queue, or the instantaneous one with avg_samples_ <= 1 (or before the
// first sample).
double FairQueue::queue_measure() const
{
	if (avg_samples_ <= 1 || ring_fill_ == 0)
		return (double) q_->byteLength();
	return ring_sum_ / ring_fill_;
}

void FairQueue::start_timers()
{
	if (timers_on_)
		return;
	timers_on_ = 1;
	if (avg_samples_ > 1) {
		ring_len_ = avg_samples_;
		ring_ = new double[ring_len_];
		for (int i = 0; i < ring_len_; i++)
			ring_[i] = 0;
		sample_timer_.sched(sample_interval_);
	}
	tick_timer_.sched(interval_);
}

void FairQueue::sample()
{
	double v = (double) q_->byteLength();
	if (ring_fill_ == ring_len_)
		ring_sum_ -= ring_[ring_pos_];
	else
		ring_fill_++;
	ring_[ring_pos_] = v;
	ring_sum_ += v;
	ring_pos_ = (ring_pos_ + 1) % ring_len_;
	sample_timer_.resched(sample_interval_);
}

// R4: the per-flow share; W kept within [n x floor, n x ceiling].
void FairQueue::recompute()
{
	if (n_ <= 0) {
		w_ = 0;
		return;
	}
	double lo = (double) n_ * floor_window();
	double hi = (double) n_ * max_window_;
	if (W_ < lo)
		W_ = lo;
	if (W_ > hi)
		W_ = hi;
	w_ = (int) (W_ / n_);
}

// R1 (+1) and R3 (the first flow).
void FairQueue::flow_in()
{
	++synacks_;
	if (n_ == 0) {
		W_ = target();
		slow_ = slow_start_ ? 1 : 0;
		incr_ = 0;
		phase_ = 0;
		// R2 counts idleness from the moment the port has flows again
		last_data_ = Scheduler::instance().clock();
	}
	n_++;
	recompute();
}

// R1 (-1, never below 0).
void FairQueue::flow_out()
{
	++fins_;
	if (n_ > 0) {
		n_--;
		recompute();
	}
}

// R2, R5, R6: one control tick.
void FairQueue::tick()
{
	double now = Scheduler::instance().clock();
	tick_timer_.resched(interval_);
	if (n_ > 0 && idle_reset_ > 0 && now - last_data_ >= idle_reset_) {
		n_ = 0;		// R2
		++resets_;
		recompute();
	}
	if (n_ == 0)
		return;
	double T = target();
	double q = queue_measure();
	if (slow_ && q >= T)
		slow_ = 0;
	if (!slow_ && T > 0)
		incr_ += gain_ * mss() * (T - q) / T;
	if (++phase_ >= update_ticks_) {
		phase_ = 0;
		if (slow_)
			W_ += 2 * mss();
		else
			W_ += incr_;
		incr_ = 0;
		recompute();
	}
}

void FairQueue::enque(Packet* p)
{
	if (enabled_) {
		start_timers();
		hdr_tcp* th = hdr_tcp::access(p);
		int f = th->flags();
		hdr_cmn* ch = hdr_cmn::access(p);
		// R1: counted on arrival, before the FIFO may drop the packet
		if ((f & FQ_TH_SYN) && (f & FQ_TH_ACK))
			flow_in();
		if (f & (FQ_TH_FIN | FQ_TH_RST))
			flow_out();
		if (ch->ptype() == PT_TCP && ch->size() > header_bytes_) {
			last_data_ = Scheduler::instance().clock();	// R2
			int payload = ch->size() - header_bytes_;
			if (payload > mss_seen_)
				mss_seen_ = payload;
		}
	}
	DropTail::enque(p);
}

// R7, R8
void FairQueue::rewrite(Packet* p)
{
	if (!enabled_ || n_ <= 0)
		return;
	hdr_rwnd* rh = hdr_rwnd::access(p);
	if (w_ < rh->advertised()) {
		rh->wnd_ = w_ >> rh->wscale_;
		++rewrites_;
	}
}

int FairQueue::command(int argc, const char*const* argv)
{
	Tcl& tcl = Tcl::instance();
	if (argc == 2 && strcmp(argv[1], "fairq-state") == 0) {
		tcl.resultf("%d %.1f %d %.1f %d %d", n_, W_, w_, queue_measure(), slow_, rewrites_);
		return (TCL_OK);
	}
	return (DropTail::command(argc, argv));
}

void FairQIngress::recv(Packet* p, Handler* h)
{
	if (port_ != 0 && port_->enabled_) {
		hdr_tcp* th = hdr_tcp::access(p);
		int f = th->flags();
		// R1: a SYN-ACK counts at the port it comes in by, too
		if ((f & FQ_TH_SYN) && (f & FQ_TH_ACK)) {
			port_->start_timers();
			port_->flow_in();
		}
		// R7: ACKs carrying a window take the share of the port they came in by
		if ((f & FQ_TH_ACK) && hdr_rwnd::access(p)->has_wnd_)
			port_->rewrite(p);
	}
	send(p, h);
}

int FairQIngress::command(int argc, const char*const* argv)
{
	if (argc == 3 && strcmp(argv[1], "port") == 0) {
		port_ = (FairQueue*) TclObject::lookup(argv[2]);
		if (port_ == 0) {
			Tcl::instance().resultf("FairQIngress: no object %s", argv[2]);
			return (TCL_ERROR);
		}
		return (TCL_OK);
	}
	return (Connector::command(argc, argv));
}

FairQProbe::~FairQProbe()
{
	if (out_)
		fclose(out_);
}

void FairQProbe::recv(Packet* p, Handler* h)
{
	hdr_cmn* ch = hdr_cmn::access(p);
	if (out_ && (ch->ptype() == PT_TCP || ch->ptype() == PT_ACK)) {
		hdr_tcp* th = hdr_tcp::access(p);
		hdr_rwnd* rh = hdr_rwnd::access(p);
		fprintf(out_, "%s %.9f %d %d %d %d %d %d %d %d\n", name_,
			Scheduler::instance().clock(), ch->uid(), ch->size(), th->seqno(),
			th->flags(), rh->conn_, rh->has_wnd_, rh->wnd_, rh->wscale_);
	}
	send(p, h);
}

int FairQProbe::command(int argc, const char*const* argv)
{
	if (argc == 4 && strcmp(argv[1], "open") == 0) {
		out_ = fopen(argv[2], "a");
		if (out_ == 0) {
			Tcl::instance().resultf("FairQProbe: cannot open %s", argv[2]);
			return (TCL_ERROR);
		}
		strncpy(name_, argv[3], sizeof(name_) - 1);
		name_[sizeof(name_) - 1] = 0;
		return (TCL_OK);
	}
	if (argc == 2 && strcmp(argv[1], "close") == 0) {
		if (out_)
			fclose(out_);
		out_ = 0;
		return (TCL_OK);
	}
	return (Connector::command(argc, argv));
}

void MarkQueue::enque(Packet* p)
{
	hdr_flags* hf = hdr_flags::access(p);
	// DropTail stores the arrival iff length + 1 < qlim_ (packets mode)
	if (mark_k_ > 0 && hf->ect() && q_->length() + 1 < qlim_ && q_->length() >= mark_k_) {
		hf->ce() = 1;
		++marks_;
	}
	DropTail::enque(p);
}
