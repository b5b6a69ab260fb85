// IDX: big-endian magic (0x0000 type dims), one big-endian uint32 per dimension, then the data.
#include "idx.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace train {
namespace {

using chorus::Status;

const char kHint[] = "install the Debian package 'dataset-fashion-mnist' or pass --data DIR";

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using Gz = std::unique_ptr<gzFile_s, GzCloser>;

Status readExact(gzFile f, const std::string& path, void* dst, size_t bytes) {
  auto* p = static_cast<uint8_t*>(dst);
  while (bytes > 0) {
    unsigned chunk = bytes > (1u << 30) ? (1u << 30) : unsigned(bytes);
    int n = gzread(f, p, chunk);
    if (n <= 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      return Status::SystemError(path + ": truncated or corrupt IDX file (" +
                                 (n < 0 ? std::string(msg) : std::string("unexpected end")) + ")");
    }
    p += n;
    bytes -= size_t(n);
  }
  return Status::Ok();
}

// Opens an IDX file with `wantDims` dimensions of unsigned bytes and returns its sizes.
Status openIdx(const std::string& path, int wantDims, Gz* out, std::vector<uint32_t>* dims) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    return Status::FromErrno(errno, "cannot open " + path + " (" + kHint + ")");
  }
  out->reset(f);
  gzbuffer(f, 1 << 20);
  uint8_t head[4];
  CHORUS_RETURN_IF_ERROR(readExact(f, path, head, 4));
  if (head[0] || head[1] || head[2] != 0x08 || head[3] != wantDims) {
    return Status::InvalidArgument(path + ": not an IDX file of unsigned bytes with " +
                                   std::to_string(wantDims) + " dimension(s)");
  }
  dims->resize(size_t(wantDims));
  for (auto& d : *dims) {
    uint8_t b[4];
    CHORUS_RETURN_IF_ERROR(readExact(f, path, b, 4));
    d = uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];
  }
  return Status::Ok();
}

}  // namespace

Status loadIdxPair(const std::string& dir, const std::string& prefix, int64_t limit, Dataset* out) {
  const std::string imgPath = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string lblPath = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  Gz img, lbl;
  std::vector<uint32_t> idims, ldims;
  CHORUS_RETURN_IF_ERROR(openIdx(imgPath, 3, &img, &idims));
  CHORUS_RETURN_IF_ERROR(openIdx(lblPath, 1, &lbl, &ldims));
  if (idims[0] != ldims[0]) {
    return Status::InvalidArgument(imgPath + " has " + std::to_string(idims[0]) + " images but " +
                                   lblPath + " has " + std::to_string(ldims[0]) + " labels");
  }
  int64_t count = idims[0];
  if (limit > 0 && limit < count) count = limit;
  out->count = count;
  out->pixels = int(idims[1] * idims[2]);
  out->images.resize(size_t(count) * size_t(out->pixels));
  out->labels.resize(size_t(count));
  CHORUS_RETURN_IF_ERROR(readExact(img.get(), imgPath, out->images.data(), out->images.size()));
  CHORUS_RETURN_IF_ERROR(readExact(lbl.get(), lblPath, out->labels.data(), out->labels.size()));
  for (int64_t i = 0; i < count; ++i) {
    if (out->labels[size_t(i)] > 9) {
      return Status::InvalidArgument(lblPath + ": label " + std::to_string(out->labels[size_t(i)]) +
                                     " at item " + std::to_string(i) + " is not a class 0..9");
    }
  }
  return Status::Ok();
}

void gatherBatch(const Dataset& d, const uint32_t* idx, int n, float* out, int* y) {
  const size_t px = size_t(d.pixels);
  for (int i = 0; i < n; ++i) {
    const uint8_t* src = d.images.data() + size_t(idx[i]) * px;
    float* dst = out + size_t(i) * px;
    for (size_t j = 0; j < px; ++j) dst[j] = float(src[j]) * (1.0f / 255.0f);
    y[i] = d.labels[idx[i]];
  }
}

}  // namespace train
