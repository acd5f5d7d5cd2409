// Converting a model file tensor by tensor (the plan comes from quantize_plan.cpp).
#include "quant/quantize_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "quant/quant.h"

namespace hart {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION
constexpr int64_t kChunkElements = 32 * 512;  // rows are handed out in chunks of about this size

// The importance values of tensor t (ne[0] per stacked matrix), nullptr when there are none, as
// llama-quantize takes them: a size that does not match is an error except for token_embd.
const float* importance_of(const ImportanceMatrix* imatrix, const gguf::TensorInfo& t) {
  const std::vector<float>* v = imatrix ? imatrix->find(t.name) : nullptr;
  if (!v) return nullptr;
  const int64_t want = t.ne[0] * t.ne[2] * t.ne[3];
  if (int64_t(v->size()) == want) return v->data();
  if (t.name == "token_embd.weight") return nullptr;
  throw Error("importance matrix: " + std::to_string(v->size()) + " values for tensor " + t.name + ", which needs " +
              std::to_string(want));
}

// Rows of t -> `to` into out, on `threads` threads that take chunks of rows in turn, each row
// weighted by its matrix's importance values (if any). `on_rows` runs on the calling thread with
// the number of rows done so far.
void convert_rows(const gguf::TensorInfo& t, Type to, const float* importance, uint8_t* out, int threads,
                  const std::function<void(int64_t)>& on_rows) {
  const int64_t ncols = t.ne[0], nrows = t.nelements() / ncols;
  const size_t in_row = row_size(t.type, ncols), out_row = row_size(to, ncols);
  const int64_t chunk = std::max<int64_t>(1, kChunkElements / ncols);
  std::atomic<int64_t> next{0}, done{0};
  std::exception_ptr error;
  std::mutex error_mutex;

  auto work = [&](bool report) {
    try {
      std::vector<float> row(static_cast<size_t>(ncols));
      for (int64_t r0; (r0 = next.fetch_add(chunk)) < nrows;) {
        const int64_t r1 = std::min(nrows, r0 + chunk);
        for (int64_t r = r0; r < r1; r++) {
          dequantize_row(t.type, t.data + size_t(r) * in_row, row.data(), ncols);
          const float* w = importance ? importance + (r / t.ne[1]) * ncols : nullptr;
          quantize_row(to, row.data(), out + size_t(r) * out_row, ncols, w);
        }
        const int64_t d = done += r1 - r0;
        if (report && d < nrows) on_rows(d);  // the last report comes after the join
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next = nrows;  // stop the others early
    }
  };
  const int64_t n_chunks = (nrows + chunk - 1) / chunk;
  std::vector<std::jthread> helpers;
  for (int i = 1; i < std::min<int64_t>(threads, n_chunks); i++) helpers.emplace_back(work, false);
  work(true);
  helpers.clear();  // joins
  if (error) std::rethrow_exception(error);
  on_rows(nrows);
}

struct WriteProgress {
  const QuantizeCallback* callback;
};

void on_write(size_t done, size_t total, void* user) {
  const auto* wp = static_cast<const WriteProgress*>(user);
  QuantizeProgress p;
  p.stage = QuantizeProgress::Stage::Write;
  p.done = done;
  p.total = total;
  (*wp->callback)(p);
}

}  // namespace

QuantizeSummary quantize_model(const std::string& in_path, const std::string& out_path,
                               const QuantizeTarget& target, const QuantizeOptions& options, int threads,
                               const QuantizeCallback& progress, const ImportanceMatrix* imatrix) {
  const auto in = gguf::File::open(in_path, gguf::LoadMode::Mmap);
  const auto plan = plan_quantization(*in, target, options, imatrix != nullptr);
  const auto& tensors = in->tensors();
  // Refuse before converting anything (llama-quantize stops at the first such tensor).
  for (size_t i = 0; i < tensors.size(); i++) {
    if (tensors[i].type == plan[i].type) continue;
    const std::string type(type_name(plan[i].type));
    if (type_info(tensors[i].type).quantized && !options.allow_requantize)
      throw Error("tensor " + tensors[i].name + " is already quantized (" + std::string(type_name(tensors[i].type)) +
                  "): requantizing it to " + type + " needs --allow-requantize (quality is lower than from F32 / F16)");
    if (!plan[i].needs_imatrix) continue;
    if (!imatrix)
      throw Error(type + " needs an importance matrix (tensor " + tensors[i].name +
                  "): pass --imatrix FILE, as llama-imatrix writes it");
    if (!importance_of(imatrix, tensors[i]))
      throw Error("the importance matrix has no values for tensor " + tensors[i].name + ", which " + type +
                  " needs");
  }
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));

  gguf::Writer w;
  if (in->alignment() != gguf::kDefaultAlignment) w.set_alignment(in->alignment());
  for (const auto& kv : in->metadata())
    if (kv.key != "general.alignment") w.set(kv.key, kv.value);
  w.set("general.quantization_version", uint32_t(kQuantizationVersion));
  w.set("general.file_type", output_file_type(*in, target));

  QuantizeSummary s;
  s.file_bytes_in = in->file_size();
  s.n_tensors = tensors.size();
  std::vector<std::vector<uint8_t>> converted;  // must outlive w.write()
  converted.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); i++) {
    const gguf::TensorInfo& t = tensors[i];
    const Type to = plan[i].type;
    const int64_t nrows = t.nelements() / t.ne[0];
    QuantizeProgress p{.stage = QuantizeProgress::Stage::Convert, .tensor = i,
                       .n_tensors = tensors.size(), .name = t.name, .from = t.type, .to = to,
                       .done = 0, .total = uint64_t(nrows)};
    auto report = [&](int64_t rows) {
      p.done = uint64_t(rows);
      if (progress) progress(p);
    };
    const uint8_t* data = t.data;
    size_t nbytes = t.nbytes;
    if (to != t.type) {
      auto& out = converted.emplace_back(row_size(to, t.ne[0]) * size_t(nrows));
      convert_rows(t, to, importance_of(imatrix, t), out.data(), threads, report);
      data = out.data();
      nbytes = out.size();
      s.n_converted++;
    } else {
      report(nrows);
    }
    s.n_fallback += plan[i].fallback;
    s.tensor_bytes_in += t.nbytes;
    s.tensor_bytes_out += nbytes;
    w.add_tensor(t.name, to, std::span<const int64_t>(t.ne, t.n_dims), data, nbytes);
  }

  WriteProgress wp{&progress};
  w.write(out_path, progress ? on_write : nullptr, &wp);
  s.file_bytes_out = std::filesystem::file_size(out_path);
  return s;
}

}  // namespace hart
