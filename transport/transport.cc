#include "transport/transport.h"

namespace chorus {

Status Connection::put(MemRef, MemRef, size_t, Completion*) {
  return Status::Unsupported("this connection offers no one-sided put (offersOneSided())");
}

Status Connection::get(MemRef, MemRef, size_t, Completion*) {
  return Status::Unsupported("this connection offers no one-sided get (offersOneSided())");
}

Status Transport::registerMemory(MemRef, size_t, MemRef*) {
  return Status::Unsupported(std::string(name()) +
                             " offers no one-sided transfers, so nothing can be registered");
}

}  // namespace chorus
