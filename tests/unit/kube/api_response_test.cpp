// koord::kube::decodeApiResponse: how an HTTP answer becomes a body or an ApiError that keeps
// the API server's Status, the reason client-go would give, and the Retry-After hint.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "koord/http/message.h"
#include "koord/kube/rest_client.h"

using koord::http::Response;
using koord::kube::decodeApiResponse;

namespace {

Response answer(int status, std::string body, koord::http::Headers headers = {}) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

}  // namespace

TEST_CASE("a 2xx answer is its JSON body; an empty body is null", "[kube]") {
  auto ok = decodeApiResponse("GET x", answer(200, R"({"kind":"Pod"})"));
  REQUIRE(ok.has_value());
  CHECK(ok->at("kind").as_string() == "Pod");
  auto empty = decodeApiResponse("DELETE x", answer(200, ""));
  REQUIRE(empty.has_value());
  CHECK(empty->is_null());
  auto garbage = decodeApiResponse("GET x", answer(200, "<html>"));
  REQUIRE_FALSE(garbage.has_value());
  CHECK(garbage.error().code == 0);
  CHECK_THAT(garbage.error().message, Catch::Contains("GET x"));
}

TEST_CASE("a Status answer keeps reason, message and details", "[kube]") {
  auto r = decodeApiResponse(
      "PUT cm", answer(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                            R"("message":"the object has been modified","reason":"Conflict",)"
                            R"("details":{"name":"a","kind":"configmaps"},"code":409})"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == 409);
  CHECK(r.error().reason == "Conflict");
  CHECK(r.error().message == "the object has been modified");
  CHECK(r.error().status.at("details").at("name").as_string() == "a");
  CHECK_FALSE(r.error().retry_after.has_value());
}

TEST_CASE("429: Retry-After comes from the header first, then from the Status", "[kube]") {
  const std::string status = R"({"kind":"Status","reason":"TooManyRequests","message":"slow down",)"
                             R"("details":{"retryAfterSeconds":3},"code":429})";
  auto from_status = decodeApiResponse("GET x", answer(429, status));
  REQUIRE_FALSE(from_status.has_value());
  REQUIRE(from_status.error().retry_after.has_value());
  CHECK(from_status.error().retry_after->count() == 3);

  auto from_header = decodeApiResponse("GET x", answer(429, status, {{"Retry-After", "7"}}));
  REQUIRE_FALSE(from_header.has_value());
  CHECK(from_header.error().retry_after->count() == 7);

  // An empty 429 from a proxy: the code's reason, and the header still counts.
  auto bare = decodeApiResponse("GET x", answer(429, "", {{"retry-after", "1"}}));
  REQUIRE_FALSE(bare.has_value());
  CHECK(bare.error().reason == "TooManyRequests");
  CHECK(isTooManyRequests(bare.error()));
  CHECK(bare.error().retry_after->count() == 1);

  // A malformed hint is ignored rather than guessed.
  for (const char* bad : {"soon", "-1", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT"}) {
    auto r = decodeApiResponse("GET x", answer(429, "", {{"Retry-After", bad}}));
    REQUIRE_FALSE(r.has_value());
    CHECK_FALSE(r.error().retry_after.has_value());
  }
}

TEST_CASE("non-Status error bodies get client-go's reason for the code", "[kube]") {
  struct Case {
    int code;
    const char* reason;
  };
  for (auto c : {Case{404, "NotFound"}, Case{410, "Gone"}, Case{422, "Invalid"},
                 Case{503, "ServiceUnavailable"}, Case{418, "Unknown"}}) {
    auto r = decodeApiResponse("GET x", answer(c.code, "upstream says no"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == c.code);
    CHECK(r.error().reason == c.reason);
    CHECK_THAT(r.error().message, Catch::Contains("upstream says no"));
    CHECK(r.error().status.is_null());
  }
}
