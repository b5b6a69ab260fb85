// Built against an installed Chorus: one rank, one allreduce.
#include <chorus/chorus.h>

#include <cstdio>

int main() {
  chorus::UniqueId id;
  chorus::Status st = chorus::createUniqueId(&id, 30);
  std::unique_ptr<chorus::Communicator> comm;
  if (st.ok()) st = chorus::Communicator::create(id, 0, 1, chorus::Config{}, &comm);
  float x[2] = {1, 2}, y[2] = {0, 0};
  if (st.ok()) st = comm->allReduce(x, y, 2, chorus::DataType::Float32, chorus::RedOp::Sum);
  if (!st.ok() || y[1] != 2) {
    fprintf(stderr, "consumer: %s\n", st.toString().c_str());
    return 1;
  }
  printf("consumer ok\n");
  return 0;
}
