// dcfair's driver for htsim (Broadcom/csg-htsim): runs one dcfair point -- a network of ports,
// its TCP / MPTCP connections and each subflow's path -- in htsim's own transport (TcpSrc,
// TcpSink, MultipathTcpSrc) and queue models (Queue, RandomQueue, Pipe).
//
// The project's own code, written for dcfair (python/dcfair/peers/htsim.py writes its input and
// reads its output). It includes htsim's headers and links htsim's libhtsim.a; the compile line
// is in validation/htsim/README.md.
//
// Usage: dcfair_htsim INPUT OUTPUT       (dcfair_htsim --version prints the driver version)
//
// INPUT, one item per line (# starts a comment):
//   seed N                  srand(N): htsim's one RNG (rand, drand: LIA's rounding, RandomQueue)
//   end_s T                 simulated time
//   window_start_s T        the second snapshot of every counter (the first is at the end)
//   sample_s T              0, or the interval of the cwnd / delivered-bytes samples
//   pkt_bytes B             htsim's data packet size on the wire (Packet::set_packet_size)
//   init_cwnd_pkts N        TcpSrc::set_cwnd
//   ssthresh_pkts N         TcpSrc::set_ssthresh (the initial slow-start threshold)
//   min_rto_ms X            the RTO floor; -1 keeps htsim's own (250 ms, tcp.cpp)
//   init_rto_ms X           the RTO before the first RTT sample (htsim's own: 3000 ms)
//   scan_us X               period of htsim's TcpRtxTimerScanner
//   port ID RATE_BPS DELAY_US KIND LIMIT_PKTS LIMIT_BYTES
//       KIND: droptail (a FIFO dropping an arrival that finds LIMIT_PKTS packets waiting, or
//       that would take the waiting bytes past LIMIT_BYTES; the packet on the wire is not
//       counted, as in dcfair's DropTail; 0 = no such limit) or random (htsim's RandomQueue of LIMIT_BYTES bytes with its
//       3-packet random-drop band, as htsim's fat-tree builds it)
//   conn CID ALGO START_S   ALGO: tcp (one plain TcpSrc), lia (MultipathTcpSrc COUPLED_INC),
//                           uncoupled (UNCOUPLED), epsilon1 (COUPLED_EPSILON, epsilon 1)
//   sub FID CID N P1..PN M A1..AM   a subflow: its data path and its ACK path as port ids
//
// OUTPUT, one item per line:
//   driver VERSION
//   sub FID DELIV_T0 DELIV_END SENT_T0 SENT_END HIGHEST FASTRTX TIMEOUTS MAXGAP_S FIRST_S
//       bytes delivered in order to the sink (cumulative ACK less the SYN's byte), bytes the
//       source sent (retransmissions included), the highest byte ever sent, fast
//       retransmissions (htsim's _drops), timeouts, the longest gap between two arrivals at
//       the sink (from the start, to the end), the first arrival (-1: none)
//   port ID BYTES_T0 BYTES_END PKTS_T0 PKTS_END DROPS_T0 DROPS_END MAXQ_PKTS
//       what completed serialization; drops at this port; the most packets waiting (droptail)
//       or held (random)
//   sample T FID CWND_BYTES DELIVERED_BYTES

#define DCFAIR_HTSIM_DRIVER "2"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "mtcp.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "randomqueue.h"
#include "tcp.h"

using namespace std;

