#include "operator/api/names.h"

#include <gtest/gtest.h>

#include "operator/api/timestamps.h"

namespace ddp3d::op::api {
namespace {

TEST(Names, Fnv1aMatchesReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(short_hash("a"), "af63dc4c");
}

TEST(Names, ShortNamesStayReadable) {
  EXPECT_EQ(pod_name("pp-car", 0), "pp-car-node-0");
  EXPECT_EQ(pod_name("pp-car", 63), "pp-car-node-63");
  EXPECT_EQ(service_name("pp-car"), "pp-car");
  EXPECT_EQ(job_label_value("pp-car"), "pp-car");
}

TEST(Names, LongNamesAreHashTruncatedToValidLabels) {
  const std::string job(120, 'x');
  for (int rank : {0, 7, 4095}) {
    const std::string p = pod_name(job, rank);
    EXPECT_LE(p.size(), 63u) << p;
    EXPECT_TRUE(is_dns1123_label(p)) << p;
    EXPECT_EQ(p.substr(p.size() - std::string("-node-" + std::to_string(rank)).size()),
              "-node-" + std::to_string(rank));
    EXPECT_NE(p.find(short_hash(job)), std::string::npos) << p;
  }
  EXPECT_TRUE(is_dns1035_label(service_name(job)));
  EXPECT_TRUE(is_label_value(job_label_value(job)));
  EXPECT_LE(job_label_value(job).size(), 63u);
}

TEST(Names, StableAndDistinctForSharedPrefixes) {
  const std::string a = std::string(80, 'a') + "-one";
  const std::string b = std::string(80, 'a') + "-two";
  EXPECT_EQ(pod_name(a, 1), pod_name(a, 1));
  EXPECT_NE(pod_name(a, 1), pod_name(b, 1));
  EXPECT_NE(service_name(a), service_name(b));
  EXPECT_NE(job_label_value(a), job_label_value(b));
  EXPECT_NE(pod_name(a, 1), pod_name(a, 2));
}

TEST(Names, ExactlyAtTheLimit) {
  // "-node-0" is 7 characters: a 56-character job fits exactly, 57 must be shortened.
  const std::string fits(56, 'j');
  EXPECT_EQ(pod_name(fits, 0), fits + "-node-0");
  const std::string over(57, 'j');
  EXPECT_EQ(pod_name(over, 0).size(), 63u);
  EXPECT_NE(pod_name(over, 0), over + "-node-0");
}

TEST(Names, SubdomainCharactersAreMapped) {
  // Job names are DNS-1123 subdomains; dots are not allowed in labels or hostnames.
  const std::string p = pod_name("team.pp.car", 2);
  EXPECT_TRUE(is_dns1123_label(p)) << p;
  EXPECT_EQ(p.rfind("team-pp-car-", 0), 0u) << p;
  EXPECT_TRUE(is_dns1035_label(service_name("team.pp")));
  EXPECT_EQ(job_label_value("team.pp"), "team.pp");  // dots are fine in label values
}

TEST(Names, ServiceNameStartsWithALetter) {
  const std::string s = service_name("9lives");
  EXPECT_TRUE(is_dns1035_label(s)) << s;
  EXPECT_EQ(pod_name("9lives", 0), "9lives-node-0");  // pods may start with a digit
}

TEST(Names, Validators) {
  EXPECT_TRUE(is_dns1123_label("a-b-1"));
  EXPECT_FALSE(is_dns1123_label("-a"));
  EXPECT_FALSE(is_dns1123_label("a-"));
  EXPECT_FALSE(is_dns1123_label("A"));
  EXPECT_FALSE(is_dns1123_label(std::string(64, 'a')));
  EXPECT_FALSE(is_dns1035_label("1a"));
  EXPECT_TRUE(is_label_value("A_b.c-1"));
  EXPECT_FALSE(is_label_value("_a"));
}

TEST(Timestamps, RoundTripAndOffsets) {
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339(1796033609), "2026-11-30T10:13:29Z");
  EXPECT_EQ(parse_rfc3339("2026-11-30T10:13:29Z"), 1796033609);
  EXPECT_EQ(parse_rfc3339("2026-11-30T10:13:29.123456Z"), 1796033609);
  EXPECT_EQ(parse_rfc3339("2026-11-30T12:13:29+02:00"), 1796033609);
  EXPECT_FALSE(parse_rfc3339("2026-11-30 10:13:29"));
  EXPECT_FALSE(parse_rfc3339("2026-11-30T10:13:29"));
}

}  // namespace
}  // namespace ddp3d::op::api
