#include "operator/probe/http_response.h"

#include <gtest/gtest.h>

#include <string>

namespace ddp3d::op::probe {
namespace {

constexpr std::size_t kMax = 1024;

TEST(HttpResponse, PlainBodyWithAndWithoutContentLength) {
  EXPECT_EQ(parse_http_response("HTTP/1.0 200 OK\r\n\r\nabc", kMax).body, "abc");
  const auto r = parse_http_response(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 3\r\n\r\nabcdef", kMax);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.body, "abc");
}

TEST(HttpResponse, ChunkedBodyIsDecoded) {
  const auto r = parse_http_response(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n"
      "0\r\nTrailer: x\r\n\r\n",
      kMax);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.body, "abc0123456789");
}

TEST(HttpResponse, HostileAnswersAreErrorsThatSayWhich) {
  const std::string big(kMax + 1, 'x');
  const struct {
    std::string raw;
    std::string error;
  } cases[] = {
      {"", "empty response"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n", "no end of the response headers"},
      {"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x response"},
      {"HTTP/1.1 2x0 OK\r\n\r\n", "malformed status line"},
      {"HTTP/1.1 404 Not Found\r\n\r\nnope", "HTTP 404"},
      {"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
       "malformed Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "body shorter than its Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n", "body over 1024 bytes"},
      {"HTTP/1.0 200 OK\r\n\r\n" + big, "body over 1024 bytes"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported Transfer-Encoding gzip"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n",
       "body over 1024 bytes"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "truncated chunked body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX0\r\n\r\n",
       "malformed chunk end"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
       "truncated chunked body"},
  };
  for (const auto& c : cases) {
    const auto r = parse_http_response(c.raw, kMax);
    EXPECT_EQ(r.error, c.error) << c.raw.substr(0, 80);
    EXPECT_EQ(r.body, "") << c.raw.substr(0, 80);
  }
}

}  // namespace
}  // namespace ddp3d::op::probe
