// ns-3 mirror of a dcfair leaf-spine run with finite TCP flows, for bench/pfabric.py.
//
// The flows are replayed from a dcfair flows.csv (flow_id, src "h<i>", dst "h<j>", start_s,
// size_bytes): the same pairs, start times and sizes, so both simulators move the same bytes.
//
// Network: `leaves` x `hostsPerLeaf` hosts, `spines` spines, every leaf joined to every spine;
// full-duplex point-to-point links, host links at --hostRate, fabric links at --fabricRate,
// --delay each. Routing: ns-3's global routing with RandomEcmpRouting (a random equal-cost next
// hop per packet), which is dcfair's `routing.mode = "spray"`; ns-3 3.37 has no per-flow ECMP.
//
// Queues: every switch port runs FqCoDelQueueDisc (--flows, --target, --interval, --limit),
// or a FIFO (pfifo) of --limit packets with --qdisc=fifo, or with --qdisc=dctcp DCTCP's
// marking: RedQueueDisc of --limit packets with QW 1 and MinTh = MaxTh = --markK packets,
// ECN marks instead of early drops (UseEcn, no hard drop), as dcfair's DropTail with
// `mark_threshold_pkts` marks on the instantaneous queue; host NICs a FIFO of --hostLimit.
// Devices keep a 1-packet transmit queue so that packets wait in the queue disc (as dcfair's
// port holds them in its discipline), with flow control on (the default).
//
// TCP: NewReno (or DCTCP with --tcp=dctcp, ECN on), 1460-byte segments, initial window --initCwnd,
// minimum RTO --minRto, delayed ACK count 1 (dcfair's default: no delayed ACKs), SACK off,
// timestamps off, receive buffer --rcvBuf. Each flow is a BulkSendApplication with MaxBytes =
// size_bytes to its own PacketSink port; a flow completes when its sink has received them all.
//
// Output: one JSON line on stdout (and in --result): flows, completed, mean FCT, events executed
// (Simulator::GetEventCount), simulated seconds.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace {

struct Flow {
  uint32_t src, dst;
  double start;
  uint64_t size;
  uint64_t received = 0;
  double done = -1;
};

std::vector<Flow> g_flows;

void OnRx(uint32_t i, Ptr<const Packet> p, const Address &) {
  Flow &f = g_flows[i];
  f.received += p->GetSize();
  if (f.done < 0 && f.received >= f.size) f.done = Simulator::Now().GetSeconds();
}

uint32_t HostIndex(const std::string &name) {
  if (name.size() < 2 || name[0] != 'h') {
    std::cerr << "leafspine: host names must be h<i>, got " << name << "\n";
    std::exit(2);
  }
  return std::stoul(name.substr(1));
}

// Reads flow_id,src,dst,...,start_s,...,size_bytes by column name.
void ReadFlows(const std::string &path, uint32_t maxFlows) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "leafspine: cannot read " << path << "\n";
    std::exit(2);
  }
  std::string line;
  std::getline(in, line);
  std::vector<std::string> cols;
  {
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cols.push_back(c);
  }
  auto col = [&](const std::string &n) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == n) return i;
    std::cerr << "leafspine: " << path << " has no column " << n << "\n";
    std::exit(2);
  };
  size_t cs = col("src"), cd = col("dst"), ct = col("start_s"), cz = col("size_bytes");
  while (std::getline(in, line) && g_flows.size() < maxFlows) {
    std::vector<std::string> v;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) v.push_back(c);
    if (v.size() <= cz || v[cz].empty()) continue;
    Flow f;
    f.src = HostIndex(v[cs]);
    f.dst = HostIndex(v[cd]);
    f.start = std::stod(v[ct]);
    f.size = std::stoull(v[cz]);
    g_flows.push_back(f);
  }
}

}  // namespace

