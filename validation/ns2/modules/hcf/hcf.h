/* -*- Mode:C++; c-basic-offset:8; tab-width:8; indent-tabs-mode:t -*- */
/*
 * Queue/HCF: Hashed Credits Fair, an ns-2.35 queue discipline of the dcfair project,
 * written from the text of the HCF paper alone (/work/shared/papers, paper 000: "HCF
 * (Hashed Credits Fair)", sections III and IV; its Algorithm 1). Built into ns-2.35 by
 * validation/ns2/build.py; defaults in hcf.tcl; the rules, parameters and decisions are
 * documented at the top of hcf.cc.
 */

#ifndef dcfair_hcf_h
#define dcfair_hcf_h

#include <stdint.h>
#include "queue.h"

class HCFQueue;

/* Queue::length() and byteLength() read pq_: this view reports both queues together, so
 * that ns-2 code asking a Queue for its length sees every packet HCF holds. */
class HCFLengthView : public PacketQueue {
public:
	HCFLengthView(HCFQueue* q) : owner_(q) {}
	virtual int length() const;
	virtual int byteLength() const;
private:
	HCFQueue* owner_;
};

class HCFQueue : public Queue {
	friend class HCFLengthView;
public:
	HCFQueue();
	virtual ~HCFQueue();
protected:
	virtual void enque(Packet*);
	virtual Packet* deque();
	virtual int command(int argc, const char*const* argv);

	/* --- parameters (bound Tcl variables, defaults in hcf.tcl) --- */
	int bins_;		/* K, number of credit bins */
	int c0_;		/* c0, initial credits per bin ("credits_") */
	double hp_fraction_;	/* share of limit_ (B) for the HP queue */
	int swap_;		/* section III-D queue swap at each new period */
	int zero_on_lp_;	/* Algorithm 1: c(k) <- 0 when p joins LP */
	double period_;		/* 0: dynamic period; > 0: fixed period (s) */
	int hashes_;		/* hash functions per packet (section IV-A) */
	int rehash_;		/* new hash function at each period */
	int hash_mode_;		/* 0: 4-tuple, 1: fid_, 2: fid_ mod K (tests) */
	int seed_;		/* seeds the hash functions' salts */

	/* --- counters (bound, for scripts and checks) --- */
	int arrivals_, hp_arrivals_, lp_arrivals_, drops_;
	int departures_, hp_departures_, lp_departures_;
	int periods_;		/* priority periods started after the first */
	int merges_;		/* fixed periods that appended LP to HP */

	/* --- state --- */
	PacketQueue q_[2];	/* the two physical FIFO queues */
	int hp_;		/* index in q_ of the queue in the HP role */
	int* credits_;		/* c(k), k = 0 .. nbins_ - 1 */
	int nbins_;		/* bins allocated (follows bins_) */
	uint64_t salt_;		/* current hash function's salt */
	uint64_t salt_state_;	/* generator of the salts */
	int salted_;		/* salt_state_ seeded from seed_ yet? */
	double next_boundary_;	/* fixed period: next boundary time (s) */
	int64_t boundary_idx_;	/* fixed period: index of next_boundary_ */
	HCFLengthView view_;

	PacketQueue& hp() { return q_[hp_]; }
	PacketQueue& lp() { return q_[1 - hp_]; }
	int hp_cap() const;
	void prepare(double now);
	void new_period();
	void next_salt();
	int bin_of(Packet* p, int j) const;
	uint64_t flow_key(Packet* p, uint64_t* second) const;
};

#endif
