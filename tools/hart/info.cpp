// hart info MODEL: a GGUF file's header, metadata and tensor table, as text or one JSON object.
// The file is mapped, not read, so inspecting a large model is instant.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "builtin_model.h"
#include "command.h"
#include "model_options.h"
#include "parse_args.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "vision/clip_model.h"

namespace hart::cli {
namespace {

// A model file, or a multimodal projector (general.architecture clip) checked as hart loads it.
FileCheck check_file(const gguf::File& f) {
  return f.get_string("general.architecture") == "clip" ? vision::check_clip_file(f) : check_model_file(f);
}


using gguf::Array;
using gguf::Value;
using gguf::ValueType;
using Json = nlohmann::ordered_json;  // keeps keys in the order written

struct InfoOptions {
  std::string model;
  bool json = false;
  bool no_tensors = false;
  size_t items = 6;        // array items shown
  size_t max_string = 60;  // bytes of a string shown in text mode
};

// The shortest decimal that reads back as the same float / double.
template <class F>
std::string shortest(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// A string as a quoted, escaped literal; beyond `max` bytes it is cut (at a UTF-8 character
// boundary) and its full length is shown.
std::string quoted(std::string_view s, size_t max) {
  size_t n = std::min(s.size(), max);
  while (n < s.size() && n > 0 && (uint8_t(s[n]) & 0xc0) == 0x80) n--;
  std::string out = "\"";
  for (char c : s.substr(0, n)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (uint8_t(c) < 0x20 || c == 0x7f) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\x%02x", unsigned(uint8_t(c)));
          out += esc;
        } else {
          out += c;
        }
    }
  }
  out += n < s.size() ? "\"... (" + std::to_string(s.size()) + " bytes)" : "\"";
  return out;
}

std::string array_summary(const Array& a) {
  return "[" + std::string(gguf::value_type_name(a.elem_type)) + " × " + std::to_string(a.items.size()) + "]";
}

std::string format_value(const Value& v, const InfoOptions& o) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_floating_point_v<T>) {
          return shortest(x);
        } else if constexpr (std::is_arithmetic_v<T>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quoted(x, o.max_string);
        } else {
          std::string out = array_summary(*x) + " [";
          const size_t shown = std::min(o.items, x->items.size());
          for (size_t i = 0; i < shown; i++) out += (i ? ", " : "") + format_value(x->items[i], o);
          return out + (shown < x->items.size() ? ", ...]" : "]");
        }
      },
      v);
}

// Arrays become {"elem_type", "count", "items": first few}; strings are kept whole.
Json to_json(const Value& v, const InfoOptions& o) {
  return std::visit(
      [&](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<Array>>) {
          Json items = Json::array();
          for (size_t i = 0; i < std::min(o.items, x->items.size()); i++) items.push_back(to_json(x->items[i], o));
          return {{"elem_type", gguf::value_type_name(x->elem_type)}, {"count", x->items.size()}, {"items", items}};
        } else if constexpr (std::is_same_v<T, float>) {
          return std::strtod(shortest(x).c_str(), nullptr);  // 1e-06, not 9.99999997e-07
        } else {
          return x;
        }
      },
      v);
}

std::string shape_text(const gguf::TensorInfo& t) {
  std::string s;
  for (uint32_t d = 0; d < t.n_dims; d++) s += (d ? " × " : "") + std::to_string(t.ne[d]);
  return s.empty() ? "scalar" : s;
}

// Pads to `width` terminal columns (counting UTF-8 characters, not bytes: shapes contain "×").
std::string padded(std::string s, size_t width) {
  size_t columns = 0;
  for (char c : s) columns += (uint8_t(c) & 0xc0) != 0x80;
  if (columns < width) s.append(width - columns, ' ');
  return s;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, u++;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}

struct Totals {
  int64_t parameters = 0;
  size_t bytes = 0;
  std::map<Type, std::pair<int, size_t>> by_type;  // tensors, bytes
};

Totals totals_of(const gguf::File& f) {
  Totals t;
  for (const auto& ti : f.tensors()) {
    t.parameters += ti.nelements();
    t.bytes += ti.nbytes;
    auto& [count, bytes] = t.by_type[ti.type];
    count++;
    bytes += ti.nbytes;
  }
  return t;
}

