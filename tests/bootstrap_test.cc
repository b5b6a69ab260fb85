// Bootstrap tests. Multi-rank tests fork real processes (the parent never starts a thread, so
// forking is safe); rank 0's child creates the unique id and hands it to the others through
// pipes. Each child reports an exit code and a line of text; the parent waits with a deadline
// and SIGKILLs whatever is left.
#include "bootstrap/bootstrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/env_init.h"
#include "bootstrap/unique_id_codec.h"
#include "bootstrap/wire.h"
#include "chorus/unique_id.h"
#include "common/socket.h"

namespace chorus {
namespace {

constexpr int kKilled = 1000;  // Outcome::code of a child that died by a signal
constexpr int kHung = 1001;    // ... of one the parent had to kill

struct Outcome {
  int code = kHung;
  std::string text;
};

// Pipes made before forking, one per rank, to pass the unique id from its creator.
class IdChannel {
 public:
  explicit IdChannel(int n) : fds_(n) {
    for (auto& p : fds_)
      if (pipe(p.data()) != 0) abort();
  }
  void publish(const UniqueId& id) {
    for (auto& p : fds_)
      if (write(p[1], &id, sizeof id) != sizeof id) abort();
  }
  bool receive(int rank, UniqueId* id, double timeoutSec = 20) {
    pollfd pfd{fds_[rank][0], POLLIN, 0};
    if (poll(&pfd, 1, int(timeoutSec * 1000)) != 1) return false;
    return read(fds_[rank][0], id, sizeof *id) == sizeof *id;
  }

 private:
  std::vector<std::array<int, 2>> fds_;
};

using ChildFn = std::function<int(int rank, std::string* msg)>;

// Forks n children running fn(rank); collects their outcomes within timeoutSec.
std::vector<Outcome> runChildren(int n, const ChildFn& fn, double timeoutSec = 30) {
  std::vector<pid_t> pids(n);
  std::vector<int> readFds(n);
  for (int r = 0; r < n; ++r) {
    int p[2];
    if (pipe(p) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      std::string msg;
      int code = fn(r, &msg);
      (void)!write(p[1], msg.data(), msg.size());
      _exit(code);
    }
    close(p[1]);
    pids[r] = pid;
    readFds[r] = p[0];
  }
  std::vector<Outcome> out(n);
  Deadline deadline = Deadline::after(timeoutSec);
  std::vector<bool> done(n, false);
  for (int left = n; left > 0 && !deadline.expired();) {
    for (int r = 0; r < n; ++r) {
      if (done[r]) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      done[r] = true;
      --left;
      out[r].code = WIFEXITED(status) ? WEXITSTATUS(status) : kKilled;
    }
    usleep(5000);
  }
  for (int r = 0; r < n; ++r) {
    if (!done[r]) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], nullptr, 0);
    }
    fcntl(readFds[r], F_SETFL, O_NONBLOCK);
    char buf[4096];
    ssize_t k;
    while ((k = read(readFds[r], buf, sizeof buf)) > 0) out[r].text.append(buf, size_t(k));
    close(readFds[r]);
  }
  return out;
}

void expectAllPassed(const std::vector<Outcome>& out) {
  for (size_t r = 0; r < out.size(); ++r)
    EXPECT_EQ(out[r].code, 0) << "rank " << r << ": " << out[r].text;
}

#define CHILD_CHECK(cond, text) \
  do {                          \
    if (!(cond)) {              \
      *msg = std::string(text); \
      return 1;                 \
    }                           \
  } while (0)

