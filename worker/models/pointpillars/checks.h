// The checks that PointPillars' parts fit together (channel counts, stage counts, anchors,
// assigners, ...), written once over the options: validate() throws the first problem of any,
// and the config checks (pointpillars/config.cpp) report every problem of the connections at
// the file and line of its key when the config loads.
#pragma once

#include <string>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

// Receives each problem: the dotted config key ("model.backbone.layer_nums") and what is wrong.
class OptionIssues {
 public:
  virtual ~OptionIssues() = default;
  virtual void report(const std::string& key, const std::string& message) = 0;
};

// How the parts connect: channel counts along the network, stage counts, anchors and
// assigners per class. The config check runs these at load time.
void check_connections(const PointPillarsOptions& options, OptionIssues& issues);
// SECOND's one layer count and stride per stage (the config check of backbone SECOND).
void check_second_stages(const SECONDOptions& backbone, OptionIssues& issues);
// Each part's own values (even PFN widths, a grid the strides divide, positive sizes, ...), and
// what the implementation supports; checked when the network is built.
void check_parts(const PointPillarsOptions& options, OptionIssues& issues);

}  // namespace ddp3d::models