int main(int argc, char *argv[]) {
  uint32_t leaves = 9, spines = 4, hostsPerLeaf = 16, maxFlows = 1u << 31;
  std::string result, hostRate = "10Gbps", fabricRate = "40Gbps", delay = "1.5us", flowsCsv, qdisc = "fq_codel",
              tcp = "newreno";
  double duration = 0.1, minRto = 0.001, target = 5e-6, interval = 100e-6;
  uint32_t limit = 1000, hostLimit = 1000, fqFlows = 1024, initCwnd = 2, rcvBuf = 131072, markK = 65;
  bool sack = true, spray = true;
  uint32_t sndBuf = 131072;
  CommandLine cmd;
  cmd.AddValue("leaves", "leaf switches", leaves);
  cmd.AddValue("spines", "spine switches", spines);
  cmd.AddValue("hostsPerLeaf", "hosts per leaf", hostsPerLeaf);
  cmd.AddValue("hostRate", "host link rate", hostRate);
  cmd.AddValue("fabricRate", "leaf-spine link rate", fabricRate);
  cmd.AddValue("delay", "propagation delay of every link", delay);
  cmd.AddValue("flows", "dcfair flows.csv to replay", flowsCsv);
  cmd.AddValue("result", "also write the JSON line to this file", result);
  cmd.AddValue("maxFlows", "replay at most this many flows", maxFlows);
  cmd.AddValue("duration", "simulated seconds", duration);
  cmd.AddValue("qdisc", "switch ports: fq_codel, fifo or dctcp (RED marking at K)", qdisc);
  cmd.AddValue("markK", "--qdisc=dctcp: marking threshold K, packets", markK);
  cmd.AddValue("limit", "switch port queue limit, packets", limit);
  cmd.AddValue("hostLimit", "host NIC queue limit, packets", hostLimit);
  cmd.AddValue("fqFlows", "FqCoDel flow queues", fqFlows);
  cmd.AddValue("target", "CoDel target, seconds", target);
  cmd.AddValue("interval", "CoDel interval, seconds", interval);
  cmd.AddValue("tcp", "newreno or dctcp", tcp);
  cmd.AddValue("minRto", "minimum RTO, seconds", minRto);
  cmd.AddValue("initCwnd", "initial window, segments", initCwnd);
  cmd.AddValue("rcvBuf", "receive buffer, bytes (ns-3 3.37 crashes in TcpRateLinux::SkbSent with 65535 here)", rcvBuf);
  cmd.AddValue("spray", "random equal-cost next hop per packet (else the first)", spray);
  cmd.AddValue("sndBuf", "send buffer, bytes", sndBuf);
  cmd.AddValue("sack", "SACK (ns-3 3.37 crashes in TcpRateLinux::SkbSent without it under reordering)", sack);
  cmd.Parse(argc, argv);
  ReadFlows(flowsCsv, maxFlows);
  if (g_flows.size() > 50000) {
    std::cerr << "leafspine: at most 50000 flows (one sink port each), got " << g_flows.size() << "\n";
    return 2;
  }

  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     StringValue(tcp == "dctcp" ? "ns3::TcpDctcp" : "ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(tcp == "dctcp" ? "On" : "Off"));
  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(spray));

  uint32_t nHosts = leaves * hostsPerLeaf;
  NodeContainer hosts, leafSw, spineSw;
  hosts.Create(nHosts);
  leafSw.Create(leaves);
  spineSw.Create(spines);
  InternetStackHelper stack;
  stack.InstallAll();

  PointToPointHelper hostLink, fabricLink;
  hostLink.SetDeviceAttribute("DataRate", StringValue(hostRate));
  hostLink.SetChannelAttribute("Delay", StringValue(delay));
  hostLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  fabricLink.SetDeviceAttribute("DataRate", StringValue(fabricRate));
  fabricLink.SetChannelAttribute("Delay", StringValue(delay));
  fabricLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

  TrafficControlHelper sw, host;
  std::string lim = std::to_string(limit) + "p";
  if (qdisc == "fq_codel") {
    sw.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue(lim), "Flows", UintegerValue(fqFlows),
                        "Target", StringValue(std::to_string(target * 1e9) + "ns"),
                        "Interval", StringValue(std::to_string(interval * 1e9) + "ns"));
  } else if (qdisc == "dctcp") {
    sw.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(lim), "QW", DoubleValue(1.0),
                        "MinTh", DoubleValue(markK), "MaxTh", DoubleValue(markK), "Gentle", BooleanValue(false),
                        "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false),
                        "MeanPktSize", UintegerValue(1500));
  } else if (qdisc == "fifo") {
    sw.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(lim));
  } else {
    std::cerr << "leafspine: --qdisc must be fq_codel, fifo or dctcp, got " << qdisc << "\n";
    return 2;
  }
  host.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(hostLimit) + "p"));

  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> hostAddr(nHosts);
  for (uint32_t h = 0; h < nHosts; ++h) {
    NetDeviceContainer d = hostLink.Install(hosts.Get(h), leafSw.Get(h / hostsPerLeaf));
    host.Install(d.Get(0));
    sw.Install(d.Get(1));
    Ipv4InterfaceContainer ifs = addr.Assign(d);
    hostAddr[h] = ifs.GetAddress(0);
    addr.NewNetwork();
  }
  for (uint32_t l = 0; l < leaves; ++l) {
    for (uint32_t s = 0; s < spines; ++s) {
      NetDeviceContainer d = fabricLink.Install(leafSw.Get(l), spineSw.Get(s));
      sw.Install(d);
      addr.Assign(d);
      addr.NewNetwork();
    }
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    const Flow &f = g_flows[i];
    if (f.src >= nHosts || f.dst >= nHosts) {
      std::cerr << "leafspine: flow " << i << " names a host beyond " << nHosts << "\n";
      return 2;
    }
    uint16_t port = 10000 + i;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(hosts.Get(f.dst));
    sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[f.dst], port));
    src.SetAttribute("MaxBytes", UintegerValue(f.size));
    src.SetAttribute("SendSize", UintegerValue(1460));
    ApplicationContainer ca = src.Install(hosts.Get(f.src));
    ca.Start(Seconds(f.start));
  }

  Simulator::Stop(Seconds(duration));
  Simulator::Run();
  uint64_t events = Simulator::GetEventCount();
  uint32_t done = 0;
  double fctSum = 0;
  for (const Flow &f : g_flows) {
    if (f.done >= 0) {
      ++done;
      fctSum += f.done - f.start;
    }
  }
  Simulator::Destroy();
  std::ostringstream js;
  js << "{\"flows\": " << g_flows.size() << ", \"completed\": " << done
     << ", \"fct_mean_s\": " << (done ? fctSum / done : 0.0) << ", \"events\": " << events
     << ", \"sim_time_s\": " << duration << "}";
  std::cout << js.str() << std::endl;
  if (!result.empty()) std::ofstream(result) << js.str() << "\n";
  return 0;
}
