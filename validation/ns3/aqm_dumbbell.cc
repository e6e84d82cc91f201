// dcfair's ns-3 mirror of its dumbbell with an AQM bottleneck, for validation/ns3/run_aqm.py.
//
// N sender hosts -> one switch -> one bottleneck link -> one receiver host, full-duplex
// point-to-point links. Long-lived TCP flows (BulkSendApplication -> PacketSink), flow i from
// sender i mod N on port 5000 + i, plus optional short flows (--shortFlows of --shortBytes each,
// starts uniform in [--shortStartMin, --shortStartMax]) numbered after the long ones.
//
// Queues: every access device keeps a plain DropTail device queue with flow control disabled
// (no queue disc), as dumbbell.cc does. The bottleneck device (switch -> receiver) keeps flow
// control, a 1-packet device queue and a root queue disc:
//   --aqm=fq_codel  FqCoDelQueueDisc: MaxSize --limitPkts, Flows, Target, Interval, DropBatchSize,
//                   Perturbation (the hash salt, from --perturbation), quantum (--quantumBytes,
//                   bytes of IP packet), UseEcn --ecn
//   --aqm=dctcp     RedQueueDisc: MaxSize --limitPkts, QW 1, MinTh = MaxTh = --redThPkts,
//                   Gentle false, UseEcn true, UseHardDrop false, with TcpDctcp on every socket:
//                   a step marker on the instantaneous queue (ns-3's examples/tcp/dctcp-example
//                   uses the same RED settings)
// The queue length reported is the queue disc's packets plus the device queue's (0 or 1), i.e.
// every packet waiting at the port, the packet on the wire excluded (dcfair's queue_pkts).
//
// TCP: classic recovery, SegmentSize 1460, InitialCwnd 10, DelAckCount 1, MinRto 200 ms,
// timestamps off, SACK on, buffers --bufBytes (see validation/ns3/README.md, AQM section).
//
// Output (into --outDir): summary.json (counters), flows.csv (one row per flow), queue.csv
// (bottleneck queue length sampled every --sampleInterval inside the window).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Flow
{
    uint32_t id = 0;
    double start = 0.0;
    uint64_t size = 0; // 0: long-lived
    double end = -1.0; // time the last byte arrived (short flows)
    Ptr<PacketSink> sink;
    uint64_t rxAtWindowStart = 0;
};

std::vector<Flow> g_flows;
Ptr<QueueDisc> g_qdisc;
Ptr<Queue<Packet>> g_devQueue;
double g_windowStart = 0.0, g_duration = 0.0;
uint64_t g_txBytesWindow = 0;
uint64_t g_drops = 0, g_dropsWindow = 0, g_marks = 0, g_marksWindow = 0, g_devDrops = 0;
std::ofstream g_queue;

bool
InWindow()
{
    double t = Simulator::Now().GetSeconds();
    return t >= g_windowStart && t <= g_duration;
}

void
OnTxEnd(Ptr<const Packet> p)
{
    if (InWindow())
    {
        g_txBytesWindow += p->GetSize();
    }
}

void
OnQdiscDrop(Ptr<const QueueDiscItem>)
{
    g_drops++;
    g_dropsWindow += InWindow();
}

void
OnQdiscMark(Ptr<const QueueDiscItem>, const char*)
{
    g_marks++;
    g_marksWindow += InWindow();
}

void
OnDevDrop(Ptr<const Packet>)
{
    g_devDrops++;
}

void
OnSinkRx(Flow* f, Ptr<const Packet>, const Address&)
{
    if (f->end < 0 && f->size > 0 && f->sink->GetTotalRx() >= f->size)
    {
        f->end = Simulator::Now().GetSeconds();
    }
}

void
Sample(Time interval)
{
    g_queue << std::fixed << std::setprecision(6) << Simulator::Now().GetSeconds() << ","
            << g_qdisc->GetNPackets() + g_devQueue->GetNPackets() << "\n";
    if (Simulator::Now() + interval <= Seconds(g_duration))
    {
        Simulator::Schedule(interval, &Sample, interval);
    }
}

