#include "probe_io.h"

#include <ATen/ATen.h>

#include <fstream>
#include <stdexcept>

namespace ddp3d::test {

std::string ProbeArgs::get(const std::string& flag, const std::string& fallback) const {
  auto it = flags.find(flag);
  return it == flags.end() ? fallback : it->second;
}

int ProbeArgs::get(const std::string& flag, int fallback) const {
  auto it = flags.find(flag);
  return it == flags.end() ? fallback : std::stoi(it->second);
}

bool ProbeArgs::has(const std::string& flag) const {
  return flags.count(flag) > 0;
}

ProbeArgs parse_probe_args(int argc, char** argv, const std::string& program) {
  if (argc < 3) {
    throw std::invalid_argument("usage: " + program + " SCENARIO OUT [--flag [value]]...");
  }
  ProbeArgs a{argv[1], argv[2], {}};
  for (int i = 3; i < argc; ++i) {
    const std::string k = argv[i];
    if (k.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + k);
    if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      a.flags[k] = argv[++i];
    } else {
      a.flags[k] = "1";
    }
  }
  return a;
}

void write_floats(const std::string& path, const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.detach().to(at::kFloat).reshape({-1}));
  auto all = at::cat(flat).contiguous();
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(all.data_ptr<float>()),
          static_cast<std::streamsize>(all.numel() * sizeof(float)));
  if (!f) throw std::runtime_error("cannot write " + path);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace ddp3d::test