namespace {

struct Counters {
    uint64_t bytes = 0, pkts = 0, drops = 0, maxq = 0;
    uint64_t bytes_t0 = 0, pkts_t0 = 0, drops_t0 = 0;
    void snap() { bytes_t0 = bytes; pkts_t0 = pkts; drops_t0 = drops; }
};

// A FIFO with a packet limit and a byte limit, admitting as dcfair's DropTail does: an arrival
// is stored when the packets waiting (the one on the wire not counted) are fewer than the packet
// limit and it fits the byte limit beside them. htsim's Queue keeps the packet being serialized
// at the head of its buffer, and counts it.
class DcDropTail : public Queue {
public:
    DcDropTail(linkspeed_bps rate, uint64_t limit_pkts, uint64_t limit_bytes, EventList& ev)
        : Queue(rate, (mem_b)1 << 50, ev, NULL), _limit_pkts(limit_pkts), _limit_bytes(limit_bytes) {}
    void receivePacket(Packet& pkt) override {
        uint64_t wait_pkts = 0, wait_bytes = 0;
        if (!_enqueued.empty()) {
            wait_pkts = _enqueued.size() - 1;
            wait_bytes = _queuesize - _enqueued.back()->size();  // back(): the head, in service
        }
        if ((_limit_pkts && wait_pkts >= _limit_pkts) || (_limit_bytes && wait_bytes + pkt.size() > _limit_bytes)) {
            c.drops++;
            pkt.free();
            return;
        }
        Queue::receivePacket(pkt);
        if (wait_pkts + 1 > c.maxq) c.maxq = wait_pkts + 1;
    }
    Counters c;

protected:
    void completeService() override {
        mem_b before = _queuesize;
        Queue::completeService();
        c.bytes += before - _queuesize;
        c.pkts++;
    }

private:
    uint64_t _limit_pkts, _limit_bytes;
};

// htsim's RandomQueue, counted.
class DcRandom : public RandomQueue {
public:
    DcRandom(linkspeed_bps rate, mem_b limit_bytes, mem_b band, EventList& ev)
        : RandomQueue(rate, limit_bytes, ev, NULL, band) {}
    void receivePacket(Packet& pkt) override {
        int before = _enqueued.size();
        RandomQueue::receivePacket(pkt);  // frees a dropped packet
        if (_enqueued.size() == before) c.drops++;
        if ((uint64_t)_enqueued.size() > c.maxq) c.maxq = _enqueued.size();
    }
    Counters c;

protected:
    void completeService() override {
        mem_b before = _queuesize;
        Queue::completeService();
        c.bytes += before - _queuesize;
        c.pkts++;
    }
};

simtime_picosec g_min_rto = 0;  // 0: htsim's own floor
const simtime_picosec HTSIM_FLOOR = 250000000000ULL;  // tcp.cpp: timeFromSec(.25)

// htsim's TcpSrc; counts timeouts and, when asked, replaces the RTO floor of 250 ms that
// tcp.cpp applies after every ACK with the scenario's min_rto.
class DcSrc : public TcpSrc {
public:
    DcSrc(EventList& ev) : TcpSrc(NULL, NULL, ev) {}
    void receivePacket(Packet& pkt) override {
        TcpSrc::receivePacket(pkt);
        if (g_min_rto == 0 || _rtt == 0) return;
        simtime_picosec est = _rtt + 4 * _mdev;
        simtime_picosec stock = est < HTSIM_FLOOR ? HTSIM_FLOOR : est;
        if (_rto != stock) return;  // this ACK did not set the RTO (backed off, or an old ACK)
        simtime_picosec mine = est < g_min_rto ? g_min_rto : est;
        if (_RFC2988_RTO_timeout != timeInf && _RFC2988_RTO_timeout == eventlist().now() + stock)
            _RFC2988_RTO_timeout = eventlist().now() + mine;
        _rto = mine;
    }
    void rtx_timer_hook(simtime_picosec now, simtime_picosec period) override {
        bool pending = _rtx_timeout_pending;
        TcpSrc::rtx_timer_hook(now, period);
        if (!pending && _rtx_timeout_pending) timeouts++;
    }
    void doNextEvent() override {
        if (_highest_sent > highest) highest = _highest_sent;
        TcpSrc::doNextEvent();
    }
    uint64_t timeouts = 0, highest = 0;
};

// htsim's TcpSink; records arrival gaps.
class DcSink : public TcpSink {
public:
    DcSink() : TcpSink() {}
    void receivePacket(Packet& pkt) override {
        simtime_picosec now = EventList::now();
        if (first < 0) first = timeAsSec(now);
        if (now - last > maxgap) maxgap = now - last;
        last = now;
        TcpSink::receivePacket(pkt);
    }
    uint64_t delivered() const { return _cumulative_ack > 0 ? _cumulative_ack - 1 : 0; }
    simtime_picosec last = 0, maxgap = 0;
    double first = -1;
};

struct Sub {
    int fid;
    DcSrc* src;
    DcSink* snk;
    uint64_t deliv_t0 = 0, sent_t0 = 0;
};

struct Port {
    int id;
    BaseQueue* q;
    Counters* c;
    Pipe* pipe;  // the port's propagation delay, after its queue
};

vector<Sub> g_subs;
vector<Port> g_ports;

class Snapshot : public EventSource {
public:
    Snapshot(EventList& ev, simtime_picosec at) : EventSource(ev, "dcfair-snapshot") {
        if (at > 0) ev.sourceIsPending(*this, at);
    }
    void doNextEvent() override {
        for (auto& s : g_subs) {
            s.deliv_t0 = s.snk->delivered();
            s.sent_t0 = s.src->_packets_sent;
        }
        for (auto& p : g_ports) p.c->snap();
    }
};

class Sampler : public EventSource {
public:
    Sampler(EventList& ev, simtime_picosec every, ostream& out)
        : EventSource(ev, "dcfair-sampler"), _every(every), _out(out) {
        if (every > 0) ev.sourceIsPending(*this, 0);
    }
    void doNextEvent() override {
        for (auto& s : g_subs)
            _out << "sample " << timeAsSec(eventlist().now()) << " " << s.fid << " " << s.src->_cwnd << " "
                 << s.snk->delivered() << "\n";
        eventlist().sourceIsPendingRel(*this, _every);
    }

private:
    simtime_picosec _every;
    ostream& _out;
};

[[noreturn]] void fail(const string& why) {
    cerr << "dcfair_htsim: " << why << endl;
    exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        cout << "dcfair-htsim-driver " << DCFAIR_HTSIM_DRIVER << endl;
        return 0;
    }
    if (argc != 3) fail("usage: dcfair_htsim INPUT OUTPUT");
    ifstream in(argv[1]);
    if (!in) fail(string("cannot read ") + argv[1]);