#define CHILD_OK(expr)                                \
  do {                                                \
    Status _s = (expr);                               \
    CHILD_CHECK(_s.ok(), #expr ": " + _s.toString()); \
  } while (0)

double secondsSince(int64_t startNs) {
  return double(nowNs() - startNs) / 1e9;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A port on 127.0.0.1 that nothing listens on (briefly bound, then released).
int unusedPort() {
  SockAddr a;
  EXPECT_TRUE(resolveHost("127.0.0.1", 0, &a).ok());
  Socket s;
  EXPECT_TRUE(listenOn(a, 1, &s).ok());
  SockAddr bound;
  EXPECT_TRUE(localAddress(s.fd(), &bound).ok());
  return bound.port();
}

// Rank 0 creates the id and publishes it; everyone returns it.
Status shareId(IdChannel& ch, int rank, UniqueId* id, double rootTimeout = 20) {
  if (rank == 0) {
    CHORUS_RETURN_IF_ERROR(createUniqueId(id, rootTimeout));
    ch.publish(*id);
    return Status::Ok();
  }
  if (!ch.receive(rank, id)) return Status::Timeout("no unique id from rank 0's child");
  return Status::Ok();
}

// Records the failure handler's first call, for the fault tests.
struct FailureRecorder {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  std::string text;

  Bootstrap::FailureHandler handler() {
    return [this](const Status& st) {
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      text = st.toString();
      cv.notify_all();
    };
  }
  bool waitCalled(double sec) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::duration<double>(sec), [&] { return calls > 0; });
  }
  int count() {
    std::lock_guard<std::mutex> lock(mu);
    return calls;
  }
};

// ---- collectives over 1, 2, 4, 8 ranks ----

int exerciseCollectives(Bootstrap& b, std::string* msg) {
  int n = b.size(), me = b.rank();
  std::vector<int64_t> mine(5), all(5 * n);
  for (int i = 0; i < 5; ++i) mine[i] = me * 1000 + i;
  CHILD_OK(b.allgather(mine.data(), sizeof(int64_t) * 5, all.data(), Deadline::after(10)));
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < 5; ++i)
      CHILD_CHECK(all[r * 5 + i] == r * 1000 + i,
                  "allgather content wrong at rank " + std::to_string(r));
  for (int root = 0; root < n; ++root) {
    std::vector<uint32_t> data(7, 0);
    if (me == root)
      for (int i = 0; i < 7; ++i) data[i] = uint32_t(root * 77 + i);
    CHILD_OK(b.broadcast(data.data(), data.size() * 4, root, Deadline::after(10)));
    for (int i = 0; i < 7; ++i)
      CHILD_CHECK(data[i] == uint32_t(root * 77 + i),
                  "broadcast from root " + std::to_string(root) + " wrong");
  }
  for (int i = 0; i < 3; ++i) CHILD_OK(b.barrier(Deadline::after(10)));
  // Larger than one socket read, so frames arrive in pieces.
  std::vector<uint8_t> big(200000, uint8_t(me + 1)), bigAll(200000 * size_t(n));
  CHILD_OK(b.allgather(big.data(), big.size(), bigAll.data(), Deadline::after(10)));
  for (int r = 0; r < n; ++r)
    CHILD_CHECK(bigAll[size_t(r) * 200000 + 199999] == uint8_t(r + 1), "big allgather wrong");
  CHILD_OK(b.allgather(nullptr, 0, nullptr, Deadline::after(10)));
  return 0;
}

class BootstrapRanks : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapRanks, RendezvousAndCollectives) {
  int n = GetParam();
  IdChannel ch(n);
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    CHILD_CHECK(b->rank() == rank && b->size() == n, "rank/size wrong");
    return exerciseCollectives(*b, msg);
  });
  expectAllPassed(out);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BootstrapRanks, ::testing::Values(1, 2, 4, 8));

TEST(Bootstrap, MismatchedCallsAreReported) {
  IdChannel ch(2);
  auto out = runChildren(2, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, 2, Deadline::after(15), &b));
    int64_t v = rank, all[2];
    Status st = rank == 0 ? b->allgather(&v, sizeof v, all, Deadline::after(5))
                          : b->barrier(Deadline::after(5));
    CHILD_CHECK(!st.ok() && contains(st.message(), "mismatched"), "got " + st.toString());
    return 0;
  });
  expectAllPassed(out);
}

// ---- strangers and wrong secrets ----

TEST(Bootstrap, WrongSecretIsRejectedAndJobGoesOn) {
  IdChannel ch(3);
  auto out = runChildren(3, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    if (rank == 2) {  // the impostor claims rank 1 with another job's secret
      id.bytes[40] ^= 0x5a;
      std::unique_ptr<Bootstrap> b;
      Status st = Bootstrap::connect(id, 1, 2, Deadline::after(5), &b);
      CHILD_CHECK(!st.ok() && contains(st.message(), "wrong job secret"),
                  "impostor got " + st.toString());
      *msg = st.message();
      return 0;
    }
    if (rank == 1) usleep(300000);  // let the impostor try first
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, 2, Deadline::after(15), &b));
    return exerciseCollectives(*b, msg);
  });
  expectAllPassed(out);
  EXPECT_TRUE(contains(out[2].text, "bootstrap root")) << out[2].text;
}

