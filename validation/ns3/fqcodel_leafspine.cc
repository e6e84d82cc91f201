// dcfair's ns-3 program for the FQ-CoDel data-center paper's reproductions (the `ns3` peer,
// python/dcfair/peers/ns3.py): a network given as nodes, links, static routes and per-port queue
// disciplines, and a list of sized TCP flows, each with its hosts, addresses, start time and
// size, as dcfair's engine drew them. Writes each flow's completion time and timeouts.
//
// Input (one file, written by the peer adapter; one item per line, '#' starts a comment):
//   seed N                               RngRun (RngSeed 1); FqCoDel's hash perturbation
//   duration_s T                         the run stops at T
//   tcp KEY VALUE                        cc (newreno|dctcp), mss, init_cwnd, min_rto_s,
//                                        initial_rto_s, conn_timeout_s, clock_granularity_s,
//                                        delayed_ack (0|1), delack_timeout_s, rcv_buf_bytes,
//                                        cwnd_cap_bytes (0: none; see ClampCwnd),
//                                        dupack_threshold, limited_transmit (0|1), sack (0|1),
//                                        ecn (0|1), dctcp_g, dctcp_alpha_init
//   node NAME                            a node (hosts and switches alike)
//   link A B RATE_BPS DELAY_S            a full-duplex point-to-point link; its two devices are
//                                        the ports A->B and B->A
//   addr NODE IP MASK                    an address on NODE's first link (hosts: their NIC)
//   route NODE PREFIX MASK PEER          NODE forwards packets to PREFIX/MASK on its link to PEER
//                                        (longest prefix wins)
//   port A->B fifo LIMIT K               FIFO of LIMIT packets; with K > 0 an ECN-capable arrival
//                                        that finds K or more packets waiting is marked CE
//                                        (waiting: in the discipline and in the device's queue)
//                                        (dcfair's DropTail with mark_threshold_pkts: rules 1-2
//                                        of crates/core/src/qdisc/droptail.rs); a not-ECT packet
//                                        is never marked nor dropped below the limit
//   port A->B fq_codel LIMIT FLOWS QUANTUM TARGET_S INTERVAL_S DROP_BATCH ECN
//                                        ns-3's FqCoDelQueueDisc
//   port A->B red LIMIT MIN MAX QW MAX_P GENTLE WAIT ECN MEAN_PKT_BYTES RATE_BPS
//                                        ns-3's RedQueueDisc (ns-2's RED: MinTh, MaxTh, QW,
//                                        LInterm = 1 / MAX_P, Gentle, Wait, UseEcn, hard drops
//                                        above the maximum, idle decay at RATE_BPS)
//   flow ID SRC DST SRC_IP DST_IP SPORT START_S SIZE_BYTES
//
// Every port's device keeps flow control and a 1-packet device queue, so the backlog waits in
// the queue discipline (one packet more can wait in the device, ahead of the discipline).
// Sizes on the wire: payload + 20 TCP + 20 IPv4 + 2 PPP bytes (timestamps off).
//
// A flow: at START_S its sender socket is created on SRC, bound to SRC_IP:SPORT and connected to
// DST_IP:80 (a PacketSink per host on port 80); once connected, the whole SIZE_BYTES is handed
// to the socket (send buffer = the size) and the socket is closed, so that the FIN rides on the
// last data segment. The flow completes when DST's sink has received
// SIZE_BYTES from it in order. Routes are per destination address, and the adapter gives every
// host addresses that name a path: a flow's data goes to an address of its receiver that the
// switches route through the spine of its data path, its ACKs to an address of its sender routed
// through the spine of its ACK path. ns-3 3.37's TcpSocketBase::SetupEndpoint replaces the bound
// local address by the route's source (Ipv4L3Protocol::SourceAddressSelection: the first address
// of the interface whose subnet holds the destination), so the sender's address is the one
// whose mask matches the receiver's address: the adapter gives the sender-side addresses that
// mask, and the receiver-side ones /32 (see python/dcfair/peers/ns3.py, program_input).
//
// Timeouts: ns-3 3.37 has no counter. TcpSocketBase::ReTxTimeout doubles m_rto (capped at 60 s)
// and SendEmptyPacket sets it to ConnTimeout x 2^k for the k-th SYN retransmission; no other
// writer sets it to exactly twice its previous value, so an "RTO" trace change to twice the old
// value (or to the 60 s cap from above half of it) counts one expiry
// (validation/ns3/dumbbell.cc does the same). Retransmissions: data segments the socket sends
// below its highest sequence sent so far.
//
// Output (argv[2]): "flow ID START END BYTES_RX TIMEOUTS RETRANSMITS DATA_SEGMENTS" per flow
// (END -1 when unfinished), "port A->B DROPS MARKS" per port, "events N".
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

