// Request-head parsing and response serialization, without sockets.
#include <gtest/gtest.h>

#include "common/http/request.h"

namespace ddp3d::http {
namespace {

TEST(ParseRequestHead, WellFormedGet) {
  const auto r = parse_request_head(
      "GET /metrics?name[]=x HTTP/1.1\r\nHost: pod:9100\r\nAccept:  text/plain \r\n"
      "X-Multi: a\r\nx-multi: b\r\n\r\n");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->method, "GET");
  EXPECT_EQ(r.request->target, "/metrics?name[]=x");
  EXPECT_EQ(r.request->path, "/metrics");
  EXPECT_EQ(r.request->query, "name[]=x");
  EXPECT_EQ(r.request->version, "HTTP/1.1");
  EXPECT_EQ(r.request->headers.at("host"), "pod:9100");
  EXPECT_EQ(r.request->headers.at("accept"), "text/plain");
  EXPECT_EQ(r.request->headers.at("x-multi"), "a, b");
}

TEST(ParseRequestHead, BareLineFeedsAndHttp10WithoutHost) {
  const auto r = parse_request_head("GET /healthz HTTP/1.0\n\n");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->path, "/healthz");
  EXPECT_TRUE(r.request->query.empty());
}

struct Bad {
  const char* name;  // names the ctest entry
  const char* head;
  int status;
};

void PrintTo(const Bad& bad, std::ostream* os) {
  *os << bad.name;
}

class ParseRequestHeadBad : public ::testing::TestWithParam<Bad> {};

TEST_P(ParseRequestHeadBad, Rejected) {
  const auto r = parse_request_head(GetParam().head);
  EXPECT_FALSE(r.request);
  EXPECT_EQ(r.error_status, GetParam().status);
  EXPECT_FALSE(r.error.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParseRequestHeadBad,
    ::testing::Values(Bad{"empty", "\r\n\r\n", 400}, Bad{"method_only", "GET\r\n\r\n", 400},
                      Bad{"no_version", "GET /x\r\n\r\n", 400},
                      Bad{"double_space", "GET  /x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
                      Bad{"extra_part", "GET /x HTTP/1.1 extra\r\nHost: h\r\n\r\n", 400},
                      Bad{"bad_method", "G(T /x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
                      Bad{"relative_target", "GET x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
                      Bad{"absolute_uri", "GET http://h/x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
                      Bad{"not_http", "GET /x FTP/1.1\r\nHost: h\r\n\r\n", 400},
                      Bad{"http2", "GET /x HTTP/2.0\r\nHost: h\r\n\r\n", 505},
                      Bad{"no_host", "GET /x HTTP/1.1\r\n\r\n", 400},
                      Bad{"two_hosts", "GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
                      Bad{"no_colon", "GET /x HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400},
                      Bad{"space_in_name", "GET /x HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n",
                          400},
                      Bad{"folding", "GET /x HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400}));

TEST(SerializeResponse, HeadersAndBody) {
  const Response r{404, "text/plain", "nope"};
  EXPECT_EQ(serialize_response(r, false, {{"Allow", "GET"}}),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: close\r\nAllow: GET\r\n\r\nnope");
  EXPECT_EQ(serialize_response(r, true),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: close\r\n\r\n");
}

}  // namespace
}  // namespace ddp3d::http
