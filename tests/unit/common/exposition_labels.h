// The label names of a text-format exposition, and those that collide with the labels a
// scrape attaches to every target. A series label named like a target label (`namespace`,
// `job`, ...) is stored as `exported_<name>` (honor_labels: false), so queries and alerts that
// group by it group by the scrape target instead; the binaries' metric tests assert there is
// none (docs/metrics.md, "Operator metrics").
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ddp3d::metrics::test {

// The target labels Prometheus (job, instance) and the Prometheus Operator's ServiceMonitor
// and PodMonitor (namespace, pod, container, service, endpoint, node) attach to every scraped
// series. Names starting with "__" are reserved as well.
const std::set<std::string>& scrape_target_labels();

// Sample name -> the label names its lines carry. Comment and blank lines are skipped; a
// sample line that is not `name{label="value",...} value` throws std::invalid_argument
// naming the line.
std::map<std::string, std::set<std::string>> label_names(std::string_view exposition);

// "sample_name{label}" for every label of `exposition` that a scrape would rename: one of
// scrape_target_labels() or a "__"-prefixed one. Empty when there is none.
std::vector<std::string> scrape_label_collisions(std::string_view exposition);

}  // namespace ddp3d::metrics::test