    EventList eventlist;
    unsigned seed = 1;
    double end_s = 1, t0_s = 0, sample_s = 0, min_rto_ms = -1, init_rto_ms = 3000, scan_us = 10000;
    int pkt_bytes = 1500;
    uint64_t init_cwnd = 10, ssthresh = 100;
    map<int, Port> ports;
    struct Conn { string algo; double start; MultipathTcpSrc* m = NULL; int nsubs = 0; };
    map<int, Conn> conns;
    struct SubSpec { int fid, cid; vector<int> path, ack; };
    vector<SubSpec> specs;

    string line;
    while (getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        istringstream ls(line);
        string key;
        ls >> key;
        if (key == "seed") ls >> seed;
        else if (key == "end_s") ls >> end_s;
        else if (key == "window_start_s") ls >> t0_s;
        else if (key == "sample_s") ls >> sample_s;
        else if (key == "pkt_bytes") ls >> pkt_bytes;
        else if (key == "init_cwnd_pkts") ls >> init_cwnd;
        else if (key == "ssthresh_pkts") ls >> ssthresh;
        else if (key == "min_rto_ms") ls >> min_rto_ms;
        else if (key == "init_rto_ms") ls >> init_rto_ms;
        else if (key == "scan_us") ls >> scan_us;
        else if (key == "port") {
            int id; uint64_t rate, lp, lb; double delay; string kind;
            ls >> id >> rate >> delay >> kind >> lp >> lb;
            if (ls.fail()) fail("bad port line: " + line);
            Port p{id, NULL, NULL, new Pipe(timeFromUs(delay), eventlist)};
            if (kind == "droptail") {
                DcDropTail* q = new DcDropTail(rate, lp, lb, eventlist);
                p.q = q; p.c = &q->c;
            } else if (kind == "random") {
                if (!lb) fail("a random port needs a byte limit: " + line);
                DcRandom* q = new DcRandom(rate, lb, (mem_b)3 * pkt_bytes, eventlist);
                p.q = q; p.c = &q->c;
            } else fail("unknown port kind: " + kind);
            p.q->setName("port" + to_string(id));
            ports[id] = p;
        } else if (key == "conn") {
            int cid; Conn c;
            ls >> cid >> c.algo >> c.start;
            if (ls.fail()) fail("bad conn line: " + line);
            conns[cid] = c;
        } else if (key == "sub") {
            SubSpec s; int n;
            ls >> s.fid >> s.cid >> n;
            for (int i = 0; i < n; i++) { int x; ls >> x; s.path.push_back(x); }
            ls >> n;
            for (int i = 0; i < n; i++) { int x; ls >> x; s.ack.push_back(x); }
            if (ls.fail()) fail("bad sub line: " + line);
            specs.push_back(s);
        } else fail("unknown key: " + key);
    }