// Strangers: garbage, a wrong secret, a silent connection that holds on.
int actAsStranger(int kind, const UniqueId& realId, std::string* msg) {
  boot::RootInfo root;
  CHILD_OK(boot::decodeUniqueId(realId, &root));
  if (kind == 1) {
    UniqueId id = realId;
    id.bytes[33] ^= 1;
    std::unique_ptr<Bootstrap> b;
    Status st = Bootstrap::connect(id, 2, 4, Deadline::after(5), &b);
    CHILD_CHECK(!st.ok() && contains(st.message(), "wrong job secret"), st.toString());
    return 0;
  }
  Socket s;
  int err = 0;
  CHILD_OK(connectWithRetry(root.addr, Deadline::after(5), &s, &err));
  if (kind == 0) {
    const char junk[] = "GET / HTTP/1.0\r\n\r\n\x01\x02garbage";
    CHILD_OK(sendAll(s.fd(), junk, sizeof junk, Deadline::after(1)));
  }
  usleep(kind == 0 ? 200000 : 1500000);  // the silent one holds on while the job meets
  return 0;
}

TEST(Bootstrap, StrangersDoNotDisturbTheJob) {
  const int n = 4, strangers = 3;
  IdChannel ch(n + strangers);
  auto out = runChildren(n + strangers, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    if (rank >= n) return actAsStranger(rank - n, id, msg);
    usleep(500000);  // the strangers come first
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    return exerciseCollectives(*b, msg);
  });
  expectAllPassed(out);
}

// Hundreds of silent connections fill the root's queue before the ranks arrive. They are
// capped per source and time out; the real ranks, turned away at first, retry and get in.
TEST(Bootstrap, SilentFloodDoesNotDenyTheStart) {
  const int n = 3, flood = 300;
  IdChannel ch(n + 1);
  auto out = runChildren(n + 1, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    if (rank == n) {  // the flood: connect, say nothing, hold on past the ranks' arrival
      boot::RootInfo root;
      CHILD_OK(boot::decodeUniqueId(id, &root));
      std::vector<Socket> held(flood);
      int err = 0;
      for (Socket& s : held) CHILD_OK(connectWithRetry(root.addr, Deadline::after(5), &s, &err));
      usleep(3000000);
      return 0;
    }
    usleep(300000);  // the flood comes first
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(20), &b));
    return exerciseCollectives(*b, msg);
  });
  expectAllPassed(out);
}

// One handshake by hand: takes the listener's challenge, answers it with a HELLO signed with
// `secret`, and returns the listener's reply (and what it must prove, for openAnswer).
struct HandDone {
  boot::Hello sent;
  auth::Nonce challenge{};
  Frame reply;
};
Status handshakeByHand(const SockAddr& to, boot::Hello h, const uint8_t* secret, Socket* s,
                       HandDone* out) {
  int err = 0;
  CHORUS_RETURN_IF_ERROR(connectWithRetry(to, Deadline::after(5), s, &err));
  FrameReader r;
  Frame challenge;
  CHORUS_RETURN_IF_ERROR(recvFrame(s->fd(), &r, Deadline::after(5), &challenge));
  if (challenge.type != boot::kChallenge || challenge.payload.size() != out->challenge.size())
    return Status::Internal("the listener did not open with a challenge");
  memcpy(out->challenge.data(), challenge.payload.data(), out->challenge.size());
  CHORUS_RETURN_IF_ERROR(boot::signHello(&h, secret, out->challenge));
  out->sent = h;
  std::vector<uint8_t> payload = boot::encodeHello(h);
  CHORUS_RETURN_IF_ERROR(
      sendFrame(s->fd(), boot::kHello, payload.data(), payload.size(), Deadline::after(5)));
  return recvFrame(s->fd(), &r, Deadline::after(5), &out->reply);
}

