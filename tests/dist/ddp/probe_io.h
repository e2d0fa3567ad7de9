// What the rank probes (ddp_probe, sync_bn_probe) share: their command line
// `PROBE SCENARIO OUT [--flag [value]]...` and the raw float32 files they write for the tests.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace ddp3d::test {

struct ProbeArgs {
  std::string scenario;
  std::string out;
  std::map<std::string, std::string> flags;  // "--flag" -> value ("1" for a bare flag)
  std::string get(const std::string& flag, const std::string& fallback) const;
  int get(const std::string& flag, int fallback) const;
  bool has(const std::string& flag) const;
};

// Throws std::invalid_argument (naming `program`) for a missing scenario/OUT or a stray word.
ProbeArgs parse_probe_args(int argc, char** argv, const std::string& program);

// The tensors, converted to float32 and concatenated, as raw bytes.
void write_floats(const std::string& path, const std::vector<at::Tensor>& tensors);

void write_text(const std::string& path, const std::string& text);

}  // namespace ddp3d::test