void
MarkWindowStart()
{
    for (auto& f : g_flows)
    {
        f.rxAtWindowStart = f.sink->GetTotalRx();
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t senders = 8, flows = 8, shortFlows = 0;
    uint64_t shortBytes = 2920;
    double shortStartMin = 0.0, shortStartMax = 0.0;
    double accessRateMbps = 1000.0, accessDelayUs = 10.0;
    double bottleneckRateMbps = 100.0, bottleneckDelayUs = 1000.0;
    uint32_t hostBufferPkts = 1000, limitPkts = 1000;
    double startMin = 0.0, startMax = 0.5;
    std::string aqm = "fq_codel";
    uint32_t fqFlows = 1024, quantumBytes = 1512, dropBatch = 64, perturbation = 0;
    double targetUs = 5000.0, intervalUs = 100000.0;
    bool ecn = false;
    uint32_t redThPkts = 20;
    double dctcpG = 0.0625, dctcpAlphaInit = 1.0;
    uint32_t bufBytes = 4194304;
    double duration = 20.0, window = 15.0, sampleInterval = 0.001;
    uint32_t run = 1;
    std::string outDir = ".";

    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "sender hosts", senders);
    cmd.AddValue("flows", "long-lived flows", flows);
    cmd.AddValue("shortFlows", "short flows after the long ones", shortFlows);
    cmd.AddValue("shortBytes", "payload of each short flow", shortBytes);
    cmd.AddValue("shortStartMin", "short flows' earliest start, s", shortStartMin);
    cmd.AddValue("shortStartMax", "short flows' latest start, s", shortStartMax);
    cmd.AddValue("accessRateMbps", "sender links, Mbit/s", accessRateMbps);
    cmd.AddValue("accessDelayUs", "sender links' one-way delay, us", accessDelayUs);
    cmd.AddValue("bottleneckRateMbps", "switch-receiver link, Mbit/s", bottleneckRateMbps);
    cmd.AddValue("bottleneckDelayUs", "its one-way delay, us", bottleneckDelayUs);
    cmd.AddValue("hostBufferPkts", "every other device queue, packets", hostBufferPkts);
    cmd.AddValue("limitPkts", "queue disc limit, packets", limitPkts);
    cmd.AddValue("startMin", "long flows' earliest start, s", startMin);
    cmd.AddValue("startMax", "long flows' latest start, s", startMax);
    cmd.AddValue("aqm", "fq_codel | dctcp", aqm);
    cmd.AddValue("fqFlows", "FqCoDel Flows", fqFlows);
    cmd.AddValue("quantumBytes", "FqCoDel quantum (bytes of IP packet)", quantumBytes);
    cmd.AddValue("dropBatch", "FqCoDel DropBatchSize", dropBatch);
    cmd.AddValue("perturbation", "FqCoDel hash Perturbation", perturbation);
    cmd.AddValue("targetUs", "CoDel target, us", targetUs);
    cmd.AddValue("intervalUs", "CoDel interval, us", intervalUs);
    cmd.AddValue("ecn", "FqCoDel UseEcn (and ECN on the sockets)", ecn);
    cmd.AddValue("redThPkts", "RED MinTh = MaxTh, packets in the queue disc", redThPkts);
    cmd.AddValue("dctcpG", "TcpDctcp::DctcpShiftG", dctcpG);
    cmd.AddValue("dctcpAlphaInit", "TcpDctcp::DctcpAlphaOnInit", dctcpAlphaInit);
    cmd.AddValue("bufBytes", "TcpSocket SndBufSize and RcvBufSize", bufBytes);
    cmd.AddValue("duration", "simulated time, s", duration);
    cmd.AddValue("window", "measurement window at the end, s", window);
    cmd.AddValue("sampleInterval", "queue sample interval, s", sampleInterval);
    cmd.AddValue("run", "RngRun", run);
    cmd.AddValue("outDir", "output directory", outDir);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(aqm != "fq_codel" && aqm != "dctcp", "--aqm must be fq_codel or dctcp");
    g_duration = duration;
    g_windowStart = duration - window;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);

    bool dctcp = aqm == "dctcp";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(dctcp ? TcpDctcp::GetTypeId() : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn || dctcp ? "On" : "Off"));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(dctcpG));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(dctcpAlphaInit));

    NodeContainer hosts;
    hosts.Create(senders);
    Ptr<Node> sw = CreateObject<Node>();
    Ptr<Node> rcv = CreateObject<Node>();
    auto rate = [](double mbps) { return DataRate(static_cast<uint64_t>(std::llround(mbps * 1e6))); };
    auto delay = [](double us) { return NanoSeconds(static_cast<int64_t>(std::llround(us * 1e3))); };

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(rate(accessRateMbps)));
    access.SetDeviceAttribute("Mtu", UintegerValue(1500));
    access.SetChannelAttribute("Delay", TimeValue(delay(accessDelayUs)));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, hostBufferPkts)));
    access.DisableFlowControl();
    std::vector<NetDeviceContainer> accessDevs;
    for (uint32_t i = 0; i < senders; ++i)
    {
        accessDevs.push_back(access.Install(hosts.Get(i), sw));
    }

    // The bottleneck keeps flow control (so the queue disc, not the device, holds the backlog)
    // and a 1-packet device queue.
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(rate(bottleneckRateMbps)));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(1500));
    bottleneck.SetChannelAttribute("Delay", TimeValue(delay(bottleneckDelayUs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));
    NetDeviceContainer bnDevs = bottleneck.Install(sw, rcv);

    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(sw);
    stack.Install(rcv);

    // Queue disc on the switch -> receiver device only; none on the receiver's reverse device.
    TrafficControlHelper tch;
    if (dctcp)
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limitPkts)),
                             "QW", DoubleValue(1.0),
                             "MinTh", DoubleValue(redThPkts),
                             "MaxTh", DoubleValue(redThPkts),
                             "Gentle", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", DataRateValue(rate(bottleneckRateMbps)),
                             "LinkDelay", TimeValue(delay(bottleneckDelayUs)));
    }
    else
    {
        std::ostringstream t, iv;
        t << static_cast<int64_t>(std::llround(targetUs * 1000)) << "ns";
        iv << static_cast<int64_t>(std::llround(intervalUs * 1000)) << "ns";
        // Target and Interval are StringValue attributes in ns-3 3.37.
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limitPkts)),
                             "Flows", UintegerValue(fqFlows),
                             "Target", StringValue(t.str()),
                             "Interval", StringValue(iv.str()),
                             "DropBatchSize", UintegerValue(dropBatch),
                             "Perturbation", UintegerValue(perturbation),
                             "UseEcn", BooleanValue(ecn));
    }
    QueueDiscContainer qdiscs = tch.Install(bnDevs.Get(0));
    g_qdisc = qdiscs.Get(0);
    if (!dctcp)
    {
        DynamicCast<FqCoDelQueueDisc>(g_qdisc)->SetQuantum(quantumBytes);
    }

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    for (auto& d : accessDevs)
    {
        addr.NewNetwork();
        addr.Assign(d);
    }
    addr.NewNetwork();
    Ipv4InterfaceContainer bnIfs = addr.Assign(bnDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    // Assign installs the default pfifo_fast on the receiver's device (it has flow control):
    // remove it, the reverse path carries only ACKs.
    rcv->GetObject<TrafficControlLayer>()->DeleteRootQueueDiscOnDevice(bnDevs.Get(1));

    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    g_devQueue = bnDev->GetQueue();
    bnDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnTxEnd));
    g_devQueue->TraceConnectWithoutContext("Drop", MakeCallback(&OnDevDrop));
    g_qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));
    g_qdisc->TraceConnectWithoutContext("Mark", MakeCallback(&OnQdiscMark));

    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(1);
    Ipv4Address rcvAddr = bnIfs.GetAddress(1);
    uint32_t total = flows + shortFlows;
    g_flows.resize(total);
    for (uint32_t i = 0; i < total; ++i)
    {
        Flow& f = g_flows[i];
        f.id = i;
        bool isShort = i >= flows;
        double lo = isShort ? shortStartMin : startMin, hi = isShort ? shortStartMax : startMax;
        f.start = hi > lo ? startRv->GetValue(lo, hi) : lo;
        f.size = isShort ? shortBytes : 0;
        uint16_t port = static_cast<uint16_t>(5000 + i);
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(rcv);
        s.Start(Seconds(0));
        f.sink = DynamicCast<PacketSink>(s.Get(0));
        f.sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &f));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rcvAddr, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.size));
        bulk.SetAttribute("SendSize", UintegerValue(14600));
        ApplicationContainer a = bulk.Install(hosts.Get(i % senders));
        a.Start(Seconds(f.start));
    }

    g_queue.open(outDir + "/queue.csv");
    NS_ABORT_MSG_IF(!g_queue, "cannot write into " << outDir);
    g_queue << "time_s,queue_pkts\n";
    Simulator::Schedule(Seconds(g_windowStart), &MarkWindowStart);
    Simulator::Schedule(Seconds(g_windowStart), &Sample, Seconds(sampleInterval));
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    Simulator::Run();

    std::ofstream fcsv(outDir + "/flows.csv");
    fcsv << "flow_id,start_s,size_bytes,bytes_delivered,bytes_in_window,fct_s\n";
    fcsv << std::setprecision(12);
    for (auto& f : g_flows)
    {
        uint64_t rx = f.sink->GetTotalRx();
        fcsv << f.id << "," << f.start << "," << f.size << "," << rx << ","
             << rx - f.rxAtWindowStart << ",";
        if (f.end >= 0)
        {
            fcsv << f.end - f.start;
        }
        fcsv << "\n";
    }
    std::ofstream js(outDir + "/summary.json");
    js << std::setprecision(17);
    js << "{\"simulator\": \"ns-3\", \"aqm\": \"" << aqm << "\", \"run\": " << run
       << ", \"window_s\": " << window << ", \"capacity_bps\": " << bottleneckRateMbps * 1e6
       << ", \"utilization\": " << g_txBytesWindow * 8.0 / (bottleneckRateMbps * 1e6 * window)
       << ", \"drops\": " << g_drops << ", \"drops_in_window\": " << g_dropsWindow
       << ", \"marks\": " << g_marks << ", \"marks_in_window\": " << g_marksWindow
       << ", \"device_queue_drops\": " << g_devDrops << ", \"drops_by_reason\": {";
    // Every drop of the disc (its children's included) by ns-3's reason string, whole run:
    // FqCoDel's "Overlimit drop" (the batch from the fattest queue) apart from CoDel's
    // "Target exceeded drop" (the control law).
    const QueueDisc::Stats& st = g_qdisc->GetStats();
    bool first = true;
    for (const auto* m : {&st.nDroppedPacketsBeforeEnqueue, &st.nDroppedPacketsAfterDequeue})
    {
        for (const auto& [reason, n] : *m)
        {
            js << (first ? "" : ", ") << "\"" << reason << "\": " << n;
            first = false;
        }
    }
    js << "}}\n";
    g_queue.close();
    Simulator::Destroy();
    return g_devDrops == 0 ? 0 : 3;
}
