// dcfair's ns-3 mirror of its dumbbell (docs/topologies.md), for validation/ns3/.
//
// N sender hosts -> one switch -> one bottleneck link -> one receiver host, every link a
// full-duplex point-to-point link. Long-lived TCP flows (BulkSendApplication -> PacketSink),
// flow i from sender i mod N to the receiver on port 5000 + i.
//
// Queues: only the point-to-point devices' own DropTail queues hold packets. Flow control is
// disabled on every device (PointToPointHelper::DisableFlowControl), so no NetDeviceQueueInterface
// is aggregated, Ipv4AddressHelper installs no queue disc, and the traffic-control layer hands
// every packet straight to the device (checked at run time below). The bottleneck device
// (switch -> receiver) holds --bufferPkts packets *waiting*: the packet being serialized has
// already left the queue, as in dcfair's `queue.limit_pkts`. Every other device holds
// --hostBufferPkts, as dcfair's `topology.host_buffer_pkts`.
//
// Every TCP attribute the comparison depends on is set from the command line (no ns-3 default
// is left implicit for them); validation/ns3/README.md lists them and run_ns3.py derives them
// from the dcfair scenario file.
//
// Output (into --outDir):
//   summary.json     the options, counters and metrics of the run
//   flows.csv        one row per flow (dcfair's flows.csv columns where they exist)
//   timeseries.csv   dcfair's long format: time_s,metric,port,flow_id,value (queue_pkts,
//                    queue_bytes of the bottleneck; delivered_bytes, cwnd_bytes of every flow;
//                    cwnd_bytes is CongestionWindowInflated, which like dcfair's includes the
//                    fast-recovery inflation)
//                    sampled at 0, T, 2T, ... <= duration (T = --sampleInterval)
//   events.txt       per-event log of the first --eventFlows flows (formats in README.md):
//                      x t fid seq payload            a data segment handed to IP (socket "Tx")
//                      r t fid seq payload            a data segment arrives at the receiver
//                      d t fid seq payload            a data segment is dropped at the bottleneck
//                      a t fid ack                    a segment (an ACK) arrives at the sender
//                      b t fid bytes                  ns-3's BytesInFlight ("pipe") changed
//                      c t fid cwnd                   CongestionWindow changed (bytes)
//                      g t fid STATE                  CongState changed (CA_OPEN, ...)
//                      l t fid kind before ssthresh cwnd   a loss event (kind recovery|timeout):
//                                                     cwnd before it, ssthresh and cwnd after
//
// Build: see run_ns3.py (g++ against the Debian package libns3-dev, pkg-config).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/ppp-header.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// ----- per-flow observations --------------------------------------------------------------------

struct Flow
{
    uint32_t id = 0;
    double start = 0.0;
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    // latest traced values
    uint32_t cwnd = 0;
    uint32_t cwndInflated = 0; // dcfair's cwnd_bytes includes fast-recovery inflation
    uint32_t ssthresh = std::numeric_limits<uint32_t>::max();
    // counters from the socket's trace sources
    uint64_t dataSegments = 0;   // data segments handed to IP (retransmissions included)
    uint64_t payloadSent = 0;    // their payload bytes
    uint64_t retransmits = 0;    // data segments below the highest byte already sent
    uint64_t timeouts = 0;       // RTO expiries (see OnRto)
    uint64_t fastRecoveries = 0; // entries into CA_RECOVERY
    uint64_t lossEntries = 0;    // entries into CA_LOSS
    uint32_t highestSent = 0;    // one past the highest data byte sent (sequence space)
    bool events = false;         // write this flow's events to events.txt
};

std::vector<Flow> g_flows;
std::ofstream g_events;

// bottleneck observations
Ptr<Queue<Packet>> g_bnQueue;
uint64_t g_drops = 0, g_dropBytes = 0, g_dropsInWindow = 0;
uint64_t g_txEndBytesWindow = 0, g_txEndPkts = 0, g_txEndBytes = 0;
double g_windowStart = 0.0, g_duration = 0.0;
uint64_t g_tcDrops = 0; // packets the switch's traffic-control layer dropped (must stay 0)

