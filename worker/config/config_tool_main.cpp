// ddp3d_config_tool: inspect configs without starting a training run.
//   print CONFIG [--cfg-options k=v ...]   the merged, validated config (what the work dir gets)
//   check CONFIG...                        validate; every error of every file, exit 1 if any
//   docs [--update FILE]                   the schema reference (markdown); --update rewrites
//                                          the part of FILE between the reference markers
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "worker/components/builtin_components.h"
#include "worker/config/config.h"
#include "worker/config/schema.h"

namespace {

constexpr const char* kBegin =
    "<!-- BEGIN SCHEMA REFERENCE (generated: ddp3d_config_tool docs) -->";
constexpr const char* kEnd = "<!-- END SCHEMA REFERENCE -->";

int usage() {
  std::fprintf(stderr,
               "usage: ddp3d_config_tool print CONFIG [--cfg-options k=v ...]\n"
               "       ddp3d_config_tool check CONFIG...\n"
               "       ddp3d_config_tool docs [--update FILE]\n");
  return 2;
}

int update_docs(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  const std::size_t begin = doc.find(kBegin);
  const std::size_t end = doc.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    std::fprintf(stderr, "%s: reference markers not found\n", path.c_str());
    return 1;
  }
  const std::size_t body = begin + std::string(kBegin).size();
  doc.replace(body, end - body,
              "\n\n" + ddp3d::config::schema_markdown(ddp3d::config::ddp3d_schema()));
  std::ofstream(path) << doc;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  const std::string command = args[0];
  ddp3d::components::register_builtin_schemas();
  try {
    if (command == "docs") {
      if (args.size() == 3 && args[1] == "--update") return update_docs(args[2]);
      if (args.size() != 1) return usage();
      std::cout << ddp3d::config::schema_markdown(ddp3d::config::ddp3d_schema());
      return 0;
    }
    if (command == "print") {
      if (args.size() < 2) return usage();
      std::vector<std::string> options;
      for (std::size_t i = 2; i < args.size(); ++i) {
        if (args[i] == "--cfg-options") continue;
        options.push_back(args[i]);
      }
      std::cout << ddp3d::config::load(args[1], options).dump_yaml();
      return 0;
    }
    if (command == "check") {
      if (args.size() < 2) return usage();
      int failed = 0;
      for (std::size_t i = 1; i < args.size(); ++i) {
        try {
          ddp3d::config::load(args[i]);
          std::cout << "ok    " << args[i] << "\n";
        } catch (const ddp3d::config::ConfigError& e) {
          ++failed;
          std::cout << "FAIL  " << e.what() << "\n";
        }
      }
      return failed == 0 ? 0 : 1;
    }
  } catch (const ddp3d::config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return usage();
}
