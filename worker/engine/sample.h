// The data that flows between datasets, models and evaluators: one Sample per example, one
// Batch per step. Both carry named tensors so a dataset, its model and its evaluator agree on
// field names ("points", "gt_bboxes_3d", ...) without the engine knowing them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddp3d::engine {

// One example (from Dataset::get) or one per-example result (from Model::predict).
struct Sample {
  std::map<std::string, at::Tensor> tensors;
  // Non-tensor facts: sample index, file names, calibration ids.
  std::map<std::string, std::string> meta;

  // The tensor `name`; throws std::out_of_range naming the missing field and the ones present.
  const at::Tensor& tensor(const std::string& name) const;
  bool has(const std::string& name) const { return tensors.count(name) != 0; }
};

// A collated group of samples, ready for a model.
struct Batch {
  std::int64_t size = 0;
  // Fixed-shape fields stacked along a new dim 0 (shape [size, ...]).
  std::map<std::string, at::Tensor> stacked;
  // Variable-shape fields (point clouds, per-sample boxes): one tensor per sample, in order.
  std::map<std::string, std::vector<at::Tensor>> lists;
  // Sample::meta of each sample, in order.
  std::vector<std::map<std::string, std::string>> meta;

  // Field accessors; throw std::out_of_range naming the missing field.
  const at::Tensor& get(const std::string& name) const;
  const std::vector<at::Tensor>& list(const std::string& name) const;

  // A copy with every tensor on `device` (non_blocking where the source is pinned).
  Batch to(const at::Device& device) const;
};

// Collates samples into a Batch: fields named in `list_fields` become per-sample lists, every
// other field is stacked (all samples must have it with the same shape, or std::invalid_argument
// names the field and both shapes). Samples must have the same field names.
Batch collate_samples(const std::vector<Sample>& samples, const std::set<std::string>& list_fields);

}  // namespace ddp3d::engine