// Plays rank 2 by hand: checks in at the root, then tries rank 0's star listener with garbage
// and with a wrong secret before joining properly.
int twoFacedRank2(const UniqueId& id, std::string* msg) {
  boot::RootInfo root;
  CHILD_OK(boot::decodeUniqueId(id, &root));
  boot::Hello h;
  h.rank = 2;
  h.size = 3;
  h.pid = getpid();
  h.host = "test";
  Socket toRoot, bad, good, junk;
  HandDone done;
  CHILD_OK(handshakeByHand(root.addr, h, root.secret, &toRoot, &done));
  CHILD_CHECK(done.reply.type == boot::kTable, "no table");
  std::vector<uint8_t> body;
  CHILD_OK(boot::openAnswer(root.secret, done.sent, done.challenge, done.reply, &body));
  boot::Table table;
  CHILD_OK(boot::decodeTable(body, &table));
  // The root's proof covers this HELLO's nonce: it does not pass for another one.
  boot::Hello other = done.sent;
  other.nonce[0] ^= 1;
  CHILD_CHECK(!boot::openAnswer(root.secret, other, done.challenge, done.reply, &body).ok(),
              "the root's proof passed for another HELLO");
  Frame& f = done.reply;
  int err = 0;
  CHILD_OK(connectWithRetry(table.starAddr, Deadline::after(5), &junk, &err));
  CHILD_OK(sendAll(junk.fd(), "\xff\xff\xff\xffjunkjunkjunk", 16, Deadline::after(1)));
  uint8_t wrong[kSecretBytes];
  memcpy(wrong, root.secret, kSecretBytes);
  wrong[5] ^= 1;
  CHILD_OK(handshakeByHand(table.starAddr, h, wrong, &bad, &done));
  Status rejected = boot::unexpectedFrame(f, "rank 0", "an error");
  CHILD_CHECK(f.type == boot::kError && contains(rejected.message(), "wrong job secret"),
              rejected.toString());
  CHILD_OK(handshakeByHand(table.starAddr, h, root.secret, &good, &done));
  CHILD_CHECK(f.type == boot::kReady, "not admitted after the strangers");
  CHILD_OK(boot::openAnswer(root.secret, done.sent, done.challenge, f, &body));
  usleep(300000);
  CHILD_OK(sendFrame(good.fd(), boot::kGoodbye, nullptr, 0, Deadline::after(1)));
  return 0;
}

TEST(Bootstrap, StrangersAtRankZeroAreRejected) {
  IdChannel ch(3);
  auto out = runChildren(3, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    if (rank == 2) return twoFacedRank2(id, msg);
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, 3, Deadline::after(15), &b));
    FailureRecorder rec;
    b->setFailureHandler(rec.handler());
    usleep(600000);
    CHILD_CHECK(rec.count() == 0, "failure after a clean goodbye: " + rec.text);
    return 0;
  });
  expectAllPassed(out);
}

// ---- missing or dead peers ----

TEST(Bootstrap, DeadRootFailsClearlyBeforeDeadline) {
  int port = unusedPort();
  auto out = runChildren(1, [&](int, std::string* msg) {
    uint8_t secret[kSecretBytes] = {1, 2, 3};
    UniqueId id;
    CHILD_OK(makeUniqueId("127.0.0.1", port, secret, false, &id));
    int64_t start = nowNs();
    std::unique_ptr<Bootstrap> b;
    Status st = Bootstrap::connect(id, 1, 2, Deadline::after(2), &b);
    double took = secondsSince(start);
    std::string want = "could not reach the bootstrap root at 127.0.0.1:" + std::to_string(port);
    CHILD_CHECK(!st.ok() && contains(st.message(), want) &&
                    contains(st.message(), "Connection refused") &&
                    contains(st.message(), "CHORUS_SOCKET_IFNAME"),
                st.toString());
    CHILD_CHECK(took < 3.5, "took " + std::to_string(took) + " s");
    *msg = st.message();
    return 0;
  });
  expectAllPassed(out);
}

TEST(Bootstrap, MissingRankIsNamed) {
  IdChannel ch(4);
  auto out = runChildren(4, [&](int rank, std::string* msg) {
    if (rank == 2) return 0;  // never shows up
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id, /*rootTimeout=*/2));
    int64_t start = nowNs();
    std::unique_ptr<Bootstrap> b;
    Status st = Bootstrap::connect(id, rank, 4, Deadline::after(10), &b);
    CHILD_CHECK(
        !st.ok() && contains(st.message(), "missing: rank 2") && contains(st.message(), "3 of 4"),
        st.toString());
    CHILD_CHECK(secondsSince(start) < 4.5, "took too long");
    *msg = st.message();
    return 0;
  });
  expectAllPassed(out);
}

