#include "worker/engine/sample.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>

namespace ddp3d::engine {
namespace {

template <typename Map>
std::string field_names(const Map& map) {
  std::string names;
  for (const auto& entry : map) names += (names.empty() ? "" : ", ") + entry.first;
  return names.empty() ? "none" : names;
}

std::string shape_string(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

}  // namespace

const at::Tensor& Sample::tensor(const std::string& name) const {
  const auto it = tensors.find(name);
  if (it == tensors.end()) {
    throw std::out_of_range("sample has no field '" + name + "' (fields: " + field_names(tensors) +
                            ")");
  }
  return it->second;
}

const at::Tensor& Batch::get(const std::string& name) const {
  const auto it = stacked.find(name);
  if (it == stacked.end()) {
    throw std::out_of_range("batch has no stacked field '" + name +
                            "' (stacked: " + field_names(stacked) + "; lists: " +
                            field_names(lists) + ")");
  }
  return it->second;
}

const std::vector<at::Tensor>& Batch::list(const std::string& name) const {
  const auto it = lists.find(name);
  if (it == lists.end()) {
    throw std::out_of_range("batch has no list field '" + name + "' (lists: " +
                            field_names(lists) + "; stacked: " + field_names(stacked) + ")");
  }
  return it->second;
}

Batch Batch::to(const at::Device& device) const {
  Batch out;
  out.size = size;
  out.meta = meta;
  for (const auto& [name, t] : stacked) {
    out.stacked.emplace(name, t.to(device, /*non_blocking=*/t.is_pinned()));
  }
  for (const auto& [name, ts] : lists) {
    std::vector<at::Tensor>& dst = out.lists[name];
    dst.reserve(ts.size());
    for (const at::Tensor& t : ts) dst.push_back(t.to(device, /*non_blocking=*/t.is_pinned()));
  }
  return out;
}

Batch collate_samples(const std::vector<Sample>& samples,
                      const std::set<std::string>& list_fields) {
  Batch batch;
  batch.size = static_cast<std::int64_t>(samples.size());
  if (samples.empty()) return batch;
  const Sample& first = samples.front();
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].tensors.size() != first.tensors.size()) {
      throw std::invalid_argument("collate: sample " + std::to_string(i) + " has fields [" +
                                  field_names(samples[i].tensors) + "], sample 0 has [" +
                                  field_names(first.tensors) + "]");
    }
  }
  for (const auto& [name, t0] : first.tensors) {
    std::vector<at::Tensor> column;
    column.reserve(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const at::Tensor& t = samples[i].tensor(name);
      if (!list_fields.count(name) && !t.sizes().equals(t0.sizes())) {
        throw std::invalid_argument("collate: field '" + name + "' has shape " + shape_string(t) +
                                    " in sample " + std::to_string(i) + " but " +
                                    shape_string(t0) +
                                    " in sample 0; declare it in Dataset::list_fields()");
      }
      column.push_back(t);
    }
    if (list_fields.count(name)) {
      batch.lists.emplace(name, std::move(column));
    } else {
      batch.stacked.emplace(name, at::stack(column));
    }
  }
  for (const Sample& s : samples) batch.meta.push_back(s.meta);
  return batch;
}

}  // namespace ddp3d::engine
