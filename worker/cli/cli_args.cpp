#include "worker/cli/cli_args.h"

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "common/parse_number.h"

namespace ddp3d::cli {

const char* const kTrainUsage =
    "usage: ddp3d train CONFIG [--work-dir DIR] [--seed N] [--deterministic]\n"
    "                   [--resume [auto|PATH]] [--cfg-options k=v ...] [--launcher none|pytorch]";
const char* const kTestUsage =
    "usage: ddp3d test CONFIG CHECKPOINT [--work-dir DIR] [--cfg-options k=v ...]\n"
    "                  [--launcher none|pytorch]\n"
    "                  [--show-dir DIR [--show-count N] [--show-score-thr X]]\n"
    "                  [--submission-dir DIR]";

namespace {

bool is_flag(const std::string& s) {
  return s.rfind("--", 0) == 0;
}

// Parses the flags both commands share; returns false when `args[i]` is not one of them.
template <typename Args>
bool common_flag(const std::vector<std::string>& args, std::size_t& i, Args& out) {
  const std::string& a = args[i];
  auto value = [&](const char* flag) -> std::string {
    if (i + 1 >= args.size() || is_flag(args[i + 1])) {
      throw UsageError(std::string(flag) + " needs a value");
    }
    return args[++i];
  };
  if (a == "--work-dir") {
    out.work_dir = value("--work-dir");
    if (out.work_dir->empty()) throw UsageError("--work-dir: the path is empty");
    if (out.work_dir->find('\0') != std::string::npos || out.work_dir->size() > 4096) {
      throw UsageError("--work-dir: not a usable path");
    }
  } else if (a == "--launcher") {
    out.launcher = value("--launcher");
    if (out.launcher != "none" && out.launcher != "pytorch") {
      throw UsageError("--launcher: expected none or pytorch, got '" + out.launcher + "'");
    }
  } else if (a == "--cfg-options") {
    while (i + 1 < args.size() && !is_flag(args[i + 1])) {
      const std::string& kv = args[++i];
      if (kv.find('=') == std::string::npos || kv.front() == '=') {
        throw UsageError("--cfg-options: expected key=value, got '" + kv + "'");
      }
      out.cfg_options.push_back(kv);
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace

TrainArgs parse_train_args(const std::vector<std::string>& args) {
  TrainArgs out;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (common_flag(args, i, out)) continue;
    if (a == "--seed") {
      if (i + 1 >= args.size()) throw UsageError("--seed needs a value");
      try {
        out.seed =
            parse_integer("--seed", args[i + 1], 0, std::numeric_limits<std::int64_t>::max());
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      ++i;
    } else if (a == "--deterministic") {
      out.deterministic = true;
    } else if (a == "--resume") {
      // Optional value: `--resume`, `--resume auto`, `--resume PATH`.
      if (i + 1 < args.size() && !is_flag(args[i + 1]) && !positional.empty()) {
        out.resume = args[++i];
      } else {
        out.resume = "auto";
      }
    } else if (is_flag(a)) {
      throw UsageError("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) {
    throw UsageError(positional.empty() ? "missing CONFIG"
                                        : "unexpected argument '" + positional[1] + "'");
  }
  out.config = positional[0];
  return out;
}

TestArgs parse_test_args(const std::vector<std::string>& args) {
  TestArgs out;
  std::vector<std::string> positional;
  bool show_tuned = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (common_flag(args, i, out)) continue;
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size() || is_flag(args[i + 1])) throw UsageError(a + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--show-dir") {
        out.show_dir = value();
        if (out.show_dir->empty() || out.show_dir->find('\0') != std::string::npos ||
            out.show_dir->size() > 4096) {
          throw UsageError("--show-dir: not a usable path");
        }
      } else if (a == "--submission-dir") {
        out.submission_dir = value();
        if (out.submission_dir->empty() || out.submission_dir->find('\0') != std::string::npos ||
            out.submission_dir->size() > 4096) {
          throw UsageError("--submission-dir: not a usable path");
        }
      } else if (a == "--show-count") {
        out.show_count = parse_integer(a, value(), 0, std::numeric_limits<std::int64_t>::max());
        show_tuned = true;
      } else if (a == "--show-score-thr") {
        out.show_score_thr = parse_real(a, value(), 0, 1);
        show_tuned = true;
      } else if (is_flag(a)) {
        throw UsageError("unknown option " + a);
      } else {
        positional.push_back(a);
      }
    } catch (const UsageError&) {
      throw;
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (show_tuned && !out.show_dir) {
    throw UsageError("--show-count and --show-score-thr need --show-dir");
  }
  if (positional.size() != 2) {
    throw UsageError(positional.size() < 2 ? "expected CONFIG and CHECKPOINT"
                                           : "unexpected argument '" + positional[2] + "'");
  }
  out.config = positional[0];
  out.checkpoint = positional[1];
  return out;
}

std::string work_dir_override(const std::string& path) {
  return string_override("work_dir", path);
}

std::string string_override(const std::string& key, const std::string& value) {
  // A YAML double-quoted scalar: `null`, `123`, `a,b` or `[x]` stay the path they are. No
  // '"' appears inside, so the list splitting of --cfg-options never looks into it.
  std::string quoted = key + "=\"";
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      quoted += "\\\\";
    } else if (c == '"' || u < 0x20 || u == 0x7f) {  // '"' as \x22: no quote inside the value
      static constexpr char kHex[] = "0123456789abcdef";
      quoted += "\\x";
      quoted += kHex[u >> 4];
      quoted += kHex[u & 0xf];
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

std::vector<std::string> train_overrides(const TrainArgs& args) {
  std::vector<std::string> o = args.cfg_options;
  if (args.work_dir) o.push_back(work_dir_override(*args.work_dir));
  if (args.seed) o.push_back("randomness.seed=" + std::to_string(*args.seed));
  if (args.deterministic) o.push_back("randomness.deterministic=true");
  return o;
}

}  // namespace ddp3d::cli