std::string
Fmt(double t)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(9) << t;
    return s.str();
}

// ----- trace sinks ------------------------------------------------------------------------------

void
OnCwnd(Flow* f, uint32_t, uint32_t v)
{
    f->cwnd = v;
    if (f->events)
    {
        g_events << "c " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " " << v << "\n";
    }
}

void
OnCwndInflated(Flow* f, uint32_t, uint32_t v)
{
    f->cwndInflated = v;
}

void
OnSsthresh(Flow* f, uint32_t, uint32_t v)
{
    f->ssthresh = v;
}

// Written once the event that entered CA_RECOVERY or CA_LOSS has finished (ScheduleNow runs
// after it, at the same time), when ssthresh and cwnd hold their new values. `before` is the
// congestion window when the state changed: the window at the loss (fast recovery sets
// ssthresh and cwnd after the state; a timeout sets ssthresh before the state, cwnd after).
// ssthresh is logged here and not from its own trace source, which fires only when the value
// changes (a flow that loses at the same window every time would show one change).
void
LogLoss(Flow* f, std::string kind, uint32_t before)
{
    g_events << "l " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " " << kind << " "
             << before << " " << f->ssthresh << " " << f->cwnd << "\n";
}

void
OnCongState(Flow* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v)
{
    if (v == TcpSocketState::CA_RECOVERY)
    {
        f->fastRecoveries++;
    }
    if (v == TcpSocketState::CA_LOSS)
    {
        f->lossEntries++;
    }
    if (f->events)
    {
        g_events << "g " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " "
                 << TcpSocketState::TcpCongStateName[v] << "\n";
        if (v == TcpSocketState::CA_RECOVERY || v == TcpSocketState::CA_LOSS)
        {
            std::string kind = v == TcpSocketState::CA_RECOVERY ? "recovery" : "timeout";
            Simulator::ScheduleNow(&LogLoss, f, kind, f->cwnd);
        }
    }
}

// TcpSocketBase::ReTxTimeout doubles m_rto (capped at 60 s) and nothing else sets it to exactly
// twice its previous value (the other writers recompute it from the RTT estimator), so an
// RTO change to min(2 old, 60 s) is an expiry. Expiries while already at the 60 s cap leave
// the value unchanged and are not seen (never reached in these scenarios).
void
OnRto(Flow* f, Time o, Time v)
{
    if (o.IsStrictlyPositive() && (v == o + o || (v == Seconds(60) && o < v && o + o > v)))
    {
        f->timeouts++;
    }
}

void
OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    uint32_t seq = h.GetSequenceNumber().GetValue();
    f->dataSegments++;
    f->payloadSent += len;
    if (seq < f->highestSent)
    {
        f->retransmits++;
    }
    if (seq + len > f->highestSent)
    {
        f->highestSent = seq + len;
    }
    if (f->events)
    {
        g_events << "x " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " " << seq << " "
                 << len << "\n";
    }
}

// The flow a frame at the bottleneck belongs to (its TCP destination port - 5000), its sequence
// number and payload; false for anything else. Frames there carry their PPP header.
bool
Classify(Ptr<const Packet> p, uint32_t* flow, uint32_t* seq, uint32_t* len)
{
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    Ipv4Header ip;
    TcpHeader tcp;
    if (c->RemoveHeader(ppp) == 0 || c->RemoveHeader(ip) == 0 || ip.GetProtocol() != 6 ||
        c->RemoveHeader(tcp) == 0)
    {
        return false;
    }
    uint32_t port = tcp.GetDestinationPort();
    if (port < 5000 || port - 5000 >= g_flows.size())
    {
        return false;
    }
    *flow = port - 5000;
    *seq = tcp.GetSequenceNumber().GetValue();
    *len = c->GetSize();
    return true;
}

