// Mapping of API server answers to typed errors.
#include "operator/kube/errors.h"

#include <gtest/gtest.h>

namespace ddp3d::kube {
namespace {

const char* kConflictBody = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
  "message":"Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your changes to the latest version and try again",
  "reason":"Conflict","details":{"name":"c","kind":"configmaps"},"code":409})";

TEST(ParseApiStatus, ReadsReasonMessageAndCodeFromAStatusObject) {
  const ApiStatus s = parse_api_status(409, kConflictBody);
  EXPECT_EQ(s.http_status, 409);
  EXPECT_EQ(s.code, 409);
  EXPECT_EQ(s.reason, "Conflict");
  EXPECT_NE(s.message.find("the object has been modified"), std::string::npos);
}

TEST(ParseApiStatus, FallsBackToTheHttpStatusForNonStatusBodies) {
  const ApiStatus s = parse_api_status(503, "<html>upstream unavailable</html>");
  EXPECT_EQ(s.reason, "ServiceUnavailable");
  EXPECT_EQ(s.message, "<html>upstream unavailable</html>");
  EXPECT_EQ(parse_api_status(404, "").reason, "NotFound");
  EXPECT_EQ(parse_api_status(418, "{}").reason, "Unknown");
  EXPECT_LE(parse_api_status(500, std::string(5000, 'x')).message.size(), 520u);
}

template <typename E>
void expect_thrown_as(int http, const std::string& body) {
  try {
    throw_api_error(parse_api_status(http, body), "PUT", "/api/v1/namespaces/d/configmaps/c");
    FAIL() << "nothing thrown";
  } catch (const E& e) {
    EXPECT_EQ(e.http_status(), http);
  } catch (const std::exception& e) {
    FAIL() << "wrong type for " << http << ": " << e.what();
  }
}

TEST(ThrowApiError, PicksTheSubclassControllersBranchOn) {
  expect_thrown_as<ConflictError>(409, kConflictBody);
  expect_thrown_as<AlreadyExistsError>(
      409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists","code":409})");
  expect_thrown_as<NotFoundError>(404, R"({"kind":"Status","reason":"NotFound","code":404})");
  expect_thrown_as<GoneError>(
      410,
      R"({"kind":"Status","reason":"Expired","message":"too old resource version","code":410})");
  expect_thrown_as<ApiError>(422, R"({"kind":"Status","reason":"Invalid","code":422})");
}

TEST(ThrowApiError, AlreadyExistsIsNotAConflict) {
  try {
    throw_api_error(
        parse_api_status(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})"), "POST",
        "/x");
  } catch (const ConflictError&) {
    FAIL() << "AlreadyExists must not be caught as ConflictError";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.is_already_exists());
    EXPECT_FALSE(e.is_conflict());
  }
}

TEST(ApiError, WhatNamesVerbPathStatusReasonAndMessage) {
  const ApiError e(parse_api_status(409, kConflictBody), "PUT",
                   "/api/v1/namespaces/d/configmaps/c");
  const std::string what = e.what();
  EXPECT_EQ(what.rfind("PUT /api/v1/namespaces/d/configmaps/c: 409 Conflict: Operation cannot", 0),
            0u)
      << what;
  EXPECT_EQ(e.verb(), "PUT");
  EXPECT_EQ(e.reason(), "Conflict");
}

}  // namespace
}  // namespace ddp3d::kube