#define DCFAIR_NS3_FQCODEL "1"

namespace ns3
{

// dcfair's DropTail with an instantaneous marking threshold (see the header comment).
class DcfairFifo : public QueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::DcfairFifo")
                .SetParent<QueueDisc>()
                .AddConstructor<DcfairFifo>()
                .AddAttribute("Limit", "packets", UintegerValue(100),
                              MakeUintegerAccessor(&DcfairFifo::m_limit), MakeUintegerChecker<uint32_t>())
                .AddAttribute("MarkK", "marking threshold, packets (0: none)", UintegerValue(0),
                              MakeUintegerAccessor(&DcfairFifo::m_k), MakeUintegerChecker<uint32_t>());
        return tid;
    }

    DcfairFifo()
        : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
    {
    }

    // The device's own transmit queue (1 packet, flow control): while the link is busy it holds
    // one packet waiting, which dcfair counts as waiting at the port too.
    void SetDeviceQueue(Ptr<Queue<Packet>> q)
    {
        m_dev = q;
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        uint32_t waiting = GetInternalQueue(0)->GetNPackets() + (m_dev ? m_dev->GetNPackets() : 0);
        if (waiting + 1 > m_limit)
        {
            DropBeforeEnqueue(item, "Overflow");
            return false;
        }
        if (m_k > 0 && waiting >= m_k)
        {
            Mark(item, "Threshold"); // false (and nothing done) for a not-ECT packet
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        return GetInternalQueue(0)->Dequeue();
    }

    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        {
            return false;
        }
        if (GetNInternalQueues() == 0)
        {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_limit + 1))));
        }
        return GetNInternalQueues() == 1;
    }

    void InitializeParams() override
    {
    }

    uint32_t m_limit = 100;
    uint32_t m_k = 0;
    Ptr<Queue<Packet>> m_dev;
};

NS_OBJECT_ENSURE_REGISTERED(DcfairFifo);

// The window cap (bytes, 0: none): ns-2's maxcwnd_ and window_ (Table II's "max cwnd" and "rx
// window"), min(window, cap) in ns-2. Applied to the congestion window after every change the
// congestion control and the recovery make, because ns-3.37 cannot run a receive window that
// binds: TcpSocketBase::SendPendingData then calls SendDataPacket with 0 bytes during fast
// recovery (the receiver's window full, the inflated cwnd not) and TcpRateLinux::SkbSent
// dereferences the null item TcpTxBuffer::CopyFromSequence returns (a segmentation fault).
uint32_t g_cwndCap = 0;

void
ClampCwnd(Ptr<TcpSocketState> tcb)
{
    if (g_cwndCap > 0)
    {
        if (tcb->m_cWnd > g_cwndCap)
        {
            tcb->m_cWnd = g_cwndCap;
        }
        if (tcb->m_cWndInfl > g_cwndCap)
        {
            tcb->m_cWndInfl = g_cwndCap;
        }
    }
}

class DcfairNewReno : public TcpNewReno
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::DcfairNewReno").SetParent<TcpNewReno>().AddConstructor<DcfairNewReno>();
        return tid;
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        ClampCwnd(tcb);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<DcfairNewReno>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(DcfairNewReno);

class DcfairDctcp : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::DcfairDctcp").SetParent<TcpDctcp>().AddConstructor<DcfairDctcp>();
        return tid;
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        TcpDctcp::IncreaseWindow(tcb, segmentsAcked);
        ClampCwnd(tcb);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<DcfairDctcp>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(DcfairDctcp);

