#include "bootstrap/wire.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>

namespace chorus::boot {

std::string describeRank(int rank, const PeerIdentity& who) {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(who.pid) + ", host " +
         (who.host.empty() ? "?" : who.host) + ")";
}

PeerIdentity selfIdentity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return PeerIdentity{int32_t(getpid()), host};
}

const char* collOpName(CollOp op) {
  switch (op) {
    case CollOp::Allgather:
      return "allgather";
    case CollOp::Broadcast:
      return "broadcast";
    case CollOp::Barrier:
      return "barrier";
  }
  return "unknown collective";
}

void Writer::u16(uint16_t v) {
  for (int i = 0; i < 2; ++i) buf_.push_back(uint8_t(v >> (8 * i)));
}
void Writer::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(uint8_t(v >> (8 * i)));
}
void Writer::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) buf_.push_back(uint8_t(v >> (8 * i)));
}
void Writer::bytes(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), b, b + n);
}
void Writer::str(const std::string& s) {
  u32(uint32_t(s.size()));
  bytes(s.data(), s.size());
}

// Family (4 or 6, 0 = none), port, scope id, 16 address bytes.
void Writer::addr(const SockAddr& a) {
  uint8_t raw[16] = {};
  uint32_t scope = 0;
  uint16_t fam = 0;
  if (a.family() == AF_INET) {
    fam = 4;
    memcpy(raw, &reinterpret_cast<const sockaddr_in*>(&a.storage)->sin_addr, 4);
  } else if (a.family() == AF_INET6) {
    fam = 6;
    auto* s6 = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    memcpy(raw, &s6->sin6_addr, 16);
    scope = s6->sin6_scope_id;
  }
  u16(fam);
  u16(uint16_t(a.port()));
  u32(scope);
  bytes(raw, 16);
}

bool Reader::bytes(void* p, size_t n) {
  if (left() < n) return false;
  if (n) memcpy(p, p_ + off_, n);
  off_ += n;
  return true;
}
bool Reader::u8(uint8_t* v) {
  return bytes(v, 1);
}
bool Reader::u16(uint16_t* v) {
  uint8_t b[2];
  if (!bytes(b, 2)) return false;
  *v = uint16_t(b[0] | b[1] << 8);
  return true;
}
bool Reader::u32(uint32_t* v) {
  uint8_t b[4];
  if (!bytes(b, 4)) return false;
  *v = 0;
  for (int i = 3; i >= 0; --i) *v = *v << 8 | b[i];
  return true;
}
bool Reader::u64(uint64_t* v) {
  uint8_t b[8];
  if (!bytes(b, 8)) return false;
  *v = 0;
  for (int i = 7; i >= 0; --i) *v = *v << 8 | b[i];
  return true;
}
bool Reader::i32(int32_t* v) {
  uint32_t u;
  if (!u32(&u)) return false;
  *v = int32_t(u);
  return true;
}
bool Reader::str(std::string* s, size_t maxLen) {
  uint32_t n;
  if (!u32(&n) || n > maxLen || left() < n) return false;
  s->assign(reinterpret_cast<const char*>(p_ + off_), n);
  off_ += n;
  return true;
}
bool Reader::addr(SockAddr* a) {
  uint16_t fam, port;
  uint32_t scope;
  uint8_t raw[16];
  if (!u16(&fam) || !u16(&port) || !u32(&scope) || !bytes(raw, 16)) return false;
  *a = SockAddr();
  if (fam == 4) {
    auto* s = reinterpret_cast<sockaddr_in*>(&a->storage);
    s->sin_family = AF_INET;
    memcpy(&s->sin_addr, raw, 4);
    a->len = sizeof(sockaddr_in);
  } else if (fam == 6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&a->storage);
    s->sin6_family = AF_INET6;
    memcpy(&s->sin6_addr, raw, 16);
    s->sin6_scope_id = scope;
    a->len = sizeof(sockaddr_in6);
  } else if (fam != 0) {
    return false;
  }
  a->setPort(port);
  return true;
}

std::vector<uint8_t> encodeHello(const Hello& h) {
  Writer w;
  w.u32(h.magic);
  w.u32(h.version);
  w.bytes(h.nonce.data(), h.nonce.size());
  w.bytes(h.mac.data(), h.mac.size());
  w.u32(uint32_t(h.rank));
  w.u32(uint32_t(h.size));
  w.u32(uint32_t(h.pid));
  w.str(h.host);
  w.addr(h.starAddr);
  return std::move(w.buffer());
}

Status decodeHello(const std::vector<uint8_t>& payload, Hello* h) {
  Reader r(payload);
  // Magic and version first, so a peer speaking another protocol version gets that message
  // rather than "malformed".
  if (!r.u32(&h->magic) || !r.u32(&h->version))
    return Status::InvalidArgument("malformed HELLO (too short)");
  if (h->magic != kHelloMagic) return Status::InvalidArgument("bad HELLO magic");
  if (h->version != kProtocolVersion) return Status::Ok();  // reported by the credential check
  if (!r.bytes(h->nonce.data(), h->nonce.size()) || !r.bytes(h->mac.data(), h->mac.size()) ||
      !r.i32(&h->rank) || !r.i32(&h->size) || !r.i32(&h->pid) || !r.str(&h->host, 256) ||
      !r.addr(&h->starAddr))
    return Status::InvalidArgument("malformed HELLO");
  return Status::Ok();
}

std::vector<uint8_t> encodeTable(const Table& t) {
  Writer w;
  w.addr(t.starAddr);
  w.u32(uint32_t(t.rank0.pid));
  w.str(t.rank0.host);
  return std::move(w.buffer());
}