void
OnBottleneckDrop(Ptr<const Packet> p)
{
    uint32_t flow, seq, len;
    if (Classify(p, &flow, &seq, &len) && len > 0 && g_flows[flow].events)
    {
        g_events << "d " << Fmt(Simulator::Now().GetSeconds()) << " " << flow << " " << seq << " "
                 << len << "\n";
    }
    g_drops++;
    g_dropBytes += p->GetSize();
    if (Simulator::Now().GetSeconds() >= g_windowStart)
    {
        g_dropsInWindow++;
    }
}

void
OnBottleneckTxEnd(Ptr<const Packet> p)
{
    g_txEndPkts++;
    g_txEndBytes += p->GetSize();
    double t = Simulator::Now().GetSeconds();
    if (t >= g_windowStart && t <= g_duration)
    {
        g_txEndBytesWindow += p->GetSize();
    }
}

// Data segments of the event flows as they arrive at the receiver (its device's MacRx, which
// hands over the frame with its PPP header).
void
OnReceiverMacRx(Ptr<const Packet> p)
{
    uint32_t flow, seq, len;
    if (Classify(p, &flow, &seq, &len) && len > 0 && g_flows[flow].events)
    {
        g_events << "r " << Fmt(Simulator::Now().GetSeconds()) << " " << flow << " " << seq << " "
                 << len << "\n";
    }
}

void
OnTcDrop(Ptr<const Packet>)
{
    g_tcDrops++;
}

// ns-3's own estimate of the data in flight (RFC 6675 "pipe", TcpTxBuffer::BytesInFlight),
// which decides what the sender may send.
void
OnBytesInFlight(Flow* f, uint32_t, uint32_t v)
{
    if (f->events)
    {
        g_events << "b " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " " << v << "\n";
    }
}

// Segments arriving at the sender (ACKs): the acknowledgment number.
void
OnRx(Flow* f, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (f->events)
    {
        g_events << "a " << Fmt(Simulator::Now().GetSeconds()) << " " << f->id << " "
                 << h.GetAckNumber().GetValue() << "\n";
    }
}

void
HookSocket(Flow* f)
{
    Ptr<Socket> s = f->app->GetSocket();
    NS_ABORT_MSG_IF(!s, "flow " << f->id << ": BulkSendApplication has no socket yet");
    bool ok = true;
    ok &= s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, f));
    ok &= s->TraceConnectWithoutContext("CongestionWindowInflated",
                                        MakeBoundCallback(&OnCwndInflated, f));
    ok &= s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, f));
    ok &= s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    ok &= s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, f));
    ok &= s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    ok &= s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, f));
    ok &= s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&OnBytesInFlight, f));
    NS_ABORT_MSG_IF(!ok, "flow " << f->id << ": could not connect a TCP trace source");
}

// ----- periodic samples (dcfair's timeseries.csv) -----------------------------------------------

std::ofstream g_series;
std::string g_portName;

void
Sample(Time interval, uint64_t k)
{
    double t = Simulator::Now().GetSeconds();
    std::string ts = Fmt(t);
    g_series << ts << ",queue_pkts," << g_portName << ",," << g_bnQueue->GetNPackets() << "\n";
    g_series << ts << ",queue_bytes," << g_portName << ",," << g_bnQueue->GetNBytes() << "\n";
    for (auto& f : g_flows)
    {
        g_series << ts << ",delivered_bytes,," << f.id << "," << f.sink->GetTotalRx() << "\n";
    }
    for (auto& f : g_flows)
    {
        g_series << ts << ",cwnd_bytes,," << f.id << "," << f.cwndInflated << "\n";
    }
    Time next = TimeStep(interval.GetTimeStep() * (k + 1));
    if (next <= Seconds(g_duration))
    {
        Simulator::Schedule(next - Simulator::Now(), &Sample, interval, k + 1);
    }
}

std::vector<uint64_t> g_rxAtWindowStart;

void
MarkWindowStart()
{
    g_rxAtWindowStart.clear();
    for (auto& f : g_flows)
    {
        g_rxAtWindowStart.push_back(f.sink->GetTotalRx());
    }
}

std::string
JsonStr(const std::string& s)
{
    std::string o = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
        }
        o += c;
    }
    return o + "\"";
}

} // namespace

