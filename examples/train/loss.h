// Softmax cross-entropy over a batch of logits, shared by the whole-model MLP and the
// strategies that hold only part of it (the rank that sees the logits computes the loss).
#pragma once

#include <cstdint>

namespace train {

// logits: n x classes. Writes dLoss/dLogits scaled by `scale` into delta (n x classes),
// counts correct predictions and returns the summed (unscaled) loss.
double softmaxCrossEntropy(const float* logits, int n, int classes, const int* y, float scale,
                           float* delta, int64_t* correct);

// Predicted class of each of n rows of logits.
void argmaxRows(const float* logits, int n, int classes, int* out);

}  // namespace train