Status decodeTable(const std::vector<uint8_t>& payload, Table* t) {
  Reader r(payload);
  if (!r.addr(&t->starAddr) || !r.i32(&t->rank0.pid) || !r.str(&t->rank0.host, 256))
    return Status::Internal("malformed TABLE from the bootstrap root");
  return Status::Ok();
}

std::vector<uint8_t> encodeError(const Status& st) {
  Writer w;
  w.u32(uint32_t(st.code()));
  w.str(st.message());
  return std::move(w.buffer());
}

Status decodeError(const std::vector<uint8_t>& payload) {
  Reader r(payload);
  uint32_t code;
  std::string text;
  if (!r.u32(&code) || !r.str(&text, 1 << 16) || code == 0 || code > uint32_t(StatusCode::Internal))
    return Status::RemoteError("peer sent a malformed error message");
  return Status(StatusCode(code), text);
}

void encodeDataHeader(const DataHeader& h, Writer* w) {
  w->u64(h.seq);
  w->u32(uint32_t(h.src));
  w->u8(uint8_t(h.op));
  w->u8(h.flags);
  w->u16(0);
  w->u32(uint32_t(h.arg));
  w->u64(h.bytes);
}

Status decodeDataHeader(Reader* r, DataHeader* h) {
  uint8_t op;
  uint16_t pad;
  if (!r->u64(&h->seq) || !r->i32(&h->src) || !r->u8(&op) || !r->u8(&h->flags) || !r->u16(&pad) ||
      !r->i32(&h->arg) || !r->u64(&h->bytes))
    return Status::Internal("malformed bootstrap DATA frame");
  h->op = CollOp(op);
  return Status::Ok();
}

namespace {
// The HELLO's proof covers every field (with the proof itself zeroed) and the challenge.
auth::Mac helloMac(const Hello& h, const uint8_t* secret, const auth::Nonce& challenge) {
  Hello unsigned_ = h;
  unsigned_.mac = {};
  std::vector<uint8_t> body = encodeHello(unsigned_);
  return auth::computeMac(secret, "chorus bootstrap hello",
                          {{challenge.data(), challenge.size()}, {body.data(), body.size()}});
}

auth::Mac answerMac(const uint8_t* secret, const Hello& h, const auth::Nonce& challenge,
                    uint32_t type, const uint8_t* body, size_t bytes) {
  return auth::computeMac(secret, "chorus bootstrap answer",
                          {{h.nonce.data(), h.nonce.size()},
                           {challenge.data(), challenge.size()},
                           {&type, sizeof type},
                           {body, bytes}});
}
}  // namespace

Status signHello(Hello* h, const uint8_t* secret, const auth::Nonce& challenge) {
  CHORUS_RETURN_IF_ERROR(auth::randomNonce(&h->nonce));
  h->mac = helloMac(*h, secret, challenge);
  return Status::Ok();
}

std::vector<uint8_t> sealAnswer(const uint8_t* secret, const Hello& h, const auth::Nonce& challenge,
                                uint32_t type, const std::vector<uint8_t>& body) {
  auth::Mac mac = answerMac(secret, h, challenge, type, body.data(), body.size());
  std::vector<uint8_t> out(mac.size() + body.size());
  memcpy(out.data(), mac.data(), mac.size());
  if (!body.empty()) memcpy(out.data() + mac.size(), body.data(), body.size());
  return out;
}

Status openAnswer(const uint8_t* secret, const Hello& h, const auth::Nonce& challenge,
                  const Frame& f, std::vector<uint8_t>* body) {
  if (f.payload.size() < auth::kMacBytes ||
      !auth::macEquals(f.payload.data(),
                       answerMac(secret, h, challenge, f.type, f.payload.data() + auth::kMacBytes,
                                 f.payload.size() - auth::kMacBytes)
                           .data()))
    return Status::RemoteError(
        "the answer does not prove the job secret: something other than this job's bootstrap "
        "listens at that address (another job, or an impostor)");
  body->assign(f.payload.begin() + auth::kMacBytes, f.payload.end());
  return Status::Ok();
}

Status checkHelloCredentials(const Hello& h, const uint8_t* secret, const auth::Nonce& challenge) {
  if (h.version != kProtocolVersion)
    return Status::InvalidArgument("bootstrap protocol version " + std::to_string(h.version) +
                                   ", expected " + std::to_string(kProtocolVersion) +
                                   " (ranks built from different Chorus versions?)");
  if (!auth::macEquals(h.mac.data(), helloMac(h, secret, challenge).data()))
    return Status::InvalidArgument(
        "wrong job secret: this rank's unique id belongs to another job (or is stale); every "
        "rank must use the unique id created for this job");
  return Status::Ok();
}

void sendErrorFrame(int fd, const Status& st) {
  std::vector<uint8_t> p = encodeError(st);
  (void)sendFrame(fd, kError, p.data(), p.size(), Deadline::after(0.2));
}

Status unexpectedFrame(const Frame& f, const std::string& from, const char* expected) {
  if (f.type == kError) return decodeError(f.payload);
  return Status::Internal(from + " sent message type " + std::to_string(f.type) + " where " +
                          expected + " was expected");
}

std::string formatRankList(const std::vector<int>& ranks, size_t maxShown) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    if (shown >= maxShown) return out + "...";
    out += std::to_string(ranks[i]);
    if (j > i) out.append("-").append(std::to_string(ranks[j]));
    shown += j - i + 1;
    i = j;
  }
  return out;
}

std::string secondsText(double s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

std::string missingRanks(const std::vector<int>& ranks) {
  return std::string("missing: ") + (ranks.size() == 1 ? "rank " : "ranks ") +
         formatRankList(ranks);
}

}  // namespace chorus::boot
