// A dumbbell in ns-3 matched to tcpfair's benchmark scenarios (issue 13), for the side by
// side in docs/performance.md: N bulk TCP flows (NewReno, SACK, timestamps, delayed ACKs,
// MSS 1448 = MTU 1500) share one drop-tail bottleneck of a given rate with a buffer of one
// bandwidth-delay product, every flow with the same base RTT. Prints the bottleneck's
// packet counts, ns-3's event count, and the wall and CPU time of Simulator::Run.
//
// Build (Debian: apt-get install libns3-dev, ns-3.37) and run:
//   ns3_dumbbell FLOWS RATE_MBIT RTT_MS DURATION_S [BUFFER_BYTES]
//
// Matching tcpfair: the sender's access link carries a quarter of the RTT each way, the
// receiver's another quarter, the bottleneck none (tcpfair: RTT/2 before the bottleneck, the
// rest on the return path), so the base RTT is the same; access links run at 100x the
// bottleneck rate and never queue. The buffer (in packets: buffer / 1500) is a FIFO queue
// discipline in front of the bottleneck device, whose own queue holds one packet (ns-3's
// usual drop-tail setup; without a queue discipline, overflows are dropped by the
// traffic-control layer where no device trace sees them). Host buffers: 2 x the buffer, at
// least Linux's default 6 MB (tcpfair's default rmem/wmem).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

using namespace ns3;

namespace
{
uint64_t g_accepted = 0; // packets the bottleneck's queue accepted (data and any ACKs)
uint64_t g_dropped = 0;  // packets it refused
uint64_t g_sent = 0;     // packets that finished serialization by the end

void
Accepted(Ptr<const QueueDiscItem>)
{
    ++g_accepted;
}

void
Dropped(Ptr<const QueueDiscItem>)
{
    ++g_dropped;
}

void
Sent(Ptr<const Packet>)
{
    ++g_sent;
}

std::string
Mbps(double mbit)
{
    return std::to_string(static_cast<uint64_t>(mbit * 1e6)) + "bps";
}

void
Usage()
{
    std::fprintf(stderr,
                 "usage: ns3_dumbbell FLOWS RATE_MBIT RTT_MS DURATION_S [BUFFER_BYTES]\n"
                 "  FLOWS 1..10000, RATE_MBIT > 0, RTT_MS > 0, DURATION_S > 0;\n"
                 "  BUFFER_BYTES defaults to one bandwidth-delay product\n");
    std::exit(2);
}
} // namespace

int
main(int argc, char* argv[])
{
    if (argc < 5 || argc > 6)
    {
        Usage();
    }
    const long flows = std::strtol(argv[1], nullptr, 10);
    const double rate = std::strtod(argv[2], nullptr);
    const double rtt_ms = std::strtod(argv[3], nullptr);
    const double duration = std::strtod(argv[4], nullptr);
    if (flows < 1 || flows > 10000 || !(rate > 0) || !(rtt_ms > 0) || !(duration > 0))
    {
        Usage();
    }
    const double bdp = rate * 1e6 / 8 * rtt_ms / 1e3;
    const double buffer = argc == 6 ? std::strtod(argv[5], nullptr) : bdp;
    const uint32_t buffer_pkts = std::max<uint32_t>(1, static_cast<uint32_t>(buffer / 1500));
    const uint32_t hostbuf =
        std::max<uint32_t>(6000000, static_cast<uint32_t>(std::min(2 * buffer, 2e9)));

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(hostbuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(hostbuf));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));

    NodeContainer senders, receivers, routers;
    senders.Create(flows);
    receivers.Create(flows);
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    const Time quarter = MilliSeconds(1) * (rtt_ms / 4);
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(Mbps(rate * 100)));
    access.SetChannelAttribute("Delay", TimeValue(quarter));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", StringValue(Mbps(rate)));
    neck.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    neck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    TrafficControlHelper tch;
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    NetDeviceContainer mid = neck.Install(routers.Get(0), routers.Get(1));
    addr.Assign(mid);
    addr.NewNetwork();
    tch.Uninstall(mid);
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize",
                          StringValue(std::to_string(buffer_pkts) + "p"));
    Ptr<QueueDisc> qdisc = fifo.Install(mid.Get(0)).Get(0);
    std::vector<Ipv4Address> sinks;
    for (long i = 0; i < flows; ++i)
    {
        NetDeviceContainer l = access.Install(senders.Get(i), routers.Get(0));
        addr.Assign(l);
        addr.NewNetwork();
        tch.Uninstall(l);
        NetDeviceContainer r = access.Install(routers.Get(1), receivers.Get(i));
        Ipv4InterfaceContainer ri = addr.Assign(r);
        addr.NewNetwork();
        tch.Uninstall(r);
        sinks.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5001;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(receivers).Start(Seconds(0));
    for (long i = 0; i < flows; ++i)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(1448 * 64));
        bulk.Install(senders.Get(i)).Start(Seconds(0));
    }

    Ptr<NetDevice> dev = mid.Get(0);
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&Sent));
    qdisc->TraceConnectWithoutContext("Enqueue", MakeCallback(&Accepted));
    qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&Dropped));

    Simulator::Stop(Seconds(duration));
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    const uint64_t accepted = g_accepted;
    std::printf("{\"simulator\": \"ns-3\", \"flows\": %ld, \"rate_mbit\": %g, \"rtt_ms\": %g, "
                "\"duration_s\": %g, \"buffer_packets\": %u, \"bottleneck_packets\": %llu, "
                "\"drops\": %llu, \"transmitted\": %llu, \"utilization\": %.3f, "
                "\"events\": %llu, \"wall_s\": %.3f, \"cpu_s\": %.3f, "
                "\"pkts_per_cpu_s\": %.0f}\n",
                flows,
                rate,
                rtt_ms,
                duration,
                buffer_pkts,
                static_cast<unsigned long long>(accepted),
                static_cast<unsigned long long>(g_dropped),
                static_cast<unsigned long long>(g_sent),
                g_sent * 1500 * 8 / (rate * 1e6 * duration),
                static_cast<unsigned long long>(events),
                wall,
                cpu,
                accepted / std::max(cpu, 1e-9));
    return 0;
}
