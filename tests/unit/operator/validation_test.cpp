#include "operator/api/validation.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"

namespace ddp3d::op::api {
namespace {

using testing::job_json;
using web::json::value;

struct InvalidCase {
  std::string name;
  std::string patch_path;  // dotted path under the job object to overwrite
  std::string patch_json;
  std::string want_path;
  std::string want_text;
};

void set_path(value& root, const std::string& path, const value& v) {
  value* cur = &root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (dot == std::string::npos) {
      (*cur)[key] = v;
      return;
    }
    if (!cur->has_field(key) || !cur->at(key).is_object()) (*cur)[key] = value::object();
    cur = &(*cur)[key];
    start = dot + 1;
  }
}

std::vector<FieldError> errors_for(const value& object) {
  auto parsed = parse_training_job(object);
  auto errors = parsed.errors;
  for (auto& e : validate(parsed.job)) errors.push_back(e);
  return errors;
}

TEST(Validation, ValidJobHasNoErrors) {
  EXPECT_TRUE(errors_for(job_json()).empty()) << join(errors_for(job_json()));
}

TEST(Validation, TableOfInvalidJobsNamesTheField) {
  const std::vector<InvalidCase> cases = {
      {"nnodes zero", "spec.nnodes", "0", "spec.nnodes", "between 1 and 1024, got 0"},
      {"nnodes huge", "spec.nnodes", "5000", "spec.nnodes", "got 5000"},
      {"negative gpus", "spec.gpusPerNode", "-1", "spec.gpusPerNode", "got -1"},
      {"port zero", "spec.port", "0", "spec.port", "between 1 and 65535"},
      {"port too big", "spec.port", "70000", "spec.port", "got 70000"},
      // job_json has 8 GPUs per node: local ranks serve metrics on 9400..9407.
      {"port on a metrics port", "spec.port", "9407", "spec.port",
       "9407 is taken by the workers' metrics ports 9400-9407 (spec.metricsPort, "
       "DDP3D_METRICS_PORT)"},
      // A moved metrics range is checked where it is: 29500 (the default port) falls in it.
      {"metrics range over the port", "spec.metricsPort", "29495", "spec.port",
       "29500 is taken by the workers' metrics ports 29495-29502"},
      {"metricsPort zero", "spec.metricsPort", "0", "spec.metricsPort",
       "between 1 and 65528 (one port per local rank), got 0"},
      {"metrics range past 65535", "spec.metricsPort", "65530", "spec.metricsPort", "got 65530"},
      {"missing config", "spec.config", "\"\"", "spec.config", "required"},
      {"unknown restartPolicy", "spec.runPolicy.restartPolicy", "\"Always\"",
       "spec.runPolicy.restartPolicy", "unsupported value \"Always\""},
      {"unknown cleanPodPolicy", "spec.runPolicy.cleanPodPolicy", "\"Some\"",
       "spec.runPolicy.cleanPodPolicy", "unsupported"},
      {"negative backoffLimit", "spec.runPolicy.backoffLimit", "-1", "spec.runPolicy.backoffLimit",
       ">= 0"},
      {"zero deadline", "spec.runPolicy.activeDeadlineSeconds", "0",
       "spec.runPolicy.activeDeadlineSeconds", "> 0"},
      {"zero startup deadline", "spec.runPolicy.startupDeadlineSeconds", "0",
       "spec.runPolicy.startupDeadlineSeconds", "between 1 and 31536000, got 0"},
      {"huge progress deadline", "spec.runPolicy.progressDeadlineSeconds", "9223372036854775807",
       "spec.runPolicy.progressDeadlineSeconds", "between 1 and 31536000"},
      {"negative node loss timeout", "spec.runPolicy.nodeLossTimeoutSeconds", "-1",
       "spec.runPolicy.nodeLossTimeoutSeconds", "between 0 and 31536000, got -1"},
      {"node loss timeout not an integer", "spec.runPolicy.nodeLossTimeoutSeconds", "\"30s\"",
       "spec.runPolicy.nodeLossTimeoutSeconds", "must be an integer"},
      {"negative ttl", "spec.runPolicy.ttlSecondsAfterFinished", "-5",
       "spec.runPolicy.ttlSecondsAfterFinished", ">= 0"},
      {"reserved env", "spec.env", R"([{"name": "A", "value": "1"}, {"name": "NODE_RANK"}])",
       "spec.env[1].name", "\"NODE_RANK\" is reserved"},
      {"env without name", "spec.env", R"([{"value": "1"}])", "spec.env[0].name", "required"},
      {"reserved env in template", "spec.template",
       R"({"spec": {"containers": [{"name": "w", "env": [{"name": "WORLD_SIZE", "value": "9"}]}]}})",
       "spec.template.spec.containers[0].env[0].name", "\"WORLD_SIZE\" is reserved"},
      {"reserved PET name", "spec.env", R"([{"name": "PET_MASTER_ADDR", "value": "x"}])",
       "spec.env[0].name", "reserved"},
      {"launcher variable", "spec.env", R"([{"name": "LOCAL_RANK", "value": "0"}])",
       "spec.env[0].name", "\"LOCAL_RANK\" is reserved"},
      {"reserved prefix", "spec.env", R"([{"name": "DDP3D_EXTRA", "value": "0"}])",
       "spec.env[0].name", "reserved"},
      {"no image anywhere", "spec.image", "\"\"", "spec.image", "required"},
      {"wrong type", "spec.nnodes", "\"2\"", "spec.nnodes", "must be an integer"},
  };
  for (const auto& c : cases) {
    value v = job_json();
    set_path(v, c.patch_path, value::parse(c.patch_json));
    const auto errors = errors_for(v);
    ASSERT_EQ(errors.size(), 1u) << c.name << ": " << join(errors);
    EXPECT_EQ(errors[0].path, c.want_path) << c.name;
    EXPECT_NE(errors[0].message.find(c.want_text), std::string::npos)
        << c.name << ": " << errors[0].message;
  }
}

TEST(Validation, ImageFromTemplateIsEnough) {
  value v = job_json();
  v["spec"]["image"] = value::string("");
  v["spec"]["template"] =
      value::parse(R"({"spec": {"containers": [{"name": "w", "image": "x"}]}})");
  EXPECT_TRUE(errors_for(v).empty()) << join(errors_for(v));
}

TEST(Validation, ReportsAllErrorsAtOnce) {
  value v = job_json();
  v["spec"]["nnodes"] = value::number(0);
  v["spec"]["port"] = value::number(0);
  v["spec"]["config"] = value::string("");
  EXPECT_EQ(errors_for(v).size(), 3u) << join(errors_for(v));
}

}  // namespace
}  // namespace ddp3d::op::api