class BootstrapKill : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapKill, SurvivorsHearOfTheDeath) {
  const int n = 4, victim = GetParam();
  IdChannel ch(n);
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    FailureRecorder rec;
    b->setFailureHandler(rec.handler());
    CHILD_OK(b->barrier(Deadline::after(10)));
    if (rank == victim) raise(SIGKILL);
    CHILD_CHECK(rec.waitCalled(5), "no failure handler call within 5 s");
    std::string want = "rank " + std::to_string(victim) + " (pid";
    CHILD_CHECK(contains(rec.text, want) && contains(rec.text, "died"), rec.text);
    int64_t start = nowNs();
    Status st = b->barrier(Deadline::after(10));
    CHILD_CHECK(!st.ok() && secondsSince(start) < 1, "barrier after a death: " + st.toString());
    CHILD_CHECK(rec.count() == 1, "handler called more than once");
    *msg = rec.text;
    return 0;
  });
  for (int r = 0; r < n; ++r) {
    if (r == victim)
      EXPECT_EQ(out[r].code, kKilled);
    else
      EXPECT_EQ(out[r].code, 0) << "rank " << r << ": " << out[r].text;
  }
}

INSTANTIATE_TEST_SUITE_P(Victims, BootstrapKill, ::testing::Values(2, 0));

TEST(Bootstrap, CleanExitIsNotAFailure) {
  const int n = 4;
  IdChannel ch(n);
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    FailureRecorder rec;
    b->setFailureHandler(rec.handler());
    CHILD_OK(b->barrier(Deadline::after(10)));
    if (rank == 3) {
      b.reset();
      return 0;
    }
    Status st = b->barrier(Deadline::after(5));  // rank 3 is gone: fails fast, names it
    CHILD_CHECK(!st.ok() && contains(st.message(), "rank 3 has already left"), st.toString());
    if (rank == 0) {
      usleep(300000);
      b.reset();
      return 0;
    }
    usleep(800000);
    CHILD_CHECK(rec.count() == 0, "handler fired on a clean exit: " + rec.text);
    b.reset();
    return 0;
  });
  expectAllPassed(out);
}

TEST(Bootstrap, ReportErrorReachesEveryone) {
  const int n = 3;
  IdChannel ch(n);
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    FailureRecorder rec;
    b->setFailureHandler(rec.handler());
    CHILD_OK(b->barrier(Deadline::after(10)));
    if (rank == 1) {
      b->reportError(Status::Internal("disk on fire"));
      usleep(300000);
      return 0;
    }
    CHILD_CHECK(rec.waitCalled(5), "no failure handler call");
    CHILD_CHECK(contains(rec.text, "rank 1 (pid") && contains(rec.text, "disk on fire"), rec.text);
    return 0;
  });
  expectAllPassed(out);
}

TEST(Bootstrap, HandlerSetAfterFailureIsCalled) {
  IdChannel ch(2);
  auto out = runChildren(2, [&](int rank, std::string* msg) {
    UniqueId id;
    CHILD_OK(shareId(ch, rank, &id));
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, 2, Deadline::after(15), &b));
    CHILD_OK(b->barrier(Deadline::after(10)));
    if (rank == 1) raise(SIGKILL);
    Status st = b->barrier(Deadline::after(5));  // learns of the death
    CHILD_CHECK(!st.ok() && contains(st.message(), "died"), st.toString());
    FailureRecorder rec;
    b->setFailureHandler(rec.handler());
    CHILD_CHECK(rec.count() == 1 && contains(rec.text, "rank 1"), "late handler: " + rec.text);
    return 0;
  });
  EXPECT_EQ(out[0].code, 0) << out[0].text;
}

// ---- IPv6 ----

bool ipv6LoopbackWorks() {
  SockAddr a;
  if (!resolveHost("::1", 0, &a).ok()) return false;
  Socket s;
  return listenOn(a, 1, &s).ok();
}