class DcfairClassicRecovery : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::DcfairClassicRecovery")
                                .SetParent<TcpClassicRecovery>()
                                .AddConstructor<DcfairClassicRecovery>();
        return tid;
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t dupAckCount,
                       uint32_t unAckDataCount,
                       uint32_t deliveredBytes) override
    {
        TcpClassicRecovery::EnterRecovery(tcb, dupAckCount, unAckDataCount, deliveredBytes);
        ClampCwnd(tcb);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes) override
    {
        TcpClassicRecovery::DoRecovery(tcb, deliveredBytes);
        ClampCwnd(tcb);
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        TcpClassicRecovery::ExitRecovery(tcb);
        ClampCwnd(tcb);
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<DcfairClassicRecovery>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(DcfairClassicRecovery);

} // namespace ns3

namespace
{

struct FlowRec
{
    uint32_t id = 0;
    uint32_t src = 0, dst = 0;
    Ipv4Address srcIp, dstIp;
    uint16_t sport = 0;
    double start = 0;
    uint64_t size = 0;
    uint64_t rx = 0;
    double end = -1;
    uint64_t timeouts = 0, retransmits = 0, dataSegs = 0;
    uint32_t highTx = 0;
    bool anyTx = false;
    Ptr<Socket> sock;
    bool sent = false;
};

std::vector<FlowRec> g_flows;
std::map<std::pair<uint32_t, uint16_t>, uint32_t> g_bySrc; // (src ip, sport) -> flow index

[[noreturn]] void
Fail(const std::string& msg)
{
    std::cerr << "fqcodel_leafspine: " << msg << std::endl;
    std::exit(2);
}

void
OnSinkRx(Ptr<const Packet> p, const Address& from)
{
    InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
    auto it = g_bySrc.find({a.GetIpv4().Get(), a.GetPort()});
    if (it == g_bySrc.end())
    {
        return;
    }
    FlowRec& f = g_flows[it->second];
    f.rx += p->GetSize();
    if (f.end < 0 && f.rx >= f.size)
    {
        f.end = Simulator::Now().GetSeconds();
    }
}

void
OnRto(FlowRec* f, Time o, Time v)
{
    if (o.IsStrictlyPositive() && (v == o + o || (v == Seconds(60) && o < v && o + o > v)))
    {
        f->timeouts++;
    }
}

void
OnTx(FlowRec* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    f->dataSegs++;
    uint32_t seq = h.GetSequenceNumber().GetValue();
    uint32_t endSeq = seq + p->GetSize();
    if (f->anyTx && static_cast<int32_t>(seq - f->highTx) < 0)
    {
        f->retransmits++;
    }
    if (!f->anyTx || static_cast<int32_t>(endSeq - f->highTx) > 0)
    {
        f->highTx = endSeq;
    }
    f->anyTx = true;
}

void
SendAll(FlowRec* f, Ptr<Socket> s, uint32_t)
{
    if (f->sent)
    {
        return;
    }
    if (s->GetTxAvailable() < f->size)
    {
        return; // the send buffer is the size: this waits for nothing
    }
    int r = s->Send(Create<Packet>(static_cast<uint32_t>(f->size)));
    if (r < 0)
    {
        Fail("flow " + std::to_string(f->id) + ": Send failed");
    }
    f->sent = true;
    // The FIN rides on the segment carrying the last byte (ns-3's close-on-empty), as dcfair's
    // sender does, and the receiver acknowledges it at once (no delayed-ACK wait at the end).
    s->Close();
}

void
OnConnected(FlowRec* f, Ptr<Socket> s)
{
    SendAll(f, s, 0);
}

void
OnConnectFailed(FlowRec* f, Ptr<Socket>)
{
    std::cerr << "fqcodel_leafspine: flow " << f->id << " failed to connect" << std::endl;
}

NodeContainer g_nodes;
std::map<std::string, uint32_t> g_nodeIdx;

void
StartFlow(FlowRec* f)
{
    Ptr<Node> n = g_nodes.Get(f->src);
    Ptr<Socket> s = Socket::CreateSocket(n, TcpSocketFactory::GetTypeId());
    s->SetAttribute("SndBufSize", UintegerValue(std::max<uint64_t>(f->size, 1460)));
    bool ok = true;
    ok &= s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, f));
    ok &= s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    if (!ok)
    {
        Fail("cannot hook a TCP trace source");
    }
    if (s->Bind(InetSocketAddress(f->srcIp, f->sport)) != 0)
    {
        Fail("flow " + std::to_string(f->id) + ": bind failed");
    }
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, f), MakeBoundCallback(&OnConnectFailed, f));
    s->SetSendCallback(MakeBoundCallback(&SendAll, f));
    if (s->Connect(InetSocketAddress(f->dstIp, 80)) != 0)
    {
        Fail("flow " + std::to_string(f->id) + ": connect failed");
    }
    Address local;
    s->GetSockName(local);
    if (InetSocketAddress::ConvertFrom(local).GetIpv4() != f->srcIp)
    {
        std::ostringstream m;
        m << "flow " << f->id << ": the socket's address is " << InetSocketAddress::ConvertFrom(local).GetIpv4()
          << ", not " << f->srcIp;
        Fail(m.str());
    }
    f->sock = s;
}

