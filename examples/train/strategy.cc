// makeStrategy: lays the ranks out as a grid of communicator splits. Rank r of P with a model
// dimension of width W (the tensor or pipeline ranks) sits at data index r / W, model index
// r % W: the ranks of one model group are consecutive (on one host they share the most
// traffic), and the ranks holding the same slice or stage form the data group.
#include "strategy.h"

#include "collective.h"
#include "pipeline.h"
#include "tensor.h"
#include "zero.h"

namespace train {

using chorus::Communicator;
using chorus::Status;

Status ModelSlice::checkReplicas(uint64_t step, uint64_t* hash) {
  return checkReplicasAgree(data_ ? ct_ : nullptr, dSize_, params_, step, hash, data_.get());
}

void ModelSlice::initOptimizer(const Options& o) {
  grads_.assign(params_.size(), 0.0f);
  sgd_ = std::make_unique<Sgd>(params_.size(), o.lr, o.momentum);
}

Status ModelSlice::update(double lossPart, double* loss) {
  if (data_) {
    CHORUS_RETURN_IF_ERROR(ct_->run([&](Communicator&) {
      return data_
          ->allReduce(grads_.data(), grads_.data(), grads_.size(), chorus::DataType::Float32,
                      chorus::RedOp::Sum)
          .withContext("gradient allreduce across the data dimension");
    }));
  }
  sgd_->step(params_.data(), grads_.data(), 0, params_.size());
  double stats[2] = {lossPart, 0};
  CHORUS_RETURN_IF_ERROR(sumDoubles(ct_, stats, 2));
  *loss = stats[0];
  return Status::Ok();
}

namespace {

// A split of the world through the communication thread; null when it would hold one rank.
Status splitWorld(CommThread* ct, int color, int key, std::unique_ptr<Communicator>* out) {
  out->reset();
  if (!ct) return Status::Ok();
  chorus::Config config;
  CHORUS_RETURN_IF_ERROR(chorus::Config::fromEnvironment(&config));
  CHORUS_RETURN_IF_ERROR(
      ct->run([&](Communicator& c) { return c.split(color, key, config, out); }));
  if (*out && (*out)->size() == 1) out->reset();
  return Status::Ok();
}

}  // namespace

Status makeStrategy(const Options& o, CommThread* ct, int rank, int size,
                    const std::vector<int>& dims, std::unique_ptr<Strategy>* out) {
  if (o.strategy == "zero") {
    *out = makeZero(o, ct, rank, size, dims);
    return Status::Ok();
  }
  int dataWidth = 1;
  std::string model = o.strategy;
  if (o.strategy == "hybrid") {
    dataWidth = o.dataParallel;
    model = o.hybrid;
    if (size % dataWidth != 0 || size / dataWidth < 2)
      return Status::InvalidArgument(
          "--strategy hybrid lays " + std::to_string(size) + " rank(s) out as --data-parallel " +
          std::to_string(dataWidth) +
          " x a model dimension of at least 2 ranks: use a rank count of at least twice "
          "--data-parallel and divisible by it (e.g. chorus-run -n 4 with --data-parallel 2)");
  }
  const int width = size / dataWidth;
  const int dataIndex = rank / width, modelIndex = rank % width;
  std::unique_ptr<Communicator> modelGroup, dataGroup;
  CHORUS_RETURN_IF_ERROR(
      splitWorld(ct, dataIndex, modelIndex, &modelGroup).withContext("splitting the model group"));
  CHORUS_RETURN_IF_ERROR(
      splitWorld(ct, modelIndex, dataIndex, &dataGroup).withContext("splitting the data group"));
  if (model == "tensor") {
    *out = makeTensor(o, ct, std::move(modelGroup), std::move(dataGroup), modelIndex, width,
                      dataIndex, dataWidth, dims);
    return Status::Ok();
  }
  return makePipeline(o, ct, std::move(modelGroup), std::move(dataGroup), modelIndex, width,
                      dataIndex, dataWidth, dims, out);
}

}  // namespace train
