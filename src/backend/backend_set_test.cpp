// The registry and the sets opened from it, over two fake backends registered here: the user's
// order, the fallback once and last (added when not asked for), aliases, and unknown names.
#include "backend/backend_set.h"

#include <gtest/gtest.h>

#include "backend/registry.h"
#include "common/error.h"

namespace hart {
namespace {

class Fake final : public Backend {
 public:
  explicit Fake(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  bool supports_op(const Tensor&) const override { return true; }
  void compute(const Graph&) override {}

 private:
  std::string name_;
};

std::function<std::unique_ptr<Backend>(const BackendOptions&)> opens(const char* name) {
  return [name](const BackendOptions&) { return std::make_unique<Fake>(name); };
}

const RegisterBackend kHost({"host", {}, "runs every op", true, opens("HOST")});
const RegisterBackend kAcc({"acc", {"acc0"}, "an accelerator", false, opens("ACC")});

std::vector<std::string> names(const BackendSet& set) {
  std::vector<std::string> out;
  for (const Backend* b : set.backends()) out.push_back(b->name());
  return out;
}

TEST(Registry, ListsTheFallbackLast) {
  const std::vector<const BackendInfo*> all = registered_backends();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name, "acc");
  EXPECT_EQ(all[1]->name, "host");
}

TEST(Registry, SplitsNameLists) {
  EXPECT_EQ(split_backend_names({"ACC,host", "", "acc0,,"}), (std::vector<std::string>{"acc", "host", "acc0"}));
}

TEST(BackendSet, KeepsTheUsersOrderWithTheFallbackLast) {
  EXPECT_EQ(names(BackendSet({"host", "acc"}, 1, "")), (std::vector<std::string>{"ACC", "HOST"}));
  EXPECT_EQ(names(BackendSet({"acc0"}, 1, "")), (std::vector<std::string>{"ACC", "HOST"}));
  EXPECT_EQ(names(BackendSet({"host", "host"}, 1, "")), (std::vector<std::string>{"HOST"}));
  EXPECT_EQ(names(BackendSet({}, 1, "")), (std::vector<std::string>{"HOST"}));
  const BackendSet set({"acc"}, 1, "");
  EXPECT_EQ(set.find("HOST"), set.backends().back());
  EXPECT_EQ(set.find("CPU"), nullptr);
  EXPECT_EQ(set.perf_log(), nullptr);
}

TEST(BackendSet, NamesTheKnownBackendsForAnUnknownOne) {
  try {
    BackendSet({"acc", "gpu"}, 1, "");
    ADD_FAILURE() << "opened an unknown backend";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "unknown device 'gpu' (known: acc, host)");
  }
}

}  // namespace
}  // namespace hart
