// Validation of metric and label names against the Prometheus data model, with errors that
// name the offending string (std::invalid_argument).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddp3d::metrics {

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]* and not starting with "__" (reserved for Prometheus itself).
bool is_valid_label_name(std::string_view name);

// Throw std::invalid_argument naming the bad name and the metric it belongs to.
void check_metric_name(std::string_view name);
void check_label_names(std::string_view metric, const std::vector<std::string>& label_names);

}  // namespace ddp3d::metrics