uint32_t
NodeOf(const std::string& name)
{
    auto it = g_nodeIdx.find(name);
    if (it == g_nodeIdx.end())
    {
        Fail("unknown node " + name);
    }
    return it->second;
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc == 2 && std::string(argv[1]) == "--version")
    {
        std::cout << "fqcodel_leafspine " << DCFAIR_NS3_FQCODEL << std::endl;
        return 0;
    }
    if (argc != 3)
    {
        Fail("usage: fqcodel_leafspine INPUT OUTPUT");
    }
    std::ifstream in(argv[1]);
    if (!in)
    {
        Fail(std::string("cannot read ") + argv[1]);
    }
    struct Link
    {
        std::string a, b;
        uint64_t rate;
        double delay;
    };
    struct Port
    {
        std::string name, kind;
        std::vector<double> v;
    };
    struct Route
    {
        std::string node, prefix, mask, peer;
    };
    struct Addr
    {
        std::string node, ip, mask;
    };
    std::vector<std::string> nodeNames;
    std::vector<Link> links;
    std::vector<Port> ports;
    std::vector<Route> routes;
    std::vector<Addr> addrs;
    std::map<std::string, std::string> tcp;
    uint32_t seed = 1;
    double duration = 0.1;
    std::vector<std::vector<std::string>> flowLines;
    std::string line;
    while (std::getline(in, line))
    {
        auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line = line.substr(0, hash);
        }
        std::istringstream ss(line);
        std::vector<std::string> w;
        std::string t;
        while (ss >> t)
        {
            w.push_back(t);
        }
        if (w.empty())
        {
            continue;
        }
        const std::string& k = w[0];
        auto need = [&](size_t n) {
            if (w.size() != n)
            {
                Fail("bad line: " + line);
            }
        };
        if (k == "seed")
        {
            need(2);
            seed = std::stoul(w[1]);
        }
        else if (k == "duration_s")
        {
            need(2);
            duration = std::stod(w[1]);
        }
        else if (k == "tcp")
        {
            need(3);
            tcp[w[1]] = w[2];
        }
        else if (k == "node")
        {
            need(2);
            g_nodeIdx[w[1]] = nodeNames.size();
            nodeNames.push_back(w[1]);
        }
        else if (k == "link")
        {
            need(5);
            links.push_back({w[1], w[2], std::stoull(w[3]), std::stod(w[4])});
        }
        else if (k == "addr")
        {
            need(4);
            addrs.push_back({w[1], w[2], w[3]});
        }
        else if (k == "route")
        {
            need(5);
            routes.push_back({w[1], w[2], w[3], w[4]});
        }
        else if (k == "port")
        {
            if (w.size() < 3)
            {
                Fail("bad line: " + line);
            }
            Port p{w[1], w[2], {}};
            for (size_t i = 3; i < w.size(); ++i)
            {
                p.v.push_back(std::stod(w[i]));
            }
            ports.push_back(p);
        }
        else if (k == "flow")
        {
            need(9);
            flowLines.push_back(w);
        }
        else
        {
            Fail("unknown line: " + line);
        }
    }
    auto tget = [&](const std::string& key) -> std::string {
        auto it = tcp.find(key);
        if (it == tcp.end())
        {
            Fail("tcp " + key + " is missing");
        }
        return it->second;
    };
    auto td = [&](const std::string& key) { return std::stod(tget(key)); };
    auto ti = [&](const std::string& key) { return static_cast<uint32_t>(std::stoul(tget(key))); };

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    std::string cc = tget("cc");
    if (cc != "newreno" && cc != "dctcp")
    {
        Fail("tcp cc must be newreno or dctcp");
    }
    g_cwndCap = ti("cwnd_cap_bytes");
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(cc == "dctcp" ? DcfairDctcp::GetTypeId() : DcfairNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(DcfairClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(ti("mss")));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(ti("init_cwnd")));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(ti("rcv_buf_bytes")));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(ti("delayed_ack") ? 2 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(td("delack_timeout_s"))));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(tcp.count("nodelay") ? ti("nodelay") != 0 : true));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(td("conn_timeout_s"))));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(20));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(td("initial_rto_s"))));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(td("min_rto_s"))));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Seconds(td("clock_granularity_s"))));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(ti("sack") != 0));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(ti("limited_transmit") != 0));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(ti("dupack_threshold")));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       StringValue(cc == "dctcp" || ti("ecn") != 0 ? "On" : "Off"));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(td("dctcp_g")));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(td("dctcp_alpha_init")));

    g_nodes.Create(nodeNames.size());
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.Install(g_nodes);

    // links: devices, and which device of a node leads to which peer
    std::map<std::string, Ptr<NetDevice>> portDev; // "A->B" -> A's device
    for (const Link& l : links)
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(l.rate)));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(std::llround(l.delay * 1e9))));
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));
        NetDeviceContainer d = p2p.Install(g_nodes.Get(NodeOf(l.a)), g_nodes.Get(NodeOf(l.b)));
        portDev[l.a + "->" + l.b] = d.Get(0);
        portDev[l.b + "->" + l.a] = d.Get(1);
    }
    // every device an interface; a dummy /32 address on the interfaces of nodes without `addr`
    // lines (the switches) so that they are up
    std::map<Ptr<NetDevice>, uint32_t> ifOf;
    std::set<uint32_t> addressed;
    for (const Addr& a : addrs)
    {
        addressed.insert(NodeOf(a.node));
    }
    uint32_t dummy = 0;
    for (uint32_t n = 0; n < g_nodes.GetN(); ++n)
    {
        Ptr<Node> node = g_nodes.Get(n);
        Ptr<Ipv4> ip = node->GetObject<Ipv4>();
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            Ptr<NetDevice> dev = node->GetDevice(d);
            if (DynamicCast<PointToPointNetDevice>(dev) == nullptr)
            {
                continue; // the loopback
            }
            int32_t i = ip->AddInterface(dev);
            ifOf[dev] = i;
            if (addressed.count(n))
            {
                if (i != 1)
                {
                    Fail("a node with addresses must have one link: " + nodeNames[n]);
                }
                for (const Addr& a : addrs)
                {
                    if (NodeOf(a.node) == n)
                    {
                        ip->AddAddress(i, Ipv4InterfaceAddress(Ipv4Address(a.ip.c_str()), Ipv4Mask(a.mask.c_str())));
                    }
                }
            }
            else
            {
                ++dummy;
                ip->AddAddress(i, Ipv4InterfaceAddress(Ipv4Address(0xAC000000u + dummy), Ipv4Mask("255.255.255.255")));
            }
            ip->SetUp(i);
        }
    }
    for (const Route& r : routes)
    {
        Ptr<Node> node = g_nodes.Get(NodeOf(r.node));
        auto it = portDev.find(r.node + "->" + r.peer);
        if (it == portDev.end())
        {
            Fail("route: no link " + r.node + "->" + r.peer);
        }
        Ptr<Ipv4StaticRouting> sr = staticRouting.GetStaticRouting(node->GetObject<Ipv4>());
        sr->AddNetworkRouteTo(Ipv4Address(r.prefix.c_str()), Ipv4Mask(r.mask.c_str()), ifOf[it->second]);
    }

    // queue disciplines, one per port
    std::vector<std::pair<std::string, Ptr<QueueDisc>>> qdiscs;
    for (const Port& p : ports)
    {
        auto it = portDev.find(p.name);
        if (it == portDev.end())
        {
            Fail("port: no link " + p.name);
        }
        TrafficControlHelper tch;
        if (p.kind == "fifo" && p.v.size() == 2)
        {
            tch.SetRootQueueDisc("ns3::DcfairFifo", "Limit", UintegerValue(static_cast<uint32_t>(p.v[0])), "MarkK",
                                 UintegerValue(static_cast<uint32_t>(p.v[1])));
        }
        else if (p.kind == "fq_codel" && p.v.size() == 7)
        {
            std::ostringstream tgt, ivl;
            tgt << std::llround(p.v[3] * 1e9) << "ns";
            ivl << std::llround(p.v[4] * 1e9) << "ns";
            tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize",
                                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, static_cast<uint32_t>(p.v[0]))),
                                 "Flows", UintegerValue(static_cast<uint32_t>(p.v[1])), "Target",
                                 StringValue(tgt.str()), "Interval", StringValue(ivl.str()), "DropBatchSize",
                                 UintegerValue(static_cast<uint32_t>(p.v[5])), "Perturbation", UintegerValue(seed),
                                 "UseEcn", BooleanValue(p.v[6] != 0));
        }
        else if (p.kind == "red" && p.v.size() == 10)
        {
            tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize",
                                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, static_cast<uint32_t>(p.v[0]))),
                                 "MinTh", DoubleValue(p.v[1]), "MaxTh", DoubleValue(p.v[2]), "QW", DoubleValue(p.v[3]),
                                 "LInterm", DoubleValue(1.0 / p.v[4]), "Gentle", BooleanValue(p.v[5] != 0), "Wait",
                                 BooleanValue(p.v[6] != 0), "UseEcn", BooleanValue(p.v[7] != 0), "UseHardDrop",
                                 BooleanValue(true), "MeanPktSize", UintegerValue(static_cast<uint32_t>(p.v[8])),
                                 "LinkBandwidth", DataRateValue(DataRate(static_cast<uint64_t>(p.v[9]))));
        }
        else
        {
            Fail("bad port " + p.name + " " + p.kind);
        }
        Ptr<TrafficControlLayer> tc = it->second->GetNode()->GetObject<TrafficControlLayer>();
        if (tc->GetRootQueueDiscOnDevice(it->second))
        {
            tc->DeleteRootQueueDiscOnDevice(it->second);
        }
        QueueDiscContainer q = tch.Install(it->second);
        if (p.kind == "fq_codel")
        {
            DynamicCast<FqCoDelQueueDisc>(q.Get(0))->SetQuantum(static_cast<uint32_t>(p.v[2]));
        }
        if (p.kind == "fifo")
        {
            DynamicCast<DcfairFifo>(q.Get(0))->SetDeviceQueue(DynamicCast<PointToPointNetDevice>(it->second)->GetQueue());
        }
        qdiscs.emplace_back(p.name, q.Get(0));
    }

    // sinks: one per host that receives
    std::vector<bool> hasSink(g_nodes.GetN(), false);
    for (auto& w : flowLines)
    {
        FlowRec f;
        f.id = std::stoul(w[1]);
        f.src = NodeOf(w[2]);
        f.dst = NodeOf(w[3]);
        f.srcIp = Ipv4Address(w[4].c_str());
        f.dstIp = Ipv4Address(w[5].c_str());
        f.sport = static_cast<uint16_t>(std::stoul(w[6]));
        f.start = std::stod(w[7]);
        f.size = std::stoull(w[8]);
        if (f.size == 0 || f.size > 0xffffffffull)
        {
            Fail("flow " + w[1] + ": size out of range");
        }
        if (!g_bySrc.emplace(std::make_pair(f.srcIp.Get(), f.sport), g_flows.size()).second)
        {
            Fail("flow " + w[1] + ": source address and port used twice");
        }
        g_flows.push_back(f);
        if (!hasSink[f.dst])
        {
            hasSink[f.dst] = true;
            PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 80));
            ApplicationContainer a = sink.Install(g_nodes.Get(f.dst));
            a.Start(Seconds(0));
            a.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
        }
    }
    for (auto& f : g_flows)
    {
        Simulator::Schedule(Seconds(f.start), &StartFlow, &f);
    }

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    std::ofstream out(argv[2]);
    if (!out)
    {
        Fail(std::string("cannot write ") + argv[2]);
    }
    out << std::setprecision(15);
    for (const auto& f : g_flows)
    {
        out << "flow " << f.id << " " << f.start << " " << f.end << " " << f.rx << " " << f.timeouts << " "
            << f.retransmits << " " << f.dataSegs << "\n";
    }
    for (auto& [name, q] : qdiscs)
    {
        const QueueDisc::Stats& st = q->GetStats();
        out << "port " << name << " " << st.nTotalDroppedPackets << " " << st.nTotalMarkedPackets << "\n";
    }
    out << "events " << Simulator::GetEventCount() << "\n";
    out.close();
    Simulator::Destroy();
    return 0;
}
