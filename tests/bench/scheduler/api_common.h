// What the scheduler API driver's parts share: messages, bounded request windows and polling.
#pragma once

#include <functional>
#include <string>

namespace koord::bench::scheduler_api {

[[noreturn]] void die(const std::string& msg);
void say(const std::string& msg);

/// Issues n requests with at most `window` in flight, from the calling thread; `issue(i, done)`
/// starts request i and must call done(error message or "") exactly once. Returns the failures.
int runWindowed(int n, int window,
                const std::function<void(int, std::function<void(std::string)>)>& issue,
                std::string* first_error);

/// Polls `done` until it holds or `seconds` pass.
bool pollUntil(double seconds, const std::function<bool()>& done);

}  // namespace koord::bench::scheduler_api
