// The bootstrap's messages. Every connection (to the root, to rank 0's star listener) opens
// with a CHALLENGE from the listener and a HELLO that answers it with an HMAC over the job
// secret (bootstrap/auth.h), so a stranger is recognised by its first frame and the secret
// never crosses the network. The listener's answer (TABLE, READY) carries its own proof.
// Integers are little-endian; strings are a u32 length then bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap.h"
#include "chorus/status.h"
#include "common/socket.h"

namespace chorus::boot {

inline constexpr uint32_t kHelloMagic = 0x4f4c4548;  // "HELO"
inline constexpr uint32_t kProtocolVersion = 3;      // 2: challenge and response; 3: probes (11-14)
// Handshake frames are tiny; a larger length is garbage and is refused before any allocation.
inline constexpr uint32_t kMaxHandshakeFrame = 4096;
// Per-connection limit for a HELLO to arrive, so a silent stranger cannot hold a slot.
inline constexpr double kHelloTimeoutSec = 2.0;
// A rank that timed out waiting on rank 0 listens this much longer for rank 0's own verdict:
// rank 0 gives up at about the same moment and then names the rank that kept it waiting.
inline constexpr double kVerdictGraceSec = 0.5;

enum FrameType : uint32_t {
  kHello = 1,          // rank -> root, rank -> rank 0
  kTable = 2,          // root -> every rank: where rank 0's star listener is
  kReady = 3,          // rank 0 -> rank r: the star is complete
  kError = 4,          // anyone -> a peer it rejects: why (StatusCode + text)
  kData = 5,           // a collective's contribution or result
  kGoodbye = 6,        // the sender is leaving cleanly
  kPeerError = 7,      // the sender failed (reportError)
  kPeerFailed = 8,     // rank 0 -> rank r: some rank failed (rank + text)
  kPeerLeft = 9,       // rank 0 -> rank r: some rank left cleanly (rank)
  kChallenge = 10,     // listener -> whoever connected: a fresh nonce to prove the secret over
  kProbeAsk = 11,      // rank r -> rank 0: which ranks still answer? (r timed out)
  kPing = 12,          // rank 0 -> rank r: answer this (probe id)
  kPong = 13,          // rank r -> rank 0: the answer (probe id)
  kProbeFinding = 14,  // rank 0 -> the ranks that asked: the rank that did not answer, or -1
};

struct Hello {
  uint32_t magic = kHelloMagic;
  uint32_t version = kProtocolVersion;
  auth::Nonce nonce{};  // the sender's, which the listener's answer must cover
  auth::Mac mac{};      // proves the secret over the listener's challenge and this HELLO
  int32_t rank = -1;
  int32_t size = 0;
  int32_t pid = 0;
  std::string host;
  SockAddr starAddr;  // rank 0's star listener (rank 0 -> root only)
};

// Who a rank is, for messages about it: "rank 3 (pid 1234, host node7)".
struct PeerIdentity {
  int32_t pid = 0;
  std::string host;
};
std::string describeRank(int rank, const PeerIdentity& who);
PeerIdentity selfIdentity();

// The root's answer: rank 0's star address and identity.
struct Table {
  SockAddr starAddr;
  PeerIdentity rank0;
};

// A collective's frame header. `op`/`arg`/`bytes` let rank 0 and the other ranks notice
// mismatched calls (a different collective, root or size at the same sequence number).
enum class CollOp : uint8_t { Allgather = 1, Broadcast = 2, Barrier = 3 };
inline constexpr uint8_t kDataIsError = 1;  // payload is an error text, not data
struct DataHeader {
  uint64_t seq = 0;
  int32_t src = 0;
  CollOp op = CollOp::Barrier;
  uint8_t flags = 0;
  int32_t arg = 0;     // broadcast root
  uint64_t bytes = 0;  // per-rank byte count the sender was called with
};
inline constexpr size_t kDataHeaderBytes = 28;
const char* collOpName(CollOp op);

// Little-endian building and parsing.
class Writer {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u16(uint16_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void bytes(const void* p, size_t n);
  void str(const std::string& s);
  void addr(const SockAddr& a);
  std::vector<uint8_t>& buffer() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  explicit Reader(const std::vector<uint8_t>& v) : Reader(v.data(), v.size()) {}
  bool u8(uint8_t* v);
  bool u16(uint16_t* v);
  bool u32(uint32_t* v);
  bool u64(uint64_t* v);
  bool i32(int32_t* v);
  bool bytes(void* p, size_t n);
  bool str(std::string* s, size_t maxLen = 1024);
  bool addr(SockAddr* a);
  const uint8_t* rest() const { return p_ + off_; }
  size_t left() const { return n_ - off_; }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t off_ = 0;
};

std::vector<uint8_t> encodeHello(const Hello& h);
Status decodeHello(const std::vector<uint8_t>& payload, Hello* h);
std::vector<uint8_t> encodeTable(const Table& t);
Status decodeTable(const std::vector<uint8_t>& payload, Table* t);
std::vector<uint8_t> encodeError(const Status& st);
Status decodeError(const std::vector<uint8_t>& payload);  // the Status the peer sent
void encodeDataHeader(const DataHeader& h, Writer* w);
Status decodeDataHeader(Reader* r, DataHeader* h);

// The connecting side: draws the HELLO's nonce and signs it for the listener's challenge.
Status signHello(Hello* h, const uint8_t* secret, const auth::Nonce& challenge);
// Checks a HELLO's version and proof of the secret; the message says which one is wrong.
Status checkHelloCredentials(const Hello& h, const uint8_t* secret, const auth::Nonce& challenge);
// The listener's answer to a vetted HELLO: its own proof, then `body`.
std::vector<uint8_t> sealAnswer(const uint8_t* secret, const Hello& h, const auth::Nonce& challenge,
                                uint32_t type, const std::vector<uint8_t>& body);
// The connecting side: checks the listener's proof and strips it.
Status openAnswer(const uint8_t* secret, const Hello& h, const auth::Nonce& challenge,
                  const Frame& f, std::vector<uint8_t>* body);

// Best effort: tells a rejected peer why, bounded by a short deadline.
void sendErrorFrame(int fd, const Status& st);

// Reads a frame's Status when it is kError; other unexpected types become a generic error.
Status unexpectedFrame(const Frame& f, const std::string& from, const char* expected);

// "2, 5-7, 9" (at most `maxShown` ranks, then "...").
std::string formatRankList(const std::vector<int>& ranks, size_t maxShown = 32);
// "2.5", "300": seconds in errors, three significant digits.
std::string secondsText(double s);
// "missing: rank 2" or "missing: ranks 2, 5-7": one missing rank is named the way every other
// message names a rank, so that a reader (or a test) finding "rank 2" finds this one too.
std::string missingRanks(const std::vector<int>& ranks);

}  // namespace chorus::boot
