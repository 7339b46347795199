#include <memory>

#include <catch2/catch.hpp>

#include "framework/cycle_state.h"

using namespace koord::roles::scheduler;

namespace {

struct Counter : StateData {
  explicit Counter(int v) : value(v) {}
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Counter>(value); }
  int value;
};

struct Other : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Other>(); }
};

}  // namespace

TEST_CASE("CycleState reads back what was written, by key and type") {
  CycleState state;
  CHECK(state.read<Counter>("fit") == nullptr);
  state.write("fit", std::make_unique<Counter>(1));
  state.write("spread", std::make_unique<Other>());
  REQUIRE(state.read<Counter>("fit") != nullptr);
  CHECK(state.read<Counter>("fit")->value == 1);
  CHECK(state.read<Other>("fit") == nullptr);  // another type
  CHECK(state.read<Other>("spread") != nullptr);
  CHECK(state.read<Counter>("missing") == nullptr);

  state.write("fit", std::make_unique<Counter>(2));  // replaces
  CHECK(state.read<Counter>("fit")->value == 2);
  state.readMutable<Counter>("fit")->value = 3;
  CHECK(state.read<Counter>("fit")->value == 3);

  state.erase("fit");
  CHECK(state.read<Counter>("fit") == nullptr);
  CHECK(state.read<Other>("spread") != nullptr);
}

TEST_CASE("CycleState::clone copies deeply") {
  CycleState state;
  state.write("fit", std::make_unique<Counter>(7));
  state.write("empty", nullptr);
  state.skip_filter_plugins_for_nominated = true;
  state.skip_filter_plugins = 0b101;
  state.skip_score_plugins = 0b10;

  CycleState copy = state.clone();
  CHECK(copy.skip_filter_plugins_for_nominated);
  CHECK(copy.skip_filter_plugins == 0b101);  // the skip sets travel with the clone
  CHECK(copy.skip_score_plugins == 0b10);
  REQUIRE(copy.read<Counter>("fit") != nullptr);
  CHECK(copy.read<Counter>("fit") != state.read<Counter>("fit"));
  copy.readMutable<Counter>("fit")->value = 8;
  CHECK(state.read<Counter>("fit")->value == 7);
  CHECK(copy.read<Counter>("empty") == nullptr);

  copy.erase("fit");
  CHECK(state.read<Counter>("fit") != nullptr);
}

TEST_CASE("CycleState: an interned StateKey and its name reach the same entry") {
  static const StateKey kFit("StateKeyTestFit");
  static const StateKey kSpread("StateKeyTestSpread");
  CHECK(kFit.name() == "StateKeyTestFit");
  CHECK(kFit.id() != kSpread.id());
  CHECK(StateKey("StateKeyTestFit").id() == kFit.id());  // equal names, one key

  CycleState state;
  CHECK(state.read<Counter>(kFit) == nullptr);
  state.write(kFit, std::make_unique<Counter>(1));
  REQUIRE(state.read<Counter>("StateKeyTestFit") != nullptr);  // written by key, read by name
  CHECK(state.read<Counter>("StateKeyTestFit")->value == 1);
  CHECK(state.read<Other>(kFit) == nullptr);  // another type

  state.write("StateKeyTestSpread", std::make_unique<Counter>(2));  // by name, read by key
  REQUIRE(state.read<Counter>(kSpread) != nullptr);
  CHECK(state.read<Counter>(kSpread)->value == 2);
  state.readMutable<Counter>(kSpread)->value = 3;
  CHECK(state.read<Counter>("StateKeyTestSpread")->value == 3);

  state.write("StateKeyTestFit", std::make_unique<Counter>(4));  // replaces the keyed entry
  CHECK(state.read<Counter>(kFit)->value == 4);

  const CycleState copy = state.clone();
  REQUIRE(copy.read<Counter>(kFit) != nullptr);
  CHECK(copy.read<Counter>(kFit) != state.read<Counter>(kFit));
  CHECK(copy.read<Counter>(kFit)->value == 4);

  state.erase(kFit);
  CHECK(state.read<Counter>(kFit) == nullptr);
  CHECK(state.read<Counter>("StateKeyTestFit") == nullptr);
  CHECK(state.read<Counter>(kSpread) != nullptr);
  CHECK(copy.read<Counter>(kFit) != nullptr);
}