Json info_json(const gguf::File& f, const InfoOptions& o) {
  Json j = {{"path", f.path()},           {"version", f.version()},
                      {"alignment", f.alignment()}, {"file_size", f.file_size()},
                      {"data_offset", f.data_offset()}};
  Json meta = Json::array();
  for (const auto& kv : f.metadata())
    meta.push_back({{"key", kv.key}, {"type", gguf::value_type_name(gguf::value_type(kv.value))},
                    {"value", to_json(kv.value, o)}});
  j["metadata"] = meta;
  if (!o.no_tensors) {
    Json tensors = Json::array();
    for (const auto& t : f.tensors())
      tensors.push_back({{"name", t.name}, {"type", type_name(t.type)},
                         {"shape", std::vector<int64_t>(t.ne, t.ne + t.n_dims)},
                         {"bytes", t.nbytes}, {"offset", t.offset}});
    j["tensors"] = tensors;
  }
  const Totals tot = totals_of(f);
  Json types = Json::object();
  for (const auto& [type, cb] : tot.by_type)
    types[std::string(type_name(type))] = {{"tensors", cb.first}, {"bytes", cb.second}};
  j["totals"] = {{"tensors", f.tensors().size()}, {"parameters", tot.parameters}, {"bytes", tot.bytes},
                 {"types", types}};
  if (!f.tensors().empty()) {
    const FileCheck c = check_file(f);
    j["check"] = {{"architecture", c.arch}, {"loadable", c.error.empty() && c.tensors.problems.empty()},
                  {"error", c.error}, {"tensors_used", c.tensors.used}, {"tensors_ignored", c.tensors.ignored},
                  {"problems", c.tensors.problems}};
  }
  return j;
}

void print_text(const gguf::File& f, const InfoOptions& o) {
  std::printf("file:       %s\n", f.path().c_str());
  std::printf("version:    %u\n", f.version());
  std::printf("alignment:  %u\n", f.alignment());
  std::printf("size:       %zu bytes (%s)", f.file_size(), human_bytes(double(f.file_size())).c_str());
  if (f.tensors().empty()) {
    std::printf(", no tensor data\n");
  } else {
    std::printf(", data section at %zu\n", f.data_offset());
  }

  std::printf("\nmetadata (%zu keys):\n", f.metadata().size());
  size_t key_width = 0;
  for (const auto& kv : f.metadata()) key_width = std::max(key_width, kv.key.size());
  for (const auto& kv : f.metadata())
    std::printf("  %-*s  %-6s  %s\n", int(key_width), kv.key.c_str(),
                std::string(gguf::value_type_name(gguf::value_type(kv.value))).c_str(),
                format_value(kv.value, o).c_str());

  if (!o.no_tensors && !f.tensors().empty()) {
    std::printf("\ntensors (%zu):\n", f.tensors().size());
    size_t name_width = 4;
    for (const auto& t : f.tensors()) name_width = std::max(name_width, t.name.size());
    std::printf("  %-*s  %-7s  %-22s  %12s  %12s\n", int(name_width), "name", "type", "shape", "bytes", "offset");
    for (const auto& t : f.tensors())
      std::printf("  %-*s  %-7s  %s  %12zu  %12llu\n", int(name_width), t.name.c_str(),
                  std::string(type_name(t.type)).c_str(), padded(shape_text(t), 22).c_str(), t.nbytes,
                  (unsigned long long)t.offset);
  }

  const Totals tot = totals_of(f);
  std::printf("\ntotals:     %zu tensors, %lld parameters, %zu bytes (%s)\n", f.tensors().size(),
              (long long)tot.parameters, tot.bytes, human_bytes(double(tot.bytes)).c_str());
  for (const auto& [type, cb] : tot.by_type)
    std::printf("  %-7s  %4d tensors  %12zu bytes\n", std::string(type_name(type)).c_str(), cb.first, cb.second);
  if (f.tensors().empty()) return;
  // What hart's loader makes of it: every tensor must be one the architecture uses, or one
  // llama.cpp loads and ignores.
  const FileCheck c = check_file(f);
  if (!c.error.empty()) {
    std::printf("\ncheck:      not loadable: %s\n", c.error.c_str());
    return;
  }
  std::printf("\ncheck:      %s: %d tensors used, %d accepted and ignored (as llama.cpp does)%s\n", c.arch.c_str(),
              c.tensors.used, c.tensors.ignored, c.tensors.problems.empty() ? "" : "; not loadable:");
  for (const std::string& p : c.tensors.problems) std::printf("  %s\n", p.c_str());
}

int cmd_info(int argc, char** argv) {
  InfoOptions o;
  CLI::App app{"Show a GGUF file's version, metadata and tensor table.", "hart info"};
  app.add_option("model", o.model, std::string("GGUF file (default: the built-in ") + kBuiltinModelName + ")");
  app.add_flag("--json", o.json, "print one JSON object instead of text (strings are not truncated)");
  app.add_flag("--no-tensors", o.no_tensors, "leave out the tensor table");
  app.add_option("--items", o.items, "array items to show")->capture_default_str();
  app.add_option("--max-string", o.max_string, "bytes of a string to show in text mode")->capture_default_str();
  if (!parse_args(app, argc, argv)) return 0;

  const auto file = open_gguf(o.model, gguf::LoadMode::Mmap);
  if (o.json) {
    // Token pieces may hold invalid UTF-8 (byte tokens): replace it rather than fail.
    std::printf("%s\n", info_json(*file, o).dump(2, ' ', false, Json::error_handler_t::replace).c_str());
  } else {
    print_text(*file, o);
  }
  return 0;
}

}  // namespace

HART_COMMAND(info, "show a GGUF file's metadata and tensors", cmd_info);

}  // namespace hart::cli