TEST(Bootstrap, RendezvousOverIpv6Loopback) {
  if (!ipv6LoopbackWorks()) GTEST_SKIP() << "IPv6 loopback [::1] is not available here";
  const int n = 3;
  IdChannel ch(n);
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    UniqueId id;
    if (rank == 0) {
      uint8_t secret[kSecretBytes];
      CHILD_OK(boot::randomSecret(secret));
      CHILD_OK(makeUniqueId("::1", 0, secret, false, &id));
      CHILD_OK(startRoot(&id, 20));
      CHILD_CHECK(uniqueIdAddress(id).rfind("[::1]:", 0) == 0, uniqueIdAddress(id));
      ch.publish(id);
    } else {
      CHILD_CHECK(ch.receive(rank, &id), "no id");
    }
    std::unique_ptr<Bootstrap> b;
    CHILD_OK(Bootstrap::connect(id, rank, n, Deadline::after(15), &b));
    return exerciseCollectives(*b, msg);
  });
  expectAllPassed(out);
}

// ---- environment init ----

void clearLauncherEnvironment() {
  for (const char* v : {"CHORUS_RANK",
                        "CHORUS_WORLD_SIZE",
                        "CHORUS_LOCAL_RANK",
                        "CHORUS_LOCAL_SIZE",
                        "RANK",
                        "WORLD_SIZE",
                        "LOCAL_RANK",
                        "LOCAL_WORLD_SIZE",
                        "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK",
                        "OMPI_COMM_WORLD_LOCAL_SIZE",
                        "SLURM_PROCID",
                        "SLURM_NTASKS",
                        "SLURM_LOCALID",
                        "SLURM_NTASKS_PER_NODE",
                        "CHORUS_COMM_ID",
                        "MASTER_ADDR",
                        "MASTER_PORT",
                        "CHORUS_SECRET",
                        "CHORUS_INSECURE",
                        "TORCHELASTIC_RUN_ID",
                        "OMPI_MCA_ess_base_jobid",
                        "SLURM_JOB_ID"})
    unsetenv(v);
}

int joinFromEnvironment(int rank, int n, const char* source, std::string* msg) {
  if (rank == 0) usleep(300000);  // the others retry until the root is up
  LaunchInfo info;
  CHILD_OK(launchInfoFromEnvironment(10, &info));
  CHILD_CHECK(info.rank == rank && info.size == n && info.localRank == rank &&
                  info.localSize == n && info.source == source,
              "launch info wrong: source " + info.source);
  std::unique_ptr<Bootstrap> b;
  CHILD_OK(Bootstrap::connect(info.id, info.rank, info.size, Deadline::after(10), &b));
  return exerciseCollectives(*b, msg);
}

TEST(BootstrapEnv, ChorusVariables) {
  const int n = 3, port = unusedPort();
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    clearLauncherEnvironment();
    setenv("CHORUS_RANK", std::to_string(rank).c_str(), 1);
    setenv("CHORUS_WORLD_SIZE", std::to_string(n).c_str(), 1);
    setenv("CHORUS_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("CHORUS_LOCAL_SIZE", std::to_string(n).c_str(), 1);
    setenv("CHORUS_COMM_ID", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    setenv("CHORUS_SECRET", std::string(64, 'a').replace(0, 4, "0123").c_str(), 1);
    setenv("RANK", "7", 1);  // a lower-priority launcher's variables are ignored
    return joinFromEnvironment(rank, n, "chorus", msg);
  });
  expectAllPassed(out);
}

