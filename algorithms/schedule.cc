#include "algorithms/schedule.h"

namespace chorus {

namespace {
int add(Schedule* s, StepKind kind, int peer, BufRef src, BufRef dst, uint64_t count, int d0,
        int d1) {
  Step st;
  st.kind = kind;
  st.peer = peer;
  st.src = src;
  st.dst = dst;
  st.count = count;
  st.deps[0] = d0;
  st.deps[1] = d1;
  s->steps.push_back(st);
  return int(s->steps.size()) - 1;
}

const char* bufName(BufferId b) {
  switch (b) {
    case BufferId::Input:
      return "in";
    case BufferId::Output:
      return "out";
    case BufferId::Scratch:
      return "tmp";
  }
  return "user";
}
}  // namespace

int Schedule::send(int peer, BufRef src, uint64_t count, int d0, int d1) {
  return add(this, StepKind::Send, peer, src, {}, count, d0, d1);
}
int Schedule::recv(int peer, BufRef dst, uint64_t count, int d0, int d1) {
  return add(this, StepKind::Recv, peer, {}, dst, count, d0, d1);
}
int Schedule::recvReduce(int peer, BufRef local, BufRef dst, uint64_t count, int d0, int d1) {
  return add(this, StepKind::RecvReduce, peer, local, dst, count, d0, d1);
}
int Schedule::copy(BufRef src, BufRef dst, uint64_t count, int d0, int d1) {
  return add(this, StepKind::Copy, -1, src, dst, count, d0, d1);
}

std::string Schedule::toString() const {
  static const char* kKind[] = {"send", "recv", "recv_reduce", "copy"};
  std::string out = algorithm;
  if (chunkBytes) out += " chunk=" + std::to_string(chunkBytes) + "B";
  out += "\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    out += "  " + std::to_string(i) + ": " + kKind[int(s.kind)];
    if (s.peer >= 0) out += " peer=" + std::to_string(s.peer);
    if (s.kind != StepKind::Recv)
      out += std::string(" src=") + bufName(s.src.buf) + "+" + std::to_string(s.src.offset);
    if (s.kind != StepKind::Send)
      out += std::string(" dst=") + bufName(s.dst.buf) + "+" + std::to_string(s.dst.offset);
    out += " n=" + std::to_string(s.count);
    for (int d : s.deps)
      if (d >= 0) out += " after=" + std::to_string(d);
    out += "\n";
  }
  return out;
}

}  // namespace chorus
