// Helpers shared by the kube integration tests.
#pragma once

#include <cpprest/json.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <thread>

#include "operator/kube/client.h"

namespace ddp3d::kube::testing {

inline web::json::value config_map(const std::string& name,
                                   const std::map<std::string, std::string>& data,
                                   const std::map<std::string, std::string>& labels = {}) {
  auto obj = web::json::value::object();
  obj["apiVersion"] = web::json::value::string("v1");
  obj["kind"] = web::json::value::string("ConfigMap");
  obj["metadata"]["name"] = web::json::value::string(name);
  for (const auto& [k, v] : labels) obj["metadata"]["labels"][k] = web::json::value::string(v);
  obj["data"] = web::json::value::object();
  for (const auto& [k, v] : data) obj["data"][k] = web::json::value::string(v);
  return obj;
}

inline void create_namespace(Client& client, const std::string& ns) {
  auto obj = web::json::value::object();
  obj["apiVersion"] = web::json::value::string("v1");
  obj["kind"] = web::json::value::string("Namespace");
  obj["metadata"]["name"] = web::json::value::string(ns);
  client.create(resources::namespaces(), "", obj);
}

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns the last result.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

// Threads of this process now (/proc/self/task entries).
inline std::size_t live_threads() {
  std::error_code ec;
  std::size_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

inline std::string data_value(const web::json::value& cm, const std::string& key) {
  if (!cm.has_object_field("data") || !cm.at("data").has_string_field(key)) return {};
  return cm.at("data").at(key).as_string();
}

}  // namespace ddp3d::kube::testing