TEST(BootstrapEnv, TorchrunVariables) {
  const int n = 2, port = unusedPort();
  auto out = runChildren(n, [&](int rank, std::string* msg) {
    clearLauncherEnvironment();
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
    setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("LOCAL_WORLD_SIZE", std::to_string(n).c_str(), 1);
    setenv("MASTER_ADDR", "localhost", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    setenv("TORCHELASTIC_RUN_ID", "job-42", 1);
    return joinFromEnvironment(rank, n, "torchrun", msg);
  });
  expectAllPassed(out);
}

TEST(BootstrapEnv, BadValuesAreClearErrors) {
  auto out = runChildren(1, [&](int, std::string* msg) {
    LaunchInfo info;
    auto expectError = [&](const char* part) {
      Status st = launchInfoFromEnvironment(1, &info);
      return !st.ok() && contains(st.message(), part)
                 ? std::string()
                 : "wanted '" + std::string(part) + "', got " + st.toString();
    };
    clearLauncherEnvironment();
    std::string e = expectError("CHORUS_RANK and CHORUS_WORLD_SIZE");
    CHILD_CHECK(e.empty(), e);
    setenv("CHORUS_RANK", "one", 1);
    setenv("CHORUS_WORLD_SIZE", "2", 1);
    CHILD_CHECK((e = expectError("CHORUS_RANK='one'")).empty(), e);
    setenv("CHORUS_RANK", "2", 1);
    CHILD_CHECK((e = expectError("CHORUS_RANK=2 is out of range")).empty(), e);
    setenv("CHORUS_RANK", "1", 1);
    setenv("CHORUS_LOCAL_SIZE", "0", 1);
    CHILD_CHECK((e = expectError("CHORUS_LOCAL_SIZE=0")).empty(), e);
    unsetenv("CHORUS_LOCAL_SIZE");
    CHILD_CHECK((e = expectError("set CHORUS_COMM_ID=host:port")).empty(), e);
    setenv("CHORUS_COMM_ID", "::1:5000", 1);
    CHILD_CHECK((e = expectError("[addr]:port")).empty(), e);
    setenv("CHORUS_COMM_ID", "127.0.0.1:5000", 1);
    setenv("CHORUS_SECRET", "xyz", 1);
    CHILD_CHECK((e = expectError("CHORUS_SECRET: expected 64 hex digits")).empty(), e);
    unsetenv("CHORUS_SECRET");
    CHILD_OK(launchInfoFromEnvironment(1, &info));  // rank 1 starts no root
    CHILD_CHECK(uniqueIdAddress(info.id) == "127.0.0.1:5000", uniqueIdAddress(info.id));
    // Beyond loopback a secret anyone could compute is refused unless the user opts in.
    setenv("CHORUS_COMM_ID", "10.254.0.1:5000", 1);
    CHILD_CHECK((e = expectError("CHORUS_SECRET is not set")).empty(), e);
    CHILD_CHECK((e = expectError("CHORUS_INSECURE=1")).empty(), e);
    setenv("CHORUS_INSECURE", "1", 1);
    CHILD_OK(launchInfoFromEnvironment(1, &info));
    setenv("CHORUS_INSECURE", "0", 1);
    CHILD_CHECK((e = expectError("CHORUS_SECRET is not set")).empty(), e);
    setenv("CHORUS_SECRET", std::string(64, 'b').c_str(), 1);
    CHILD_OK(launchInfoFromEnvironment(1, &info));
    return 0;
  });
  expectAllPassed(out);
}

// ---- pure helpers (no processes) ----

TEST(BootstrapHelpers, InterfaceSpecs) {
  EXPECT_TRUE(interfaceMatches("eth,ib", "eth0"));
  EXPECT_TRUE(interfaceMatches("eth,ib", "ib1"));
  EXPECT_FALSE(interfaceMatches("eth,ib", "lo"));
  EXPECT_TRUE(interfaceMatches("=eth0", "eth0"));
  EXPECT_FALSE(interfaceMatches("=eth0", "eth01"));
  EXPECT_FALSE(interfaceMatches("^docker,lo", "docker0"));
  EXPECT_TRUE(interfaceMatches("^docker,lo", "eth0"));
  EXPECT_FALSE(interfaceMatches("^=eth0", "eth0"));
  EXPECT_TRUE(interfaceMatches("^=eth0", "eth01"));
  std::vector<NetInterface> ifs;
  ASSERT_TRUE(findInterfaces("", 4, &ifs).ok());
  ASSERT_FALSE(ifs.empty());
  ASSERT_TRUE(findInterfaces("lo", 4, &ifs).ok());
  EXPECT_EQ(ifs[0].addr.host(), "127.0.0.1");
  Status st = findInterfaces("=nosuchif9", 4, &ifs);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "nosuchif9")) << st.message();
}

TEST(BootstrapHelpers, Addresses) {
  SockAddr a;
  ASSERT_TRUE(parseHostPort("[::1]:29500", &a).ok());
  EXPECT_EQ(a.toString(), "[::1]:29500");
  ASSERT_TRUE(parseHostPort("10.1.2.3:80", &a).ok());
  EXPECT_EQ(a.toString(), "10.1.2.3:80");
  EXPECT_FALSE(parseHostPort("::1:80", &a).ok());
  EXPECT_FALSE(parseHostPort("10.1.2.3:99999", &a).ok());
  EXPECT_FALSE(parseHostPort("10.1.2.3", &a).ok());
}

