// The Open MPI backend: MPI_COMM_WORLD, initialised only when --impl mpi is chosen, so the same
// binary runs under chorus-run without an MPI launcher. Chorus's placement conventions map to
// MPI_IN_PLACE; where MPI's in-place layout differs (reduce_scatter) or MPI has no
// out-of-place form (broadcast), the extra copy is part of the measured time, as it would be
// for an application.
// The C API only: the deprecated C++ bindings do not build -Wextra clean.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstring>
#include <utility>
#include <vector>

#include "backend.h"

namespace chorus::bench {

namespace {

// The types and reductions MPI has: MPI 3 has no 16-bit or 8-bit floats.
const std::pair<DataType, MPI_Datatype> kTypes[] = {
    {DataType::Int8, MPI_INT8_T},   {DataType::Uint8, MPI_UINT8_T},
    {DataType::Int32, MPI_INT32_T}, {DataType::Uint32, MPI_UINT32_T},
    {DataType::Int64, MPI_INT64_T}, {DataType::Uint64, MPI_UINT64_T},
    {DataType::Float32, MPI_FLOAT}, {DataType::Float64, MPI_DOUBLE}};
const std::pair<RedOp, MPI_Op> kOps[] = {
    {RedOp::Sum, MPI_SUM}, {RedOp::Prod, MPI_PROD}, {RedOp::Max, MPI_MAX}, {RedOp::Min, MPI_MIN}};

// What `table` pairs with `key`; null when it has no such entry.
template <typename K, typename V, size_t N>
const V* lookUp(const std::pair<K, V> (&table)[N], K key) {
  for (const auto& [k, v] : table)
    if (k == key) return &v;
  return nullptr;
}

Status check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Status::RemoteError(std::string(what) + " failed: " + std::string(text, size_t(len)));
}

class MpiBackend final : public Backend {
 public:
  MpiBackend() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // Errors come back as codes we turn into Status, instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~MpiBackend() override { MPI_Finalize(); }
  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(const void* s, void* r, size_t n, DataType t, RedOp op) override {
    MPI_Datatype mt = MPI_BYTE;
    MPI_Op mo = MPI_SUM;
    CHORUS_RETURN_IF_ERROR(types(t, op, &mt, &mo));
    return check(MPI_Allreduce(s == r ? MPI_IN_PLACE : s, r, int(n), mt, mo, MPI_COMM_WORLD),
                 "MPI_Allreduce");
  }
  Status reduceScatter(const void* s, void* r, size_t n, DataType t, RedOp op) override {
    MPI_Datatype mt = MPI_BYTE;
    MPI_Op mo = MPI_SUM;
    CHORUS_RETURN_IF_ERROR(types(t, op, &mt, &mo));
    const size_t es = dataTypeSize(t);
    if (static_cast<const char*>(s) + rank_ * n * es != r)
      return check(MPI_Reduce_scatter_block(s, r, int(n), mt, mo, MPI_COMM_WORLD),
                   "MPI_Reduce_scatter_block");
    // MPI's in-place result lands at the start of the buffer; Chorus's at rank*count.
    void* full = const_cast<void*>(s);
    Status st = check(MPI_Reduce_scatter_block(MPI_IN_PLACE, full, int(n), mt, mo, MPI_COMM_WORLD),
                      "MPI_Reduce_scatter_block");
    if (st.ok() && rank_ > 0) memmove(r, full, n * es);
    return st;
  }
  Status allGather(const void* s, void* r, size_t n, DataType t) override {
    MPI_Datatype mt = MPI_BYTE;
    CHORUS_RETURN_IF_ERROR(type(t, &mt));
    const bool inPlace = static_cast<const char*>(r) + rank_ * n * dataTypeSize(t) == s;
    return check(
        MPI_Allgather(inPlace ? MPI_IN_PLACE : s, int(n), mt, r, int(n), mt, MPI_COMM_WORLD),
        "MPI_Allgather");
  }
  Status broadcast(const void* s, void* r, size_t n, DataType t, int root) override {
    MPI_Datatype mt = MPI_BYTE;
    CHORUS_RETURN_IF_ERROR(type(t, &mt));
    if (rank_ == root && s != r) memcpy(r, s, n * dataTypeSize(t));
    return check(MPI_Bcast(r, int(n), mt, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
  Status reduce(const void* s, void* r, size_t n, DataType t, RedOp op, int root) override {
    MPI_Datatype mt = MPI_BYTE;
    MPI_Op mo = MPI_SUM;
    CHORUS_RETURN_IF_ERROR(types(t, op, &mt, &mo));
    const void* in = (s == r && rank_ == root) ? MPI_IN_PLACE : s;
    return check(MPI_Reduce(in, r, int(n), mt, mo, root, MPI_COMM_WORLD), "MPI_Reduce");
  }
  Status allToAll(const void* s, void* r, size_t n, DataType t) override {
    MPI_Datatype mt = MPI_BYTE;
    CHORUS_RETURN_IF_ERROR(type(t, &mt));
    return check(MPI_Alltoall(s == r ? MPI_IN_PLACE : s, int(n), mt, r, int(n), mt, MPI_COMM_WORLD),
                 "MPI_Alltoall");
  }
  Status gather(const void* s, void* r, size_t n, DataType t, int root) override {
    MPI_Datatype mt = MPI_BYTE;
    CHORUS_RETURN_IF_ERROR(type(t, &mt));
    return check(MPI_Gather(s, int(n), mt, r, int(n), mt, root, MPI_COMM_WORLD), "MPI_Gather");
  }
  Status scatter(const void* s, void* r, size_t n, DataType t, int root) override {
    MPI_Datatype mt = MPI_BYTE;
    CHORUS_RETURN_IF_ERROR(type(t, &mt));
    return check(MPI_Scatter(s, int(n), mt, r, int(n), mt, root, MPI_COMM_WORLD), "MPI_Scatter");
  }
  Status p2p(const P2pOp* ops, int n) override {
    if (n == 1) {
      const P2pOp& o = ops[0];
      return o.send ? check(MPI_Send(o.buf, int(o.bytes), MPI_BYTE, o.peer, 0, MPI_COMM_WORLD),
                            "MPI_Send")
                    : check(MPI_Recv(o.buf, int(o.bytes), MPI_BYTE, o.peer, 0, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE),
                            "MPI_Recv");
    }
    reqs_.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      const P2pOp& o = ops[i];
      int rc = o.send
                   ? MPI_Isend(o.buf, int(o.bytes), MPI_BYTE, o.peer, 0, MPI_COMM_WORLD, &reqs_[i])
                   : MPI_Irecv(o.buf, int(o.bytes), MPI_BYTE, o.peer, 0, MPI_COMM_WORLD, &reqs_[i]);
      CHORUS_RETURN_IF_ERROR(check(rc, o.send ? "MPI_Isend" : "MPI_Irecv"));
    }
    return check(MPI_Waitall(n, reqs_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  Status barrier() override { return check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

 private:
  static Status type(DataType t, MPI_Datatype* mt) {
    const MPI_Datatype* found = lookUp(kTypes, t);
    if (!found) return Status::Unsupported(std::string("MPI has no ") + dataTypeName(t) + " type");
    *mt = *found;
    return Status::Ok();
  }
  static Status types(DataType t, RedOp op, MPI_Datatype* mt, MPI_Op* mo) {
    CHORUS_RETURN_IF_ERROR(type(t, mt));
    const MPI_Op* found = lookUp(kOps, op);
    if (!found)
      return Status::Unsupported(std::string("MPI has no ") + redOpName(op) + " reduction");
    *mo = *found;
    return Status::Ok();
  }

  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> reqs_;
};

}  // namespace

Status makeMpiBackend(const Options&, std::unique_ptr<Backend>* out) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
    return Status::SystemError("MPI_Init failed: run --impl mpi under mpirun (or srun --mpi=pmix)");
  *out = std::make_unique<MpiBackend>();
  return Status::Ok();
}

}  // namespace chorus::bench
