#include "worker/dist/bucket_plan.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ddp3d::dist {

std::vector<std::vector<std::size_t>> plan_buckets(const std::vector<BucketPlanInput>& params,
                                                   std::int64_t first_cap_bytes,
                                                   std::int64_t cap_bytes) {
  if (first_cap_bytes <= 0 || cap_bytes <= 0) {
    throw std::invalid_argument("bucket caps must be positive (got first " +
                                std::to_string(first_cap_bytes) + " B, cap " +
                                std::to_string(cap_bytes) + " B)");
  }
  struct Open {
    std::vector<std::size_t> members;
    std::int64_t bytes = 0;
    bool first = true;  // the group's next bucket is still its first
  };
  std::map<std::int64_t, Open> open;
  std::vector<std::vector<std::size_t>> closed;
  for (std::size_t k = params.size(); k-- > 0;) {
    Open& o = open[params[k].group_key];
    o.members.push_back(k);
    o.bytes += params[k].bytes;
    if (o.bytes >= (o.first ? first_cap_bytes : cap_bytes)) {
      closed.push_back(std::move(o.members));
      o.members.clear();
      o.bytes = 0;
      o.first = false;
    }
  }
  for (auto& [key, o] : open) {
    if (!o.members.empty()) closed.push_back(std::move(o.members));
  }
  // Members were appended in reverse order, so a bucket's first member is its highest index;
  // launch order follows the reverse walk: higher first index first.
  std::sort(closed.begin(), closed.end(),
            [](const auto& a, const auto& b) { return a.front() > b.front(); });
  return closed;
}

}  // namespace ddp3d::dist