// A connect retried until the deadline is a Timeout, whatever its last attempt said, so the
// set-up that called it asks who still answers (a peer cut off from the network is named).
TEST(BootstrapHelpers, ConnectRetriedToTheDeadlineIsATimeout) {
  SockAddr loopback;
  ASSERT_TRUE(parseHostPort("127.0.0.1:0", &loopback).ok());
  Socket reserved;  // bound, not listening: connections to its port are refused
  ASSERT_TRUE(bindOnly(loopback, &reserved).ok());
  SockAddr refusing;
  ASSERT_TRUE(localAddress(reserved.fd(), &refusing).ok());
  Socket s;
  int lastErrno = 0;
  const Status st = connectWithRetry(refusing, Deadline::after(0.2), &s, &lastErrno);
  EXPECT_EQ(st.code(), StatusCode::Timeout) << st.toString();
  EXPECT_EQ(lastErrno, ECONNREFUSED);
  EXPECT_TRUE(contains(st.message(), refusing.toString())) << st.message();
  EXPECT_FALSE(s.valid());
}

TEST(BootstrapHelpers, UniqueIdRoundTrip) {
  uint8_t secret[kSecretBytes];
  for (size_t i = 0; i < kSecretBytes; ++i) secret[i] = uint8_t(i * 7);
  UniqueId id;
  ASSERT_TRUE(makeUniqueId("[fd00::2]", 1234, secret, false, &id).ok());
  EXPECT_EQ(uniqueIdAddress(id), "[fd00::2]:1234");
  boot::RootInfo info;
  ASSERT_TRUE(boot::decodeUniqueId(id, &info).ok());
  EXPECT_EQ(memcmp(info.secret, secret, kSecretBytes), 0);
  for (size_t i = 64; i < sizeof id.bytes; ++i) EXPECT_EQ(id.bytes[i], 0);
  UniqueId zero{};
  Status st = boot::decodeUniqueId(zero, &info);
  EXPECT_TRUE(contains(st.message(), "bad magic")) << st.message();
  EXPECT_EQ(uniqueIdAddress(zero), "<invalid unique id>");
}

TEST(BootstrapHelpers, SecretsAndRankLists) {
  uint8_t a[kSecretBytes], b[kSecretBytes];
  deriveJobSecret("h:1", "job", a);
  deriveJobSecret("h:1", "job", b);
  EXPECT_EQ(memcmp(a, b, kSecretBytes), 0);
  deriveJobSecret("h:1", "job2", b);
  EXPECT_NE(memcmp(a, b, kSecretBytes), 0);
  EXPECT_TRUE(parseSecretHex(std::string(64, 'F'), a).ok());
  EXPECT_EQ(a[31], 0xff);
  EXPECT_FALSE(parseSecretHex(std::string(63, '0') + "g", a).ok());
  EXPECT_EQ(boot::formatRankList({2}), "2");
  EXPECT_EQ(boot::formatRankList({1, 2, 3, 7, 9, 10}), "1-3, 7, 9-10");
}

TEST(BootstrapHelpers, FrameReaderRejectsGarbage) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  Socket x(sv[0]), y(sv[1]);
  ASSERT_TRUE(sendFrame(x.fd(), 9, "hello", 5, Deadline::after(1)).ok());
  FrameReader r(16);
  Frame f;
  ASSERT_TRUE(recvFrame(y.fd(), &r, Deadline::after(1), &f).ok());
  EXPECT_EQ(f.type, 9u);
  EXPECT_EQ(std::string(f.payload.begin(), f.payload.end()), "hello");
  ASSERT_TRUE(sendFrame(x.fd(), 9, std::string(100, 'x').data(), 100, Deadline::after(1)).ok());
  EXPECT_FALSE(recvFrame(y.fd(), &r, Deadline::after(1), &f).ok());  // over the 16-byte limit
  FrameReader r2;
  ASSERT_TRUE(sendAll(x.fd(), "garbage-garbage", 15, Deadline::after(1)).ok());
  Status st = recvFrame(y.fd(), &r2, Deadline::after(1), &f);
  EXPECT_TRUE(contains(st.message(), "bad frame magic")) << st.message();
}

}  // namespace
}  // namespace chorus
