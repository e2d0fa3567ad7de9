#include "worker/engine/evaluate.h"

#include <torch/serialize.h>
#include <torch/utils.h>

#include <memory>
#include <string>
#include <vector>

#include "worker/engine/batch_loader.h"
#include "worker/engine/collectives.h"
#include "worker/engine/data_order.h"

namespace ddp3d::engine {
namespace {

// Every record of every rank, in dataset order (the sampler deals index i to rank i % world),
// without the sampler's padding.
std::vector<Sample> gather_results(const std::vector<Sample>& mine, std::int64_t dataset_size,
                                   const RunContext& ctx) {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const Sample& s : mine) {
    c10::Dict<std::string, at::Tensor> tensors;
    for (const auto& [k, v] : s.tensors) tensors.insert(k, v.to(at::kCPU));
    c10::Dict<std::string, std::string> meta;
    for (const auto& [k, v] : s.meta) meta.insert(k, v);
    list.push_back(c10::ivalue::Tuple::create({c10::IValue(tensors), c10::IValue(meta)}));
  }
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(list));
  const std::vector<std::string> parts =
      allgather_bytes(ctx.pg, std::string(bytes.begin(), bytes.end()));
  if (ctx.rank != 0) return {};
  std::vector<std::vector<Sample>> per_rank;
  for (const std::string& part : parts) {
    const c10::IValue iv = torch::pickle_load(std::vector<char>(part.begin(), part.end()));
    std::vector<Sample> samples;
    for (const c10::IValue& item : iv.toListRef()) {
      const auto& elems = item.toTupleRef().elements();
      Sample s;
      for (const auto& e : elems[0].toGenericDict())
        s.tensors[e.key().toStringRef()] = e.value().toTensor();
      for (const auto& e : elems[1].toGenericDict())
        s.meta[e.key().toStringRef()] = e.value().toStringRef();
      samples.push_back(std::move(s));
    }
    per_rank.push_back(std::move(samples));
  }
  std::vector<Sample> ordered;
  for (std::size_t i = 0; static_cast<std::int64_t>(ordered.size()) < dataset_size; ++i) {
    bool any = false;
    for (auto& samples : per_rank) {
      if (i < samples.size() && static_cast<std::int64_t>(ordered.size()) < dataset_size) {
        ordered.push_back(std::move(samples[i]));
        any = true;
      }
    }
    if (!any) break;
  }
  return ordered;
}

}  // namespace

MetricMap evaluate(Model& model, const Dataset& dataset, const LoaderSpec& spec,
                   Evaluator& evaluator, const RunContext& ctx, const DrawOptions* draw) {
  torch::NoGradGuard no_grad;
  model.eval();
  evaluator.reset();
  BatchLoaderOptions lo{spec.batch_size, spec.num_workers, 0, false};
  std::shared_ptr<const Dataset> data(&dataset, [](const Dataset*) {});
  BatchLoader loader(
      data, epoch_indices(dataset.size(), ctx, false, 0, 0, false), lo,
      [&](std::int64_t index) { return data_seed(ctx.seed, ctx.rank, 0, index); },
      LoaderThreads{spec.num_workers_key(), {}});
  while (auto batch = loader.next()) {
    const Batch on_device = batch->to(ctx.device);
    const std::vector<Sample> predictions = model.predict(on_device);
    if (draw) evaluator.draw(on_device, predictions, *draw);
    evaluator.process(on_device, predictions);
  }
  std::vector<Sample> all = gather_results(evaluator.results(), dataset.size(), ctx);
  evaluator.reset();
  model.train();
  if (ctx.rank != 0) return {};
  return evaluator.compute_metrics(all);
}

}  // namespace ddp3d::engine
