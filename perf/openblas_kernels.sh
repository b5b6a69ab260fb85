# Sourced by perf/train_compare.sh and perf/torch_compare.sh (needs BUILD): Debian's OpenBLAS
# falls back to its generic kernels on CPU models it does not know, and chorus-train then
# restarts itself with ones that fit (examples/train/blas_core.h). PyTorch uses the same
# OpenBLAS: export the kernels chorus-train ends up with, so that both multiply alike and a
# comparison is not bound by 4-5x slower GEMMs. A user's OPENBLAS_CORETYPE is kept.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  OPENBLAS_CORETYPE="$(OPENBLAS_VERBOSE=2 "$BUILD/bin/chorus-train" --help 2>&1 |
    sed -n 's/^Core: //p' | tail -1)"
  export OPENBLAS_CORETYPE
fi
echo "# OpenBLAS kernels: ${OPENBLAS_CORETYPE:-as detected}"
