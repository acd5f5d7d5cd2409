#include "backend/registry.h"

#include <algorithm>
#include <cctype>
#include <deque>

#include "common/error.h"

namespace hart {
namespace {

// A function-local static: registrations run during static initialization, in any order. A
// deque, since registered_backends() hands out addresses.
std::deque<BackendInfo>& registry() {
  static std::deque<BackendInfo> backends;
  return backends;
}

bool answers_to(const BackendInfo& b, const std::string& name) {
  return b.name == name || std::find(b.aliases.begin(), b.aliases.end(), name) != b.aliases.end();
}

}  // namespace

RegisterBackend::RegisterBackend(BackendInfo info) { registry().push_back(std::move(info)); }

std::vector<const BackendInfo*> registered_backends() {
  std::vector<const BackendInfo*> out;
  for (const BackendInfo& b : registry()) out.push_back(&b);
  std::sort(out.begin(), out.end(), [](const BackendInfo* a, const BackendInfo* b) {
    return a->runs_every_op != b->runs_every_op ? b->runs_every_op : a->name < b->name;
  });
  return out;
}

const BackendInfo& find_backend(const std::string& name) {
  for (const BackendInfo& b : registry())
    if (answers_to(b, name)) return b;
  std::string known;
  for (const BackendInfo* b : registered_backends()) {
    if (!known.empty()) known += ", ";
    known += b->name;
  }
  throw Error("unknown device '" + name + "' (known: " + known + ")");
}

std::vector<std::string> split_backend_names(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& a : args) {
    size_t start = 0;
    while (start <= a.size()) {
      const size_t comma = std::min(a.find(',', start), a.size());
      std::string name = a.substr(start, comma - start);
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (!name.empty()) names.push_back(name);
      start = comma + 1;
    }
  }
  return names;
}

}  // namespace hart
