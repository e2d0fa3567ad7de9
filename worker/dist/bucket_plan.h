// Assignment of parameters to gradient buckets (pure logic, no LibTorch), after PyTorch's
// compute_bucket_assignment_by_size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddp3d::dist {

struct BucketPlanInput {
  std::int64_t bytes = 0;
  // Parameters share a bucket only with the same key (dtype and device): a bucket is one
  // flat tensor.
  std::int64_t group_key = 0;
};

// Walks the parameters in reverse order (the order backward tends to produce gradients) and
// closes a bucket as soon as it holds at least its cap: `first_cap_bytes` for the first bucket
// of each group, `cap_bytes` after. Returns parameter indices per bucket, buckets ordered by
// the position of their first parameter in that reverse walk (the launch order). Every
// parameter appears in exactly one bucket; a parameter larger than the cap gets its own.
std::vector<std::vector<std::size_t>> plan_buckets(const std::vector<BucketPlanInput>& params,
                                                   std::int64_t first_cap_bytes,
                                                   std::int64_t cap_bytes);

}  // namespace ddp3d::dist