    srand(seed);
    Packet::set_packet_size(pkt_bytes);
    eventlist.setEndtime(timeFromSec(end_s));
    if (min_rto_ms >= 0) g_min_rto = timeFromMs(min_rto_ms);
    TcpRtxTimerScanner scanner(timeFromUs(scan_us), eventlist);

    for (auto& kv : ports) g_ports.push_back(kv.second);
    for (auto& s : specs) {
        if (!conns.count(s.cid)) fail("a subflow of an unknown connection");
        Conn& c = conns[s.cid];
        if (c.algo != "tcp" && !c.m) {
            int a = c.algo == "lia" ? COUPLED_INC : c.algo == "uncoupled" ? UNCOUPLED
                  : c.algo == "epsilon1" ? COUPLED_EPSILON : -1;
            if (a < 0) fail("unknown algorithm: " + c.algo);
            c.m = new MultipathTcpSrc((char)a, eventlist, NULL);
        }
        if (c.algo == "tcp" && c.nsubs > 0) fail("a tcp connection has one subflow");
        c.nsubs++;
        DcSrc* src = new DcSrc(eventlist);
        DcSink* snk = new DcSink();
        src->set_cwnd(init_cwnd * pkt_bytes);
        src->set_ssthresh(ssthresh * pkt_bytes);
        src->_rto = timeFromMs(init_rto_ms);
        src->setName("flow" + to_string(s.fid));
        snk->setName("sink" + to_string(s.fid));
        Route* out = new Route();
        for (int p : s.path) {
            if (!ports.count(p)) fail("unknown port " + to_string(p));
            out->push_back(ports[p].q);
            out->push_back(ports[p].pipe);
        }
        out->push_back(snk);
        Route* back = new Route();
        for (int p : s.ack) {
            if (!ports.count(p)) fail("unknown port " + to_string(p));
            back->push_back(ports[p].q);
            back->push_back(ports[p].pipe);
        }
        back->push_back(src);
        if (c.m) c.m->addSubflow(src);
        src->connect(*out, *back, *snk, timeFromSec(c.start));
        snk->last = timeFromSec(c.start);
        scanner.registerTcp(*src);
        Sub rec;
        rec.fid = s.fid;
        rec.src = src;
        rec.snk = snk;
        g_subs.push_back(rec);
    }

    ofstream out(argv[2]);
    if (!out) fail(string("cannot write ") + argv[2]);
    out.precision(12);
    out << "driver " << DCFAIR_HTSIM_DRIVER << "\n";
    Snapshot snap(eventlist, timeFromSec(t0_s));
    Sampler sampler(eventlist, sample_s > 0 ? timeFromSec(sample_s) : 0, out);

    while (eventlist.doNextEvent()) {
    }

    simtime_picosec end = timeFromSec(end_s);
    for (auto& s : g_subs) {
        DcSrc* src = s.src;
        DcSink* snk = s.snk;
        simtime_picosec gap = snk->maxgap;
        if (end > snk->last && end - snk->last > gap) gap = end - snk->last;
        uint64_t highest = src->highest > src->_highest_sent ? src->highest : src->_highest_sent;
        out << "sub " << s.fid << " " << s.deliv_t0 << " " << snk->delivered() << " " << s.sent_t0 << " "
            << src->_packets_sent << " " << highest << " " << src->_drops << " " << src->timeouts << " "
            << timeAsSec(gap) << " " << snk->first << "\n";
    }
    for (auto& p : g_ports)
        out << "port " << p.id << " " << p.c->bytes_t0 << " " << p.c->bytes << " " << p.c->pkts_t0 << " "
            << p.c->pkts << " " << p.c->drops_t0 << " " << p.c->drops << " " << p.c->maxq << "\n";
    out.close();
    return 0;
}
