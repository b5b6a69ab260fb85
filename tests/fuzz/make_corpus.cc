// Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/) with the real
// encoders, so the seeds stay in the formats the code speaks:
//   make-fuzz-corpus OUT_DIR SOURCE_ROOT    (scripts/fuzz --make-corpus runs it)
// SOURCE_ROOT gives the topology files under topologies/. Each seed is framed the way its
// target reads its input (a selector byte, knobs, then the message); see each fuzz_*.cc.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "topo/estimates_json.h"
#include "topo/topology.h"
#include "transport/tcp/handshake.h"
#include "transport/transport.h"

using namespace chorus;
using namespace chorus::boot;
using Bytes = std::vector<uint8_t>;
namespace fs = std::filesystem;

namespace {

fs::path gOut;
const uint8_t kSecret[kSecretBytes] = {1, 2, 3};
const auth::Nonce kListenerNonce = {42, 43, 44};

void put(const std::string& target, const std::string& name, const Bytes& b) {
  fs::create_directories(gOut / target);
  std::ofstream f(gOut / target / name, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  if (!f) {
    fprintf(stderr, "make-fuzz-corpus: cannot write %s/%s\n", target.c_str(), name.c_str());
    exit(1);
  }
}
void put(const std::string& target, const std::string& name, const std::string& s) {
  put(target, name, Bytes(s.begin(), s.end()));
}
Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
template <class T>
Bytes raw(const T& v) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
  return Bytes(p, p + sizeof v);
}

SockAddr addr(const char* host, int port) {
  SockAddr a;
  if (!resolveHost(host, port, &a).ok()) {
    fprintf(stderr, "make-fuzz-corpus: cannot parse %s\n", host);
    exit(1);
  }
  return a;
}

Hello signedHello(int rank, int size, const std::string& host, const SockAddr& star) {
  Hello h;
  h.rank = rank;
  h.size = size;
  h.pid = 4242;
  h.host = host;
  h.starAddr = star;
  if (!signHello(&h, kSecret, kListenerNonce).ok()) exit(1);
  return h;
}

Bytes dataFrame(uint64_t seq, CollOp op, const Bytes& payload) {
  Writer w;
  encodeDataHeader({seq, 3, op, 0, 0, payload.size()}, &w);
  w.bytes(payload.data(), payload.size());
  return std::move(w.buffer());
}

// The bytes sendFrame puts on a socket for these frames.
Bytes frames(const std::vector<std::pair<uint32_t, Bytes>>& fs) {
  int fd[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0) exit(1);
  for (const auto& [type, p] : fs)
    if (!sendFrame(fd[0], type, p.data(), p.size(), Deadline::after(5)).ok()) exit(1);
  close(fd[0]);
  Bytes out;
  uint8_t buf[4096];
  for (ssize_t n; (n = read(fd[1], buf, sizeof buf)) > 0;) out.insert(out.end(), buf, buf + n);
  close(fd[1]);
  return out;
}

void frameReader() {
  const Bytes hello = encodeHello(signedHello(1, 4, "node1", SockAddr()));
  const Bytes table = encodeTable({addr("10.0.0.1", 29500), {77, "node0"}});
  const Bytes all =
      frames({{FrameType::kChallenge, Bytes(kListenerNonce.begin(), kListenerNonce.end())},
              {kHello, hello},
              {kTable, sealAnswer(kSecret, {}, kListenerNonce, kTable, table)},
              {kData, dataFrame(1, CollOp::Allgather, {1, 2, 3, 4})},
              {kGoodbye, {}}});
  // byte 0: limit (0 = 16 B, 1 = 4 KiB, 2 = 1 GiB); byte 1: piece size - 1.
  put("fuzz_frame_reader", "session_whole", cat({2, 255}, all));
  put("fuzz_frame_reader", "session_bytewise", cat({1, 0}, all));
  put("fuzz_frame_reader", "session_pieces7", cat({2, 6}, all));
  put("fuzz_frame_reader", "over_limit", cat({0, 255}, frames({{kHello, hello}})));
  put("fuzz_frame_reader", "empty_frame", cat({1, 3}, frames({{kReady, {}}})));
  Bytes truncated = frames({{kError, encodeError(Status::Timeout("late"))}});
  truncated.resize(truncated.size() - 3);
  put("fuzz_frame_reader", "truncated", cat({2, 255}, truncated));
  put("fuzz_frame_reader", "bad_magic",
      Bytes{2, 255, 'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r',
            '\n'});
  Bytes huge = frames({{kData, {}}});
  huge[8] = huge[9] = huge[10] = huge[11] = 0xff;  // a 4 GiB length
  put("fuzz_frame_reader", "huge_length", cat({2, 255}, huge));
}

void bootstrapWire() {
  const std::string t = "fuzz_bootstrap_wire";
  put(t, "hello_v4", cat({0}, encodeHello(signedHello(0, 8, "node0", addr("10.1.2.3", 40000)))));
  put(t, "hello_v6",
      cat({0}, encodeHello(signedHello(3, 8, "node3.example", addr("fe80::1%1", 40001)))));
  put(t, "hello_no_star", cat({0}, encodeHello(signedHello(5, 6, "", SockAddr()))));
  Hello old = signedHello(1, 2, "n", SockAddr());
  old.version = 1;
  put(t, "hello_old_version", cat({0}, encodeHello(old)));
  Bytes cut = encodeHello(signedHello(2, 4, "node2", SockAddr()));
  cut.resize(cut.size() - 10);
  put(t, "hello_truncated", cat({0}, cut));
  put(t, "table_v4", cat({1}, encodeTable({addr("192.168.0.9", 1234), {99, "root"}})));
  put(t, "table_v6", cat({1}, encodeTable({addr("2001:db8::7", 65535), {1, "h"}})));
  put(t, "error_remote", cat({2}, encodeError(Status::RemoteError("rank 2 left"))));
  put(t, "error_internal", cat({2}, encodeError(Status::Internal(std::string(300, 'x')))));
  put(t, "data_allgather", cat({3}, dataFrame(7, CollOp::Allgather, {9, 9, 9, 9, 9, 9, 9, 9})));
  put(t, "data_broadcast", cat({3}, dataFrame(~0ull, CollOp::Broadcast, {})));
  put(t, "data_barrier", cat({3}, dataFrame(0, CollOp::Barrier, {})));
  const Bytes table = encodeTable({addr("10.0.0.1", 29500), {77, "node0"}});
  put(t, "answer_table", cat({4}, sealAnswer(kSecret, {}, kListenerNonce, kTable, table)));
  put(t, "answer_short", Bytes{4, 1, 2, 3});
}

void uniqueId() {
  UniqueId id;
  encodeUniqueId(addr("10.0.0.1", 29500), kSecret, false, &id);
  const Bytes v4(id.bytes, id.bytes + sizeof id.bytes);
  put("fuzz_unique_id", "ipv4", v4);
  encodeUniqueId(addr("fe80::2%1", 1), kSecret, false, &id);
  put("fuzz_unique_id", "ipv6_scoped", Bytes(id.bytes, id.bytes + sizeof id.bytes));
  encodeUniqueId(addr("::1", 65535), kSecret, false, &id);
  put("fuzz_unique_id", "ipv6_loopback", Bytes(id.bytes, id.bytes + sizeof id.bytes));
  Bytes later = v4;
  later[4] = 2;  // a version this build does not know
  put("fuzz_unique_id", "other_version", later);
  Bytes nofamily = v4;
  nofamily[8] = 0;
  put("fuzz_unique_id", "no_address", nofamily);
  put("fuzz_unique_id", "zeros", Bytes(128, 0));
}

void tcpHandshake() {
  // HELLO from rank 0 to rank 1, stream 1 of 2, 512 KiB chunks; knobs: rank 1, reach all,
  // 2 streams, chunk choice 2 (512 KiB); then a data header and a goodbye.
  TcpHello h;
  if (!makeHello(kTcpHelloConnect, 0, 1, 1, 2, 512 << 10, 16, &h).ok()) exit(1);
  WireHeader data{1024, 3, -1, 4096, 1, 7, 0, 0};
  WireHeader bye{};
  bye.kind = kTcpGoodbye;
  WireHeader bad = data;
  bad.bytes = 1u << 31;
  const std::string t = "fuzz_tcp_handshake";
  put(t, "connect", cat(cat(raw(h), {1, 0xff, 1, 2}), cat(cat(raw(data), raw(bye)), raw(bad))));
  // ACCEPT from rank 1 to rank 0 (the target's HELLO is from this rank to rank 1, stream 0).
  TcpHello a;
  if (!makeHello(kTcpHelloAccept, 1, 0, 0, 2, 512 << 10, 16, &a).ok()) exit(1);
  put(t, "accept", cat(raw(a), {0, 0xff, 1, 2}));
  h.version = 1;
  put(t, "old_version", cat(raw(h), {1, 0xff, 1, 2}));
  put(t, "http", std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
}

std::string readFile(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void topology(const fs::path& root) {
  for (const auto& e : fs::directory_iterator(root / "topologies"))
    if (e.path().extension() == ".topo")
      put("fuzz_topology", e.path().filename().string(), readFile(e.path()));
  put("fuzz_topology", "overrides.topo",
      "chorus-topology 1\n"
      "memory cache_mib=32 all_miss_mib=128 miss_gbs=20\nexecutor step_us=0.5\n"
      "host a id=boot-a sockets=2 numa=2\n"
      "  gpu 0000:01:00.0 socket=0 pci=sw0\n  gpu 0000:02:00.0 socket=1\n"
      "  nic ib0 bus=0000:03:00.0 socket=1 rdma=1 speed_gbps=200\n"
      "  nvlink 0-1\n  path gpu 0 nic 0 pcie_switch\nend\n"
      "host b count=2\nend\nrank 0 1 1\nrank 1 0 -1\nrank 2 0 -1\n");
  put("fuzz_topology", "per_host.topo", "host h count=3 sockets=1\nend\nranks per_host 2\n");
}

void tuneFile() {
  topo::Topology t;
  t.hostReduceGBs = 12.5;
  t.stepOverheadUs = 0.7;
  t.cacheMiB = 30;
  t.allMissMiB = 120;
  t.missGBs = 18;
  t.links[topo::PathClass::Network] = {9.5, 11.25};
  t.links[topo::PathClass::CrossSocket] = {0.4, 40};
  put("fuzz_tune_file", "chorus_tune_output", "# chorus-tune\n" + topo::formatEstimates(t));
  put("fuzz_tune_file", "defaults", topo::formatEstimates(topo::Topology()));
  put("fuzz_tune_file", "chorus_tune_output.json",
      topo::formatEstimatesJson(t, "chorus-tune on a fuzzing seed", {"one_way_8B_us=0.5"}));
  put("fuzz_tune_file", "host_line", "reduce host_gbs=3\nhost x\nend\n");
}

void settings() {
  const std::string t = "fuzz_settings";
  put(t, "bytes_4M",
      std::string("\0"
                  "4M",
                  3));
  put(t, "bytes_hex_k",
      std::string("\0"
                  "0x10k",
                  6));
  put(t, "bytes_big",
      std::string("\0"
                  "9223372036854775807G",
                  21));
  put(t, "algo", "\1allreduce=ring,allgather=bruck,broadcast=chain");
  put(t, "algo_bad", "\1reduce_scatter=nope");
  put(t, "family", "\2ipv6");
  put(t, "ifname_exclude", "\3^docker,lo\neth0");
  put(t, "ifname_exact", "\3=eth0,ib0\nib0");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: make-fuzz-corpus OUT_DIR SOURCE_ROOT\n");
    return 2;
  }
  gOut = argv[1];
  frameReader();
  bootstrapWire();
  uniqueId();
  tcpHandshake();
  topology(argv[2]);
  tuneFile();
  settings();
  return 0;
}
