// The TCP transport on its own over loopback, below the executor: the same ping-pong and
// streaming loops as shm_transport_bench (perf/transport_pair.h), through its progress thread
// and sockets. Two ranks are two threads of this process, each with its own bootstrap.
//
//   tcp_transport_bench --benchmark_filter=stream
#include "transport/tcp/tcp_transport.h"
#include "transport_pair.h"

int main(int argc, char** argv) {
  using namespace chorus;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static perf::TransportPair pair;
  Status st = perf::connectPair(
      [](Bootstrap* bs, int rank, Deadline d, std::unique_ptr<Transport>* out) {
        Config config;
        CHORUS_RETURN_IF_ERROR(Config::fromEnvironment(&config));
        TcpOptions opts = TcpOptions::fromConfig(config);
        std::vector<bool> reach(2, true);
        reach[size_t(rank)] = false;
        static Doorbell doorbells[2];
        TcpHooks hooks;
        hooks.doorbell = &doorbells[rank];
        std::unique_ptr<TcpTransport> tcp;
        CHORUS_RETURN_IF_ERROR(TcpTransport::create(bs, reach, true, opts, hooks, d, &tcp));
        *out = std::move(tcp);
        return Status::Ok();
      },
      &pair);
  if (!st.ok()) {
    fprintf(stderr, "tcp_transport_bench: setting up two TCP ranks failed: %s\n",
            st.toString().c_str());
    return 1;
  }
  perf::registerTransport("tcp", &pair);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
