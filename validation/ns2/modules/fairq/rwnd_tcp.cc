/*
 * TCP endpoints for the FairQ module (the model is described in rwnd_tcp.h).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rwnd_tcp.h"
#include "flags.h"

// ------------------------------------------------------------------ sender

template <class Base>
RwndTcp<Base>::RwndTcp()
	: conn_(0), last_seq_(-1), last_payload_(0), wnd_init_saved_(-1), timeouts_total_(0),
	  stale_(0), epoch_(-1), K_(0), origin_(0), wmax_(0), wtcp_(0), ack_cnt_(0), min_rtt_(0),
	  dctcp_alpha_(1), d_acked_(0), d_marked_(0), d_window_end_(0), ecn_high_(-1), cur_ece_(0),
	  cur_ack_(-1)
{
	this->bind("conn_", &conn_);
	this->bind("answer_bytes_", &answer_bytes_);
	this->bind("timeouts_total_", &timeouts_total_);
	this->bind("stale_", &stale_);
	this->bind_bool("cubic_", &cubic_);
	this->bind("cubic_c_", &cubic_c_);
	this->bind("cubic_beta_", &cubic_beta_);
	this->bind_bool("cubic_fast_convergence_", &cubic_fast_convergence_);
	this->bind_bool("cubic_tcp_friendly_", &cubic_tcp_friendly_);
	this->bind_bool("dctcp_", &dctcp_);
	this->bind("dctcp_g_", &dctcp_g_);
	this->bind("dctcp_alpha_init_", &dctcp_alpha_init_);
	this->bind("dctcp_alpha_", &dctcp_alpha_);
}

// The window an ACK (or the client's SYN) advertises, in whole segments (rwnd_tcp.h).
template <class Base>
void RwndTcp<Base>::set_window(const hdr_rwnd* rh)
{
	double bytes = (double) rh->wnd_ * (double) (1 << rh->wscale_);
	double slack = (double) ((1 << rh->wscale_) - 1);
	int pk = (int) floor((bytes + slack) / this->size_);
	if (pk < 1)
		pk = 1;
	this->wnd_ = pk;
}

template <class Base>
void RwndTcp<Base>::start_connection(Packet* syn)
{
	hdr_rwnd* rh = hdr_rwnd::access(syn);
	if (wnd_init_saved_ < 0)
		wnd_init_saved_ = this->wnd_init_;
	timeouts_total_ += this->nrexmit_;
	conn_ = rh->conn_;
	this->wnd_init_ = wnd_init_saved_;	// ns-2 lowers it to 1 after a lost SYN
	this->dupwnd_ = 0;
	this->reset();				// new connection: slow start, fresh RTO estimate
	this->ssthresh_ = 1 << 30;		// no initial ssthresh (RFC 5681: arbitrarily high)
	set_window(rh);				// the SYN's (unscaled) window
	epoch_ = -1;
	wmax_ = 0;
	min_rtt_ = 0;
	dctcp_alpha_ = dctcp_alpha_init_;
	d_acked_ = d_marked_ = d_window_end_ = 0;
	ecn_high_ = -1;
	cur_ece_ = 0;
	cur_ack_ = -1;
	if (answer_bytes_ < 0) {
		last_seq_ = -1;
		this->sendmsg(-1);
	} else {
		int n = (answer_bytes_ + this->size_ - 1) / this->size_;
		if (n < 1)
			n = 1;
		last_seq_ = n;			// segment 0 is the SYN-ACK
		last_payload_ = answer_bytes_ - (n - 1) * this->size_;
		this->sendmsg(answer_bytes_);
	}
}

template <class Base>
void RwndTcp<Base>::recv(Packet* p, Handler* h)
{
	hdr_tcp* th = hdr_tcp::access(p);
	hdr_rwnd* rh = hdr_rwnd::access(p);
	int f = th->flags();
	if ((f & FQ_TH_SYN) && !(f & FQ_TH_ACK)) {
		// the client's SYN
		if (rh->conn_ > conn_)
			start_connection(p);
		else if (rh->conn_ == conn_ && this->highest_ack_ < 0 && this->maxseq_ >= 0)
			this->output(0, TCP_REASON_TIMEOUT);	// SYN-ACK again
		Packet::free(p);
		return;
	}
	if (rh->conn_ != conn_) {
		++stale_;
		Packet::free(p);
		return;
	}
	if (rh->has_wnd_ && th->seqno() >= this->highest_ack_ && th->seqno() <= this->maxseq_)
		set_window(rh);
	if (dctcp_)
		dctcp_ack(p);
	Base::recv(p, h);
}

// DCTCP's sender side (rwnd_tcp.h), before the base agent processes the ACK.
template <class Base>
void RwndTcp<Base>::dctcp_ack(Packet* p)
{
	hdr_flags* hf = hdr_flags::access(p);
	int ece = hf->ecnecho();
	hf->ecnecho() = 0;		// no RFC 3168 reaction in the base agent
	int ack = hdr_tcp::access(p)->seqno();
	cur_ece_ = ece;
	cur_ack_ = ack;
	if (ack < this->highest_ack_ || ack > this->maxseq_)
		return;
	int acked = ack - this->highest_ack_;
	if (acked > 0) {
		d_acked_ += acked;
		if (ece)
			d_marked_ += acked;
	}
	// window end at snd_nxt: passed (in bytes, strictly) when ack >= t_seqno_ then
	if (ack >= d_window_end_) {
		if (d_acked_ > 0)
			dctcp_alpha_ = (1 - dctcp_g_) * dctcp_alpha_ + dctcp_g_ * (double) d_marked_ / d_acked_;
		d_window_end_ = this->t_seqno_;
		d_acked_ = d_marked_ = 0;
	}
	if (ece && ack > ecn_high_ && ack >= this->recover_ && this->dupwnd_ == 0) {
		double c = this->cwnd_;
		double cut = floor(c * dctcp_alpha_ / 2);
		double nc = c - cut < 2 ? 2 : c - cut;
		this->cwnd_ = nc;
		this->ssthresh_ = (int) nc;
		ecn_high_ = this->maxseq_;
	}
}

template <class Base>
void RwndTcp<Base>::output_helper(Packet* p)
{
	hdr_tcp* th = hdr_tcp::access(p);
	hdr_rwnd* rh = hdr_rwnd::access(p);
	int seq = th->seqno();
	rh->conn_ = conn_;
	rh->has_wnd_ = 0;
	rh->wnd_ = 0;
	rh->wscale_ = 0;
	int f = FQ_TH_ACK;
	if (seq == 0 && this->syn_) {
		f |= FQ_TH_SYN;
	} else if (last_seq_ > 0 && seq == last_seq_) {
		f |= FQ_TH_FIN;
		if (last_payload_ < this->size_)
			hdr_cmn::access(p)->size() = last_payload_ + this->headersize();
	}
	th->flags() = f;
}

template <class Base>
void RwndTcp<Base>::rtt_update(double tao)
{
	if (tao > 0 && (min_rtt_ <= 0 || tao < min_rtt_))
		min_rtt_ = tao;
	Base::rtt_update(tao);
}

template <class Base>
void RwndTcp<Base>::opencwnd()
{
	if (dctcp_ && (cur_ece_ || cur_ack_ <= ecn_high_))
		return;		// DCTCP: no increase on ECE, nor until the cut window is acked
	if (!cubic_ || this->cwnd_ < this->ssthresh_)
		Base::opencwnd();
	else
		cubic_update();
}

template <class Base>
void RwndTcp<Base>::cubic_update()
{
	double now = Scheduler::instance().clock();
	double cwnd = this->cwnd_;
	if (epoch_ < 0) {
		epoch_ = now;
		wtcp_ = cwnd;
		if (wmax_ > cwnd) {
			K_ = cbrt((wmax_ - cwnd) / cubic_c_);
			origin_ = wmax_;
		} else {
			K_ = 0;
			origin_ = cwnd;
		}
	}
	double t = now - epoch_ + min_rtt_;
	double d = t - K_;
	double target = origin_ + cubic_c_ * d * d * d;
	double cnt = target > cwnd ? cwnd / (target - cwnd) : 100.0 * cwnd;
	if (wmax_ == 0 && cnt > 20)
		cnt = 20;
	if (cubic_tcp_friendly_) {
		double alpha = 3.0 * (1.0 - cubic_beta_) / (1.0 + cubic_beta_);
		wtcp_ += alpha / cwnd;
		if (wtcp_ > cwnd) {
			double maxcnt = cwnd / (wtcp_ - cwnd);
			if (cnt > maxcnt)
				cnt = maxcnt;
		}
	}
	if (cnt < 1)
		cnt = 1;
	this->cwnd_ = cwnd + 1.0 / cnt;
	if (this->maxcwnd_ && this->cwnd_ > this->maxcwnd_)
		this->cwnd_ = this->maxcwnd_;
}

template <class Base>
void RwndTcp<Base>::cubic_loss(double w)
{
	epoch_ = -1;
	if (cubic_fast_convergence_ && w < wmax_)
		wmax_ = w * (1.0 + cubic_beta_) / 2.0;
	else
		wmax_ = w;
}

template <class Base>
void RwndTcp<Base>::dupack_action()
{
	double w = this->cwnd_ < this->wnd_ ? (double) this->cwnd_ : this->wnd_;
	int cuts = this->ncwndcuts_;
	Base::dupack_action();
	if (cubic_ && this->ncwndcuts_ > cuts) {	// a fast retransmit happened
		cubic_loss(w);
		int s = (int) floor(cubic_beta_ * w);
		this->ssthresh_ = s < 2 ? 2 : s;
		this->cwnd_ = cubic_beta_ * w;
	}
}

template <class Base>
void RwndTcp<Base>::timeout(int tno)
{
	if (cubic_ && tno == TCP_TIMER_RTX && this->highest_ack_ < this->maxseq_) {
		double w = this->cwnd_ < this->wnd_ ? (double) this->cwnd_ : this->wnd_;
		Base::timeout(tno);
		int s = (int) floor(cubic_beta_ * w);
		this->ssthresh_ = s < 2 ? 2 : s;
		wmax_ = 0;
		epoch_ = -1;
	} else {
		Base::timeout(tno);
	}
}

template <class Base>
int RwndTcp<Base>::command(int argc, const char*const* argv)
{
	if (argc == 2 && strcmp(argv[1], "timeouts") == 0) {
		Tcl::instance().resultf("%d", timeouts_total_ + (int) this->nrexmit_);
		return (TCL_OK);
	}
	return (Base::command(argc, argv));
}

static class RwndRenoClass : public TclClass {
public:
	RwndRenoClass() : TclClass("Agent/TCP/Reno/Rwnd") {}
	TclObject* create(int, const char*const*) { return (new RwndTcp<RenoTcpAgent>()); }
} class_rwnd_reno;

static class RwndNewRenoClass : public TclClass {
public:
	RwndNewRenoClass() : TclClass("Agent/TCP/Newreno/Rwnd") {}
	TclObject* create(int, const char*const*) { return (new RwndTcp<NewRenoTcpAgent>()); }
} class_rwnd_newreno;

// ------------------------------------------------------------------ receiver

static class RwndSinkClass : public TclClass {
public:
	RwndSinkClass() : TclClass("Agent/TCPSink/Rwnd") {}
	TclObject* create(int, const char*const*) { return (new RwndSink(new Acker)); }
} class_rwnd_sink;

void RwndSynTimer::expire(Event*)
{
	if (s_->established_)
		return;
	++s_->syn_retries_;
	s_->syn_backoff_ *= 2;
	s_->send_syn();
	resched(s_->syn_rto_ * s_->syn_backoff_);
}

RwndSink::RwndSink(Acker* a)
	: TcpSink(a), conn_(0), segments_(-1), done_(1), fin_sent_(0), established_(0),
	  t_request_(0), syn_backoff_(1), syn_retries_(0), stale_(0), syn_timer_(this)
{
	bind("rcv_buf_", &rcv_buf_);
	bind("wscale_", &wscale_);
	bind("mss_", &mss_);
	bind_time("syn_rto_", &syn_rto_);
	bind("syn_retries_", &syn_retries_);
	bind("stale_", &stale_);
	bind("conn_", &conn_);
	bind_bool("dctcp_", &dctcp_);
	last_ce_ = 0;
}

int RwndSink::shift() const
{
	if (wscale_ >= 0)
		return wscale_;
	int s = 0;
	while ((rcv_buf_ >> s) > 65535 && s < 14)
		s++;
	return s;
}

void RwndSink::send_syn()
{
	Packet* p = allocpkt();
	hdr_tcp* th = hdr_tcp::access(p);
	th->seqno() = 0;
	th->ts() = Scheduler::instance().clock();
	th->flags() = FQ_TH_SYN;
	hdr_rwnd* rh = hdr_rwnd::access(p);
	rh->conn_ = conn_;
	rh->has_wnd_ = 1;
	rh->wnd_ = rcv_buf_ < 65535 ? rcv_buf_ : 65535;	// SYN windows are never scaled
	rh->wscale_ = 0;
	send(p, 0);
}

void RwndSink::add_to_ack(Packet* p)
{
	hdr_rwnd* rh = hdr_rwnd::access(p);
	int s = shift();
	rh->conn_ = conn_;
	rh->has_wnd_ = 1;
	rh->wscale_ = s;
	int field = rcv_buf_ >> s;
	rh->wnd_ = field < 65535 ? field : 65535;
	int f = FQ_TH_ACK;
	if (segments_ > 0 && !fin_sent_ && acker_->Seqno() >= segments_) {
		f |= FQ_TH_FIN;
		fin_sent_ = 1;
	}
	hdr_tcp::access(p)->flags() = f;
	if (dctcp_)
		hdr_flags::access(p)->ecnecho() = last_ce_;
}

void RwndSink::recv(Packet* p, Handler* h)
{
	hdr_rwnd* rh = hdr_rwnd::access(p);
	if (rh->conn_ != conn_) {
		++stale_;
		Packet::free(p);
		return;
	}
	if (hdr_tcp::access(p)->flags() & FQ_TH_SYN) {
		established_ = 1;
		syn_timer_.force_cancel();
	}
	hdr_flags* hf = hdr_flags::access(p);
	last_ce_ = (hf->ect() && hf->ce()) ? 1 : 0;
	TcpSink::recv(p, h);	// frees p
	if (!done_ && segments_ > 0 && acker_->Seqno() >= segments_) {
		done_ = 1;
		double t = Scheduler::instance().clock() - t_request_;
		Tcl::instance().evalf("%s done %d %.9f", name(), conn_, t);
	}
}

int RwndSink::command(int argc, const char*const* argv)
{
	Tcl& tcl = Tcl::instance();
	if (argc == 4 && strcmp(argv[1], "request") == 0) {
		conn_ = atoi(argv[2]);
		int nbytes = atoi(argv[3]);
		segments_ = nbytes < 0 ? -1 : (nbytes + mss_ - 1) / mss_;
		done_ = 0;
		fin_sent_ = 0;
		established_ = 0;
		TcpSink::reset();
		t_request_ = Scheduler::instance().clock();
		syn_backoff_ = 1;
		send_syn();
		syn_timer_.resched(syn_rto_);
		return (TCL_OK);
	}
	if (argc == 2 && strcmp(argv[1], "delivered") == 0) {
		// payload delivered in order (full segments; for long-lived flows)
		tcl.resultf("%.0f", (double) acker_->Seqno() * mss_);
		return (TCL_OK);
	}
	if (argc == 2 && strcmp(argv[1], "segments") == 0) {
		tcl.resultf("%d", acker_->Seqno());
		return (TCL_OK);
	}
	return (TcpSink::command(argc, argv));
}
