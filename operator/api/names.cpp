#include "operator/api/names.h"

#include <cstdio>

namespace ddp3d::op::api {

namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
  return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

// Lowercases and maps every character outside [a-z0-9-] to '-' (job names may contain '.').
std::string sanitize(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(is_lower_alnum(c) ? c : '-');
  }
  return out;
}

std::string trim_dashes(std::string s) {
  while (!s.empty() && s.back() == '-') s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == '-') ++i;
  return s.substr(i);
}

// Builds "<job-part><suffix>" within 63 characters. When the plain form is already a valid
// label it is used as is (short names stay readable); otherwise the job part is sanitized,
// cut, and followed by "-<hash of the original job name>".
std::string shortened(const std::string& job, const std::string& suffix, bool must_start_alpha) {
  std::string plain = job + suffix;  // not const: returned by move
  const bool ok = must_start_alpha ? is_dns1035_label(plain) : is_dns1123_label(plain);
  if (ok) return plain;
  const std::string hash = short_hash(job);
  std::string prefix = trim_dashes(sanitize(job));
  if (must_start_alpha && (prefix.empty() || !(prefix[0] >= 'a' && prefix[0] <= 'z'))) {
    prefix = "tj-" + prefix;
  }
  const size_t budget = kMaxLabelLength - suffix.size() - hash.size() - 1;
  if (prefix.size() > budget) prefix = prefix.substr(0, budget);
  prefix = trim_dashes(prefix);
  return prefix.empty() ? (must_start_alpha ? "tj-" : "") + hash + suffix
                        : prefix + "-" + hash + suffix;
}

}  // namespace

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string short_hash(const std::string& s) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(fnv1a64(s)));
  return std::string(buf, 8);
}

bool is_dns1123_label(const std::string& s) {
  if (s.empty() || s.size() > kMaxLabelLength) return false;
  if (!is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  for (char c : s) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

bool is_dns1035_label(const std::string& s) {
  return is_dns1123_label(s) && s.front() >= 'a' && s.front() <= 'z';
}

bool is_label_value(const std::string& s) {
  if (s.empty()) return true;
  if (s.size() > kMaxLabelLength) return false;
  if (!is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string pod_name(const std::string& job, int rank) {
  return shortened(job, "-node-" + std::to_string(rank), false);
}

std::string service_name(const std::string& job) {
  return shortened(job, "", true);
}

std::string rendezvous_secret_name(const std::string& job, int attempt) {
  return shortened(job, "-rendezvous-" + std::to_string(attempt), false);
}

std::string pod_group_name(const std::string& job, int attempt) {
  return shortened(job, "-gang-" + std::to_string(attempt), false);
}

std::string grow_probe_name(const std::string& job, int index) {
  return shortened(job, "-probe-" + std::to_string(index), false);
}

std::string workload_name(const std::string& job) {
  return shortened(job, "-workload", false);
}

std::string network_policy_name(const std::string& job) {
  return shortened(job, "-ranks", false);
}

std::string job_label_value(const std::string& job) {
  if (is_label_value(job)) return job;
  return shortened(job, "", false);
}

}  // namespace ddp3d::op::api
