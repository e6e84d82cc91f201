/* -*- Mode:C++; c-basic-offset:8; tab-width:8; indent-tabs-mode:t -*- */
/*
 * Queue/HCF -- Hashed Credits Fair in ns-2.35 (dcfair project, validation/ns2/modules/hcf).
 *
 * Written from the HCF paper's text alone (paper 000 of /work/shared/papers: "HCF (Hashed
 * Credits Fair)", section III "Hashed Credits Fair (HCF) algorithm", its Algorithm 1, and
 * section IV "Implementation alternatives"), as an independent second implementation.
 *
 * ------------------------------------------------------------------------------------------
 * RULES (paper section of each)
 *
 *  R1 (III-A, III-B)  The port's buffer of B packets (ns-2 limit_) is divided into two FIFO
 *     queues, High-Priority (HP) and Low-Priority (LP); "the sizes of the HP and LP queues can
 *     be B/2 each. Other buffer divisions are possible" -> hp_fraction_. HP is always served
 *     first.
 *  R2 (III-B "Initialization", Algorithm 1 init)  At the start of each priority period every
 *     bin's credit is reset, c(k) = c0 for 0 <= k <= K-1, and a new hash function f is picked.
 *  R3 (III-B "Packet arrival" 1-4, Algorithm 1 arrive)  k = f(p). If c(k) > 0 and HP is not
 *     full, p joins HP and c(k) <- c(k) - 1. Otherwise, if LP is not full, p joins LP and
 *     c(k) <- 0 (step 4, footnote 1: absent from the conference version; zero_on_lp_).
 *     Otherwise p (the arriving packet) is dropped.
 *  R4 (III-B "Packet departure", Algorithm 1 transmit)  If HP is not empty its head leaves;
 *     if HP was serviced and is now empty, the priority period ends and R2 runs. Else LP's
 *     head leaves (serving LP never ends a period). So a period "lasts until at least one HP
 *     packet has been serviced and the HP queue is empty again" (dynamic period).
 *  R5 (III-D, Theorem 1)  At each new priority period the queues swap roles: LP becomes HP and
 *     HP (empty) becomes LP (swap_). With R3's LP rule this never reorders the packets of a
 *     flow; without the swap, or without the LP rule, reordering is possible (III-D's example,
 *     footnote 1) -- those settings exist only to reproduce the paper's earlier versions.
 *  R6 (IV-C)  Fixed priority period (period_ > 0): credits are reset and a new hash function
 *     taken at predetermined periodic times instead of when HP empties.
 *  R7 (IV-A)  Bloom-counter variant (hashes_ > 1, conservative update): p is mapped to
 *     hashes_ bins; if at least one has a credit, p joins HP (if not full) and every one of its
 *     bins with a positive credit is decremented; else LP. hashes_ = 1 is R3 exactly.
 *  R8 (III-B, IV-D)  The hash inputs are the source/destination addresses and ports; "each
 *     priority period uses a unique hashing function" (rehash_); IV-D suggests XOR-ing the
 *     header with the period's start time stamp.
 *
 * PARAMETERS (bound Tcl variables of Queue/HCF; defaults in hcf.tcl)
 *
 *   limit_        packets  B, the buffer shared by HP and LP (ns-2 Queue's own; set with
 *                          `$ns queue-limit`). Counts packets waiting: as for every ns-2
 *                          Queue, the packet being transmitted has left the queue.     [50]
 *   bins_         bins     K, number of credit bins                                      [20]
 *   credits_      packets  c0, initial credits per bin (one credit admits one packet)     [1]
 *   hp_fraction_  -        HP's share of B: HP holds floor(hp_fraction_ * B + 0.5)
 *                          packets, LP the rest                                         [0.5]
 *   swap_         bool     R5, swap the queues at each new period                          [1]
 *   zero_on_lp_   bool     R3 step 4, c(k) <- 0 when p joins LP                            [1]
 *   period_       s        0: dynamic period (R4); > 0: fixed period of this length (R6)   [0]
 *   hashes_       -        hash functions per packet, 1 .. 16 (R7; 1 = Algorithm 1)        [1]
 *   rehash_       bool     a new hash function at each period (R2, R8)                     [1]
 *   hash_mode_    -        what identifies a flow: 0 = IP 4-tuple (saddr, sport, daddr,
 *                          dport), 1 = ns-2's fid_, 2 = fid_ mod K with no hashing (a test
 *                          mode with a known bin per flow; check.tcl)                      [0]
 *   seed_         -        seeds the hash functions (set it from the run's seed)           [1]
 * Counters (read with `$q set NAME`): arrivals_, hp_arrivals_, lp_arrivals_, drops_,
 *   departures_, hp_departures_, lp_departures_, periods_ (periods begun after the first),
 *   merges_ (fixed-period boundaries that found HP non-empty, D5).
 * Commands: `$q hp-length`, `$q lp-length` (packets), `$q hp-index` (0/1: which physical
 *   queue is HP: it changes at each swap), `$q credit K` (c(K) now).
 *
 * DECISIONS WHERE THE PAPER IS SILENT OR UNREADABLE
 *
 *  D1 Flow identity: the IP 4-tuple of ns-2's IP header (addresses and ports), because the
 *     paper hashes exactly these (III-B, Algorithm 1: f(p.srcIP, p.destIP, p.srcPort,
 *     p.destPort)) and a switch sees nothing else; ns-2's fid_ is a simulation label with no
 *     counterpart in a real header (it is what the scripts use to *measure* flows). Every
 *     ns-2 TCP/UDP agent has its own port, so distinct agents are distinct flows; with the
 *     dcfair scripts each flow also has its own sender node. hash_mode_ 1 hashes fid_ instead.
 *  D2 The hash function: SplitMix64's finalizer (a "real hash function", V-B-1) over the
 *     4-tuple packed in two 64-bit words, salted: h = mix(mix(A ^ salt) ^ B ^ j*phi) for the
 *     j-th function (R7), bin = h mod K. The salt of each period is the next value of a
 *     SplitMix64 sequence seeded from seed_, in place of IV-D's time stamp: a new, unrelated
 *     function every period, and runs reproducible from the run's seed (no clock).
 *  D3 Buffer: B counts waiting packets (ns-2's convention). The two sizes belong to the
 *     *roles*: after a swap the queue that becomes HP gets the HP size. A queue "is full" when
 *     it holds at least its size; an arrival is also refused when B packets wait in total.
 *     That last test never binds with B/2 each and dynamic periods (after a swap the new HP
 *     holds at most LP's size and the new LP is empty); it keeps the total within B when the
 *     sizes differ (hp_fraction_ != 0.5) or after a fixed-period merge (D5).
 *  D4 Credits count packets (III-B assumes fixed-size packets); the byte-based credits that
 *     step 3 mentions for variable sizes are not implemented.
 *  D5 Fixed period with swap: III-D swaps when a dynamic period ends, i.e. when HP is empty.
 *     At a fixed boundary HP may still hold packets, and both keeping the roles and swapping
 *     could then let new HP packets overtake older packets of the same flow. At a fixed
 *     boundary the LP queue is therefore appended to the tail of the HP queue (one link of two
 *     lists in hardware): HP empty, this is exactly the swap; HP not empty, order is kept.
 *     Boundaries are at t = n * period_ (n = 1, 2, ...) from time 0 and are applied at the
 *     first arrival or departure at or after them (nothing can observe the state in between;
 *     several boundaries without a packet event in between count in periods_ but act once).
 *     With a fixed period HP's emptying ends nothing; with swap_ 0 a boundary only renews the
 *     credits and the hash function.
 *  D6 The first period starts at time 0 with every bin at c0 and the first hash function.
 *  D7 In ns-2 a packet arriving at an idle port is enqueued and dequeued at once
 *     (Queue::recv): it passes through HP if its bin has a credit (taking it), and its
 *     departure empties HP, which starts a new period (R4), before its transmission.
 *  D8 Unreadable in the text extraction: the bin range "0<k<K-—1" is read 0 <= k <= K-1;
 *     "c(k) = co" is c0; IV-A's optimal number of hash functions ("K& N-10g2") is not used:
 *     hashes_ is a parameter.
 *  D9 Changing bins_ during a run resets every credit to c0; changing credits_ takes effect at
 *     the next period; changing seed_ after the first packet has no effect.
 *
 * check.tcl (with check.py) verifies R3-R5 packet by packet on hand-computed cases, the
 * accounting (arrived = departed + dropped + queued), and that no flow is reordered under every
 * variant that keeps R3's LP rule and R5's swap (and that it is without the LP rule).
 * ------------------------------------------------------------------------------------------
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcf.h"
#include "ip.h"
#include "scheduler.h"

static class HCFQueueClass : public TclClass {
public:
	HCFQueueClass() : TclClass("Queue/HCF") {}
	TclObject* create(int, const char*const*) { return (new HCFQueue); }
} class_hcf_queue;

static const uint64_t PHI = 0x9e3779b97f4a7c15ULL;

/* SplitMix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer. */
static inline uint64_t mix64(uint64_t z)
{
	z += PHI;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int HCFLengthView::length() const
{
	return owner_->q_[0].length() + owner_->q_[1].length();
}

int HCFLengthView::byteLength() const
{
	return owner_->q_[0].byteLength() + owner_->q_[1].byteLength();
}

HCFQueue::HCFQueue()
	: arrivals_(0), hp_arrivals_(0), lp_arrivals_(0), drops_(0),
	  departures_(0), hp_departures_(0), lp_departures_(0), periods_(0), merges_(0),
	  hp_(0), credits_(0), nbins_(0), salt_(0), salt_state_(0), salted_(0),
	  next_boundary_(0), boundary_idx_(0), view_(this)
{
	bind("bins_", &bins_);
	bind("credits_", &c0_);
	bind("hp_fraction_", &hp_fraction_);
	bind_bool("swap_", &swap_);
	bind_bool("zero_on_lp_", &zero_on_lp_);
	bind("period_", &period_);
	bind("hashes_", &hashes_);
	bind_bool("rehash_", &rehash_);
	bind("hash_mode_", &hash_mode_);
	bind("seed_", &seed_);
	bind("arrivals_", &arrivals_);
	bind("hp_arrivals_", &hp_arrivals_);
	bind("lp_arrivals_", &lp_arrivals_);
	bind("drops_", &drops_);
	bind("departures_", &departures_);
	bind("hp_departures_", &hp_departures_);
	bind("lp_departures_", &lp_departures_);
	bind("periods_", &periods_);
	bind("merges_", &merges_);
	pq_ = &view_;
}

HCFQueue::~HCFQueue()
{
	delete[] credits_;
}

static void hcf_fail(const char* what)
{
	fprintf(stderr, "Queue/HCF: %s\n", what);
	exit(1);
}

/* R1/D3: HP's size, in packets. */
int HCFQueue::hp_cap() const
{
	int c = (int)floor(hp_fraction_ * qlim_ + 0.5);
	if (c < 0)
		c = 0;
	if (c > qlim_)
		c = qlim_;
	return c;
}

void HCFQueue::next_salt()
{
	salt_state_ += PHI;
	salt_ = mix64(salt_state_);
}

/* Everything the parameters decide, brought up to date before each packet event: the
 * salt sequence (D2, D6), the bins (D9) and, for a fixed period, the boundaries passed (D5). */
void HCFQueue::prepare(double now)
{
	if (bins_ < 1)
		hcf_fail("bins_ must be >= 1");
	if (c0_ < 0)
		hcf_fail("credits_ must be >= 0");
	if (hp_fraction_ < 0 || hp_fraction_ > 1)
		hcf_fail("hp_fraction_ must be in [0, 1]");
	if (hashes_ < 1 || hashes_ > 16)
		hcf_fail("hashes_ must be in 1 .. 16");
	if (hash_mode_ < 0 || hash_mode_ > 2)
		hcf_fail("hash_mode_ must be 0, 1 or 2");
	if (!salted_) {
		salt_state_ = mix64((uint64_t)(uint32_t)seed_ ^ 0x484346ULL);
		next_salt();
		salted_ = 1;
	}
	if (bins_ != nbins_) {
		delete[] credits_;
		nbins_ = bins_;
		credits_ = new int[nbins_];
		for (int k = 0; k < nbins_; k++)
			credits_[k] = c0_;
	}
	if (period_ > 0) {
		if (boundary_idx_ == 0)
			boundary_idx_ = 1;
		if (now >= boundary_idx_ * period_) {
			/* n = the last boundary index at or before now */
			int64_t n = (int64_t)floor(now / period_);
			while ((double)(n + 1) * period_ <= now)
				n++;
			while (n > 0 && (double)n * period_ > now)
				n--;
			if (n >= boundary_idx_) {
				new_period();
				periods_ += (int)(n - boundary_idx_);
				boundary_idx_ = n + 1;
			}
		}
	}
}

/* R2 (+ R5, D5) */
void HCFQueue::new_period()
{
	periods_++;
	for (int k = 0; k < nbins_; k++)
		credits_[k] = c0_;
	if (rehash_)
		next_salt();
	if (swap_) {
		if (hp().length() == 0) {
			hp_ = 1 - hp_;
		} else {
			/* D5: only at a fixed-period boundary */
			Packet* p;
			while ((p = lp().deque()) != 0)
				hp().enque(p);
			merges_++;
		}
	}
}

/* D1: the flow's key, two 64-bit words. */
uint64_t HCFQueue::flow_key(Packet* p, uint64_t* second) const
{
	hdr_ip* ip = hdr_ip::access(p);
	if (hash_mode_ == 0) {
		*second = ((uint64_t)(uint32_t)ip->sport() << 32) | (uint32_t)ip->dport();
		return ((uint64_t)(uint32_t)ip->saddr() << 32) | (uint32_t)ip->daddr();
	}
	*second = 0;
	return (uint64_t)(uint32_t)ip->flowid();
}

/* R8/D2: the bin of p under the period's j-th hash function. */
int HCFQueue::bin_of(Packet* p, int j) const
{
	if (hash_mode_ == 2) {
		int f = hdr_ip::access(p)->flowid();
		return ((f % nbins_) + nbins_) % nbins_;
	}
	uint64_t b;
	uint64_t a = flow_key(p, &b);
	uint64_t h = mix64(mix64(a ^ salt_) ^ b ^ ((uint64_t)j * PHI));
	return (int)(h % (uint64_t)nbins_);
}

/* R3 (+ R7) */
void HCFQueue::enque(Packet* p)
{
	prepare(Scheduler::instance().clock());
	arrivals_++;
	int hpcap = hp_cap();
	int lpcap = qlim_ - hpcap;
	int total = hp().length() + lp().length();

	int bins[16];
	int n = hashes_;
	int credit = 0;
	for (int j = 0; j < n; j++) {
		bins[j] = bin_of(p, j);
		if (credits_[bins[j]] > 0)
			credit = 1;
	}
	if (credit && hp().length() < hpcap && total < qlim_) {
		hp().enque(p);
		hp_arrivals_++;
		for (int j = 0; j < n; j++)
			if (credits_[bins[j]] > 0)
				credits_[bins[j]]--;
	} else if (lp().length() < lpcap && total < qlim_) {
		lp().enque(p);
		lp_arrivals_++;
		if (zero_on_lp_)
			for (int j = 0; j < n; j++)
				credits_[bins[j]] = 0;
	} else {
		drops_++;
		drop(p);
	}
}

/* R4 */
Packet* HCFQueue::deque()
{
	prepare(Scheduler::instance().clock());
	Packet* p = hp().deque();
	if (p != 0) {
		hp_departures_++;
		departures_++;
		if (period_ <= 0 && hp().length() == 0)
			new_period();
		return p;
	}
	p = lp().deque();
	if (p != 0) {
		lp_departures_++;
		departures_++;
	}
	return p;
}

int HCFQueue::command(int argc, const char*const* argv)
{
	Tcl& tcl = Tcl::instance();
	if (argc == 2) {
		if (strcmp(argv[1], "hp-length") == 0) {
			tcl.resultf("%d", hp().length());
			return (TCL_OK);
		}
		if (strcmp(argv[1], "lp-length") == 0) {
			tcl.resultf("%d", lp().length());
			return (TCL_OK);
		}
		if (strcmp(argv[1], "hp-index") == 0) {
			tcl.resultf("%d", hp_);
			return (TCL_OK);
		}
	}
	if (argc == 3 && strcmp(argv[1], "credit") == 0) {
		int k = atoi(argv[2]);
		if (credits_ == 0 || k < 0 || k >= nbins_) {
			/* before the first packet every bin holds c0 */
			if (credits_ == 0 && k >= 0 && k < bins_) {
				tcl.resultf("%d", c0_);
				return (TCL_OK);
			}
			tcl.resultf("Queue/HCF credit: no bin %s", argv[2]);
			return (TCL_ERROR);
		}
		tcl.resultf("%d", credits_[k]);
		return (TCL_OK);
	}
	return (Queue::command(argc, argv));
}