int
main(int argc, char* argv[])
{
    // topology (dcfair [topology], kind = "dumbbell")
    uint32_t senders = 1;
    uint32_t flows = 0; // 0: one per sender
    double accessRateMbps = 1000.0;
    double accessDelayUs = 10.0;
    double bottleneckRateMbps = 100.0;
    double bottleneckDelayUs = 1000.0;
    uint32_t bufferPkts = 20;
    uint32_t hostBufferPkts = 1000;
    // flows
    double startMin = 0.0;
    double startMax = 0.0;
    // TCP
    std::string cc = "newreno";
    std::string recovery = "classic";
    uint32_t segmentSize = 1460;
    uint32_t initCwnd = 10;
    uint32_t sndBuf = 4194304;
    uint32_t rcvBuf = 4194304;
    bool windowScaling = true;
    bool sack = false;
    bool timestamps = false;
    bool limitedTransmit = true;
    uint32_t dupThresh = 3;
    uint32_t delAckCount = 1;
    double delAckTimeoutMs = 200.0;
    double minRtoMs = 200.0;
    double clockGranularityMs = 1.0;
    double initialRtoS = 1.0;
    double connTimeoutS = 1.0;
    uint32_t dataRetries = 1000000;
    uint32_t sendSize = 1460 * 10;
    // pacing
    bool pacing = false;
    uint32_t pacingSsRatio = 100;
    uint32_t pacingCaRatio = 100;
    bool paceInitialWindow = false;
    double maxPacingRateGbps = 4.0;
    // CUBIC
    double cubicC = 0.4;
    double cubicBeta = 0.7;
    bool cubicFastConvergence = true;
    bool hystart = false;
    double cubicDeltaMs = 10.0;
    uint32_t cubicCntClamp = 20;
    // run
    double duration = 30.0;
    double window = 20.0;
    double sampleInterval = 0.001;
    uint32_t run = 1;
    uint32_t eventFlows = 1;
    std::string outDir = ".";

    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "sender hosts", senders);
    cmd.AddValue("flows", "TCP flows (0: one per sender); flow i from sender i mod senders", flows);
    cmd.AddValue("accessRateMbps", "sender links, Mbit/s", accessRateMbps);
    cmd.AddValue("accessDelayUs", "sender links' one-way delay, us", accessDelayUs);
    cmd.AddValue("bottleneckRateMbps", "switch-receiver link, Mbit/s", bottleneckRateMbps);
    cmd.AddValue("bottleneckDelayUs", "its one-way delay, us", bottleneckDelayUs);
    cmd.AddValue("bufferPkts", "bottleneck DropTail queue, packets waiting", bufferPkts);
    cmd.AddValue("hostBufferPkts", "every other device queue, packets", hostBufferPkts);
    cmd.AddValue("startMin", "flow start times uniform in [startMin, startMax], s", startMin);
    cmd.AddValue("startMax", "see startMin", startMax);
    cmd.AddValue("cc", "newreno | cubic", cc);
    cmd.AddValue("recovery", "classic | prr (TcpL4Protocol::RecoveryType)", recovery);
    cmd.AddValue("segmentSize", "TcpSocket::SegmentSize, bytes", segmentSize);
    cmd.AddValue("initCwnd", "TcpSocket::InitialCwnd, segments", initCwnd);
    cmd.AddValue("sndBuf", "TcpSocket::SndBufSize, bytes", sndBuf);
    cmd.AddValue("rcvBuf", "TcpSocket::RcvBufSize, bytes", rcvBuf);
    cmd.AddValue("windowScaling", "TcpSocketBase::WindowScaling", windowScaling);
    cmd.AddValue("sack", "TcpSocketBase::Sack", sack);
    cmd.AddValue("timestamps", "TcpSocketBase::Timestamp (adds 12 option bytes per segment)",
                 timestamps);
    cmd.AddValue("limitedTransmit", "TcpSocketBase::LimitedTransmit", limitedTransmit);
    cmd.AddValue("dupThresh", "TcpSocketBase::ReTxThreshold", dupThresh);
    cmd.AddValue("delAckCount", "TcpSocket::DelAckCount (1: ACK every segment)", delAckCount);
    cmd.AddValue("delAckTimeoutMs", "TcpSocket::DelAckTimeout, ms", delAckTimeoutMs);
    cmd.AddValue("minRtoMs", "TcpSocketBase::MinRto, ms", minRtoMs);
    cmd.AddValue("clockGranularityMs", "TcpSocketBase::ClockGranularity, ms", clockGranularityMs);
    cmd.AddValue("initialRtoS", "RttEstimator::InitialEstimation, s", initialRtoS);
    cmd.AddValue("connTimeoutS", "TcpSocket::ConnTimeout (first SYN timeout), s", connTimeoutS);
    cmd.AddValue("dataRetries", "TcpSocket::DataRetries", dataRetries);
    cmd.AddValue("sendSize", "BulkSendApplication::SendSize, bytes", sendSize);
    cmd.AddValue("pacing", "TcpSocketState::EnablePacing", pacing);
    cmd.AddValue("pacingSsRatio", "TcpSocketState::PacingSsRatio, percent", pacingSsRatio);
    cmd.AddValue("pacingCaRatio", "TcpSocketState::PacingCaRatio, percent", pacingCaRatio);
    cmd.AddValue("paceInitialWindow", "TcpSocketState::PaceInitialWindow", paceInitialWindow);
    cmd.AddValue("maxPacingRateGbps", "TcpSocketState::MaxPacingRate, Gbit/s", maxPacingRateGbps);
    cmd.AddValue("cubicC", "TcpCubic::C", cubicC);
    cmd.AddValue("cubicBeta", "TcpCubic::Beta", cubicBeta);
    cmd.AddValue("cubicFastConvergence", "TcpCubic::FastConvergence", cubicFastConvergence);
    cmd.AddValue("hystart", "TcpCubic::HyStart", hystart);
    cmd.AddValue("cubicDeltaMs", "TcpCubic::CubicDelta, ms", cubicDeltaMs);
    cmd.AddValue("cubicCntClamp", "TcpCubic::CntClamp", cubicCntClamp);
    cmd.AddValue("duration", "simulated time, s", duration);
    cmd.AddValue("window", "metrics over [duration - window, duration], s", window);
    cmd.AddValue("sampleInterval", "time-series interval, s", sampleInterval);
    cmd.AddValue("run", "RngRun (the seed; RngSeed stays 1)", run);
    cmd.AddValue("eventFlows", "flows 0 .. eventFlows-1 go to events.txt", eventFlows);
    cmd.AddValue("outDir", "output directory (must exist)", outDir);
    cmd.Parse(argc, argv);

    if (flows == 0)
    {
        flows = senders;
    }
    NS_ABORT_MSG_IF(senders == 0 || bufferPkts == 0 || hostBufferPkts == 0, "bad sizes");
    NS_ABORT_MSG_IF(!(duration > 0 && window > 0 && window <= duration), "bad duration/window");
    NS_ABORT_MSG_IF(!(sampleInterval > 0), "bad sampleInterval");
    NS_ABORT_MSG_IF(startMax < startMin, "startMax < startMin");
    NS_ABORT_MSG_IF(cc != "newreno" && cc != "cubic", "cc must be newreno or cubic");
    NS_ABORT_MSG_IF(recovery != "classic" && recovery != "prr", "recovery must be classic or prr");
    g_duration = duration;
    g_windowStart = duration - window;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);

    // ----- TCP: every attribute the comparison depends on ---------------------------------------
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(cc == "cubic" ? TcpCubic::GetTypeId()
                                                 : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RttEstimatorType",
                       TypeIdValue(RttMeanDeviation::GetTypeId()));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(initialRtoS)));
    Config::SetDefault("ns3::RttMeanDeviation::Alpha", DoubleValue(0.125));
    Config::SetDefault("ns3::RttMeanDeviation::Beta", DoubleValue(0.25));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold",
                       UintegerValue(std::numeric_limits<uint32_t>::max()));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(MicroSeconds(static_cast<int64_t>(delAckTimeoutMs * 1000))));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(connTimeoutS)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(6));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupThresh));
    Config::SetDefault("ns3::TcpSocketBase::MinRto",
                       TimeValue(MicroSeconds(static_cast<int64_t>(minRtoMs * 1000))));
    Config::SetDefault(
        "ns3::TcpSocketBase::ClockGranularity",
        TimeValue(MicroSeconds(static_cast<int64_t>(clockGranularityMs * 1000))));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("Off"));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(pacing));
    Config::SetDefault("ns3::TcpSocketState::PacingSsRatio", UintegerValue(pacingSsRatio));
    Config::SetDefault("ns3::TcpSocketState::PacingCaRatio", UintegerValue(pacingCaRatio));
    Config::SetDefault("ns3::TcpSocketState::PaceInitialWindow", BooleanValue(paceInitialWindow));
    Config::SetDefault("ns3::TcpSocketState::MaxPacingRate",
                       DataRateValue(DataRate(static_cast<uint64_t>(maxPacingRateGbps * 1e9))));
    Config::SetDefault("ns3::TcpCubic::C", DoubleValue(cubicC));
    Config::SetDefault("ns3::TcpCubic::Beta", DoubleValue(cubicBeta));
    Config::SetDefault("ns3::TcpCubic::FastConvergence", BooleanValue(cubicFastConvergence));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    Config::SetDefault("ns3::TcpCubic::CubicDelta",
                       TimeValue(MicroSeconds(static_cast<int64_t>(cubicDeltaMs * 1000))));
    Config::SetDefault("ns3::TcpCubic::CntClamp", UintegerValue(cubicCntClamp));

    // ----- topology -----------------------------------------------------------------------------
    NodeContainer hosts;
    hosts.Create(senders);
    Ptr<Node> sw = CreateObject<Node>();
    Ptr<Node> rcv = CreateObject<Node>();

    auto rate = [](double mbps) { return DataRate(static_cast<uint64_t>(std::llround(mbps * 1e6))); };
    auto delay = [](double us) { return NanoSeconds(static_cast<int64_t>(std::llround(us * 1e3))); };

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(rate(accessRateMbps)));
    access.SetDeviceAttribute("Mtu", UintegerValue(1500));
    access.SetDeviceAttribute("InterframeGap", TimeValue(Seconds(0)));
    access.SetChannelAttribute("Delay", TimeValue(delay(accessDelayUs)));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, hostBufferPkts)));
    access.DisableFlowControl();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(rate(bottleneckRateMbps)));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(1500));
    bottleneck.SetDeviceAttribute("InterframeGap", TimeValue(Seconds(0)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(delay(bottleneckDelayUs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, hostBufferPkts)));
    bottleneck.DisableFlowControl();

    std::vector<NetDeviceContainer> accessDevs;
    for (uint32_t i = 0; i < senders; ++i)
    {
        accessDevs.push_back(access.Install(hosts.Get(i), sw));
    }
    NetDeviceContainer bnDevs = bottleneck.Install(sw, rcv);

    // The bottleneck (switch -> receiver) queue gets B packets; its reverse (receiver -> switch)
    // keeps the host buffer, as dcfair's dumbbell keeps FIFOs on its reverse ports.
    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    g_bnQueue = bnDev->GetQueue();
    g_bnQueue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, bufferPkts));

    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(sw);
    stack.Install(rcv);

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

    // No queue disc anywhere: the device queues above are the only buffers.
    for (Ptr<Node> n : {sw, rcv})
    {
        Ptr<TrafficControlLayer> tc = n->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < n->GetNDevices(); ++d)
        {
            NS_ABORT_MSG_IF(tc->GetRootQueueDiscOnDevice(n->GetDevice(d)),
                            "a queue disc is installed on node " << n->GetId() << " device " << d);
        }
    }
    for (uint32_t i = 0; i < senders; ++i)
    {
        Ptr<TrafficControlLayer> tc = hosts.Get(i)->GetObject<TrafficControlLayer>();
        NS_ABORT_MSG_IF(tc->GetRootQueueDiscOnDevice(accessDevs[i].Get(0)),
                        "a queue disc is installed on sender " << i);
    }
    sw->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("Drop",
                                                                     MakeCallback(&OnTcDrop));
    g_bnQueue->TraceConnectWithoutContext("Drop", MakeCallback(&OnBottleneckDrop));
    bnDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBottleneckTxEnd));
    bnDevs.Get(1)->TraceConnectWithoutContext("MacRx", MakeCallback(&OnReceiverMacRx));
    g_portName = "sw->r0";

    // ----- flows --------------------------------------------------------------------------------
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(startMin));
    startRv->SetAttribute("Max", DoubleValue(startMax));
    startRv->SetStream(1);

    Ipv4Address rcvAddr = bnIfs.GetAddress(1);
    g_flows.resize(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        Flow& f = g_flows[i];
        f.id = i;
        f.events = i < eventFlows;
        f.start = startMax > startMin ? startRv->GetValue() : startMin;
        uint16_t port = static_cast<uint16_t>(5000 + i);

        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(rcv);
        s.Start(Seconds(0));
        f.sink = DynamicCast<PacketSink>(s.Get(0));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rcvAddr, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer a = bulk.Install(hosts.Get(i % senders));
        a.Start(Seconds(f.start));
        f.app = DynamicCast<BulkSendApplication>(a.Get(0));
        // The application creates its socket when it starts; hook the traces right after,
        // before the SYN-ACK can arrive (the first cwnd is set on the SYN-ACK).
        Simulator::Schedule(Seconds(f.start) + NanoSeconds(1), &HookSocket, &f);
    }

    // ----- outputs ------------------------------------------------------------------------------
    g_events.open(outDir + "/events.txt");
    g_series.open(outDir + "/timeseries.csv");
    NS_ABORT_MSG_IF(!g_events || !g_series, "cannot write into " << outDir);
    g_series << "time_s,metric,port,flow_id,value\n";
    Time interval = Seconds(sampleInterval);
    Simulator::Schedule(Seconds(0), &Sample, interval, uint64_t(0));
    Simulator::Schedule(Seconds(g_windowStart), &MarkWindowStart);

    auto wall0 = std::chrono::steady_clock::now();
    // One nanosecond past the end so that events at exactly `duration` (the last sample) run.
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    Simulator::Run();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    // ----- per-flow table and summary -----------------------------------------------------------
    std::ofstream fcsv(outDir + "/flows.csv");
    fcsv << "flow_id,src,dst,start_s,bytes_sent,bytes_delivered,bytes_in_window,"
            "data_segments,retransmits,timeouts,fast_recoveries,loss_entries\n";
    double sumX = 0, sumX2 = 0;
    uint64_t totalRetx = 0, totalTimeouts = 0, totalFr = 0;
    for (auto& f : g_flows)
    {
        uint64_t rx = f.sink->GetTotalRx();
        uint64_t inWin = rx - (g_rxAtWindowStart.empty() ? 0 : g_rxAtWindowStart[f.id]);
        sumX += inWin;
        sumX2 += double(inWin) * double(inWin);
        totalRetx += f.retransmits;
        totalTimeouts += f.timeouts;
        totalFr += f.fastRecoveries;
        fcsv << f.id << ",s" << (f.id % senders) << ",r0," << Fmt(f.start) << "," << f.payloadSent
             << "," << rx << "," << inWin << "," << f.dataSegments << "," << f.retransmits << ","
             << f.timeouts << "," << f.fastRecoveries << "," << f.lossEntries << "\n";
    }
    double n = g_flows.size();
    double capacity = bottleneckRateMbps * 1e6;

    std::ofstream js(outDir + "/summary.json");
    js << std::setprecision(17);
    js << "{\n  \"simulator\": \"ns-3\",\n  \"ns3_version\": \"3.37\",\n";
    js << "  \"options\": {";
    {
        std::vector<std::pair<std::string, std::string>> o = {
            {"senders", std::to_string(senders)},
            {"flows", std::to_string(flows)},
            {"accessRateMbps", std::to_string(accessRateMbps)},
            {"accessDelayUs", std::to_string(accessDelayUs)},
            {"bottleneckRateMbps", std::to_string(bottleneckRateMbps)},
            {"bottleneckDelayUs", std::to_string(bottleneckDelayUs)},
            {"bufferPkts", std::to_string(bufferPkts)},
            {"hostBufferPkts", std::to_string(hostBufferPkts)},
            {"startMin", std::to_string(startMin)},
            {"startMax", std::to_string(startMax)},
            {"cc", JsonStr(cc)},
            {"recovery", JsonStr(recovery)},
            {"segmentSize", std::to_string(segmentSize)},
            {"initCwnd", std::to_string(initCwnd)},
            {"sndBuf", std::to_string(sndBuf)},
            {"rcvBuf", std::to_string(rcvBuf)},
            {"windowScaling", windowScaling ? "true" : "false"},
            {"sack", sack ? "true" : "false"},
            {"timestamps", timestamps ? "true" : "false"},
            {"limitedTransmit", limitedTransmit ? "true" : "false"},
            {"dupThresh", std::to_string(dupThresh)},
            {"delAckCount", std::to_string(delAckCount)},
            {"delAckTimeoutMs", std::to_string(delAckTimeoutMs)},
            {"minRtoMs", std::to_string(minRtoMs)},
            {"clockGranularityMs", std::to_string(clockGranularityMs)},
            {"initialRtoS", std::to_string(initialRtoS)},
            {"connTimeoutS", std::to_string(connTimeoutS)},
            {"dataRetries", std::to_string(dataRetries)},
            {"sendSize", std::to_string(sendSize)},
            {"pacing", pacing ? "true" : "false"},
            {"pacingSsRatio", std::to_string(pacingSsRatio)},
            {"pacingCaRatio", std::to_string(pacingCaRatio)},
            {"paceInitialWindow", paceInitialWindow ? "true" : "false"},
            {"maxPacingRateGbps", std::to_string(maxPacingRateGbps)},
            {"cubicC", std::to_string(cubicC)},
            {"cubicBeta", std::to_string(cubicBeta)},
            {"cubicFastConvergence", cubicFastConvergence ? "true" : "false"},
            {"hystart", hystart ? "true" : "false"},
            {"cubicDeltaMs", std::to_string(cubicDeltaMs)},
            {"cubicCntClamp", std::to_string(cubicCntClamp)},
            {"duration", std::to_string(duration)},
            {"window", std::to_string(window)},
            {"sampleInterval", std::to_string(sampleInterval)},
            {"run", std::to_string(run)},
        };
        for (size_t i = 0; i < o.size(); ++i)
        {
            js << (i ? ", " : "") << JsonStr(o[i].first) << ": " << o[i].second;
        }
    }
    js << "},\n";
    js << "  \"wall_time_s\": " << wall << ",\n";
    js << "  \"metrics\": {\n";
    js << "    \"utilization\": " << g_txEndBytesWindow * 8.0 / (capacity * window) << ",\n";
    js << "    \"jain_index\": " << (sumX2 > 0 ? sumX * sumX / (n * sumX2) : 0.0) << ",\n";
    js << "    \"goodput_bps_mean\": " << sumX * 8.0 / window / n << ",\n";
    js << "    \"drops\": " << g_drops << ",\n";
    js << "    \"drops_in_window\": " << g_dropsInWindow << ",\n";
    js << "    \"drop_bytes\": " << g_dropBytes << ",\n";
    js << "    \"tc_layer_drops\": " << g_tcDrops << ",\n";
    js << "    \"bottleneck_pkts_out\": " << g_txEndPkts << ",\n";
    js << "    \"bottleneck_bytes_out\": " << g_txEndBytes << ",\n";
    js << "    \"retransmits\": " << totalRetx << ",\n";
    js << "    \"timeouts\": " << totalTimeouts << ",\n";
    js << "    \"fast_recoveries\": " << totalFr << "\n";
    js << "  }\n}\n";
    g_events.close();
    g_series.close();
    Simulator::Destroy();
    return (g_tcDrops == 0) ? 0 : 3;
}
