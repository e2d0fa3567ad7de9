#include "operator/kube/watch_event.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ddp3d::kube {
namespace {

TEST(ParseWatchEvent, ReadsEveryEventType) {
  const struct {
    const char* wire;
    EventType type;
  } cases[] = {{"ADDED", EventType::kAdded},
               {"MODIFIED", EventType::kModified},
               {"DELETED", EventType::kDeleted},
               {"BOOKMARK", EventType::kBookmark},
               {"ERROR", EventType::kError}};
  for (const auto& c : cases) {
    const std::string line =
        std::string(R"({"type":")") + c.wire +
        R"(","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"42"}}})";
    const WatchEvent ev = parse_watch_event(line);
    EXPECT_EQ(ev.type, c.type) << c.wire;
    EXPECT_EQ(to_string(ev.type), std::string(c.wire));
    EXPECT_EQ(ev.object.at("metadata").at("resourceVersion").as_string(), "42");
  }
}

void expect_parse_error(const std::string& line, const std::string& fragment) {
  try {
    parse_watch_event(line);
    FAIL() << "accepted: " << line;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ParseWatchEvent, RejectsMalformedLinesWithAReason) {
  expect_parse_error(R"({"type":"ADDED","object":{)", "not valid JSON");
  expect_parse_error(R"([1,2])", "not a JSON object");
  expect_parse_error(R"({"object":{}})", "'type'");
  expect_parse_error(R"({"type":"ADDED"})", "'object'");
  expect_parse_error(R"({"type":"RENAMED","object":{}})", "unknown type 'RENAMED'");
}

TEST(LineSplitter, ReassemblesLinesAcrossArbitraryChunkBoundaries) {
  const std::string stream =
      "{\"type\":\"ADDED\",\"object\":{\"n\":\"\xc3\xa9\"}}\n"
      "{\"type\":\"MODIFIED\",\"object\":{}}\r\n"
      "\n"
      "{\"type\":\"DELETED\",\"object\":{}}\n";
  for (std::size_t step = 1; step <= stream.size(); ++step) {
    LineSplitter s;
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < stream.size(); i += step)
      for (auto& l : s.feed(std::string_view(stream).substr(i, step))) lines.push_back(l);
    ASSERT_EQ(lines.size(), 3u) << "chunk size " << step;
    EXPECT_EQ(parse_watch_event(lines[0]).object.at("n").as_string(), "\xc3\xa9");
    EXPECT_EQ(parse_watch_event(lines[1]).type, EventType::kModified) << "\\r must be dropped";
    EXPECT_EQ(parse_watch_event(lines[2]).type, EventType::kDeleted);
    EXPECT_TRUE(s.pending().empty());
  }
}

TEST(LineSplitter, KeepsAnUnterminatedTailPending) {
  LineSplitter s;
  EXPECT_TRUE(s.feed("{\"a\":").empty());
  EXPECT_EQ(s.pending(), "{\"a\":");
  const auto lines = s.feed("1}\n{\"b\"");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"a\":1}");
  EXPECT_EQ(s.pending(), "{\"b\"");
}

TEST(LineSplitter, RefusesARunawayLine) {
  LineSplitter s(16);
  EXPECT_NO_THROW(s.feed("0123456789"));
  EXPECT_THROW(s.feed("0123456789"), std::runtime_error);
}

}  // namespace
}  // namespace ddp3d::kube
