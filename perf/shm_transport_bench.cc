// The shared-memory transport on its own, below the executor: two ranks (two threads, each
// with its own bootstrap and its own mapping of one real segment) exchange messages through
// Connection::postSend / peek / release (perf/transport_pair.h has the loops).
//   shm/pingpong/N  one_way_us: the floor for any small-message collective over shm
//   shm/stream/N    one direction, receiver copying out; compare with memcpy/N (the stream
//                   moves every byte twice: into the slot, out of it)
//
//   shm_transport_bench --benchmark_filter=pingpong
#include "transport/shm/shm_transport.h"
#include "transport_pair.h"

int main(int argc, char** argv) {
  using namespace chorus;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static perf::TransportPair pair;
  Status st = perf::connectPair(
      [](Bootstrap* bs, int rank, Deadline d, std::unique_ptr<Transport>* out) {
        static Doorbell doorbells[2];
        std::unique_ptr<ShmTransport> shm;
        CHORUS_RETURN_IF_ERROR(
            ShmTransport::create(bs, {0, 0}, ShmOptions{}, &doorbells[rank], d, &shm));
        *out = std::move(shm);
        return Status::Ok();
      },
      &pair);
  if (!st.ok()) {
    fprintf(stderr, "shm_transport_bench: setting up two shm ranks failed: %s\n",
            st.toString().c_str());
    return 1;
  }
  perf::registerTransport("shm", &pair);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
