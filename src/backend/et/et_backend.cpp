#include "backend/et/et_backend.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_set>

#include "backend/et/device/et_params.h"
#include "backend/et/emu/emulator.h"
#include "backend/et/et_schedule.h"
#include "common/error.h"

namespace hart::et {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxUberOps = 512;  // bounds one launch's parameter block

double now_us() { return std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count(); }

const Tensor& owner_of(const Tensor& t) { return t.view_src ? *t.view_src : t; }

const char* kernel_names[] = {
#define ET_KERNEL_ENTRY(name) #name,
#include "backend/et/device/kernels.def"
#undef ET_KERNEL_ENTRY
};

// HART_<name>, else the seed's GGML_<name> (llama.cpp's ET backend), else nullptr.
const char* env(const char* name) {
  if (const char* v = std::getenv((std::string("HART_") + name).c_str())) return v;
  return std::getenv((std::string("GGML_") + name).c_str());
}

}  // namespace

EtOptions EtOptions::from_env() {
  EtOptions o;
  const char* uber = env("ET_UBERKERNEL");
  o.uberkernel = !uber || std::strcmp(uber, "0") != 0;  // on unless set to 0
  const char* engine = std::getenv("HART_ET_MATRIX_ENGINE");
  o.matrix_engine = !engine || std::strcmp(engine, "0") != 0;
  if (const char* dir = env("ET_PROFILE")) o.profile_dir = dir;
  if (const char* mask = std::getenv("HART_ET_SHIRE_MASK")) {
    char* end = nullptr;
    o.shire_mask = std::strtoull(mask, &end, 16);
    if (end == mask || *end || o.shire_mask == 0)
      throw Error(std::string("HART_ET_SHIRE_MASK: '") + mask + "' is not a non-zero hexadecimal shire mask");
  }
  return o;
}

std::shared_ptr<SharedDevice> shared_device(const std::string& key, const std::function<std::unique_ptr<Device>()>& open) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<SharedDevice>> open_devices;
  std::lock_guard lock(mutex);
  if (auto d = open_devices[key].lock()) return d;
  auto d = std::make_shared<SharedDevice>(open());
  open_devices[key] = d;
  return d;
}

EtBackend::EtBackend(std::shared_ptr<SharedDevice> device, EtOptions options)
    : shared_(std::move(device)),
      device_(shared_->device.get()),
      options_(std::move(options)),
      memory_(*device_, options_.memory_budget ? options_.memory_budget : device_->properties().memory_bytes / 4 * 3) {
  const uint64_t all = device_->properties().all_shires_mask();
  mask_ = options_.shire_mask ? options_.shire_mask : all;
  if (mask_ & ~all) throw Error("ET backend: shire mask has shires the device lacks");
  stream_ = device_->create_stream();
  for (const char* k : kernel_names) kernels_.push_back(device_->load_kernel(k));
  uber_ = kernels_[ET_KERNEL_ID_uberkernel];
  if (!options_.profile_dir.empty()) trace_.emplace(options_.profile_dir);
}

EtBackend::~EtBackend() {
  if (trace_) {
    try {
      trace_->write();
    } catch (const Error& e) {
      std::fprintf(stderr, "hart: %s\n", e.what());
    }
  }
  device_->destroy_stream(stream_);
}

void EtBackend::compute(const Graph& g) {
  std::vector<Tensor*> outputs;
  for (Tensor* n : g.nodes)
    if (n->flags & kFlagOutput) outputs.push_back(producer(n));
  compute_part(g, outputs);
}

void EtBackend::copy_in(const Graph& g) {
  std::unordered_set<const Tensor*> in_part(g.nodes.begin(), g.nodes.end()), copied;
  for (const Tensor* n : g.nodes) {
    if (is_view_op(n->op)) continue;
    for (Tensor* s : n->src) {
      if (!s) continue;
      const Tensor* p = producer(s);
      if (in_part.count(p) || !copied.insert(p).second) continue;
      const DeviceAddr dst = memory_.address(*p);  // uploads weights and state on first use
      const bool resident = p->op == Op::NONE && EtMemory::kind_of(owner_of(*p)) != EtMemory::Kind::Transient;
      // A resident state leaf read directly is current on the device; everything else
      // (inputs, other backends' results, a leaf another backend wrote) comes from the host.
      if (resident) continue;
      if (!p->data) throw Error(std::string("ET backend: '") + p->name + "' has no host memory");
      device_->memcpy_h2d_async(stream_, dst, p->data, p->nbytes());
    }
  }
}

void EtBackend::enqueue(const Launched& l) {
  if (l.calls.size() == 1 && !options_.uberkernel) {
    const KernelCall& c = l.calls[0];
    device_->launch(stream_, kernels_[c.kernel_id], c.params.data(), c.params.size() * 8, mask_);
    return;
  }
  // header, the op table, then each sub-kernel's block (all 8-byte words)
  const size_t n = l.calls.size();
  std::vector<uint64_t> blob(1 + n);
  et_uber_params head{uint32_t(n), 0};
  std::memcpy(blob.data(), &head, sizeof head);
  for (size_t i = 0; i < n; i++) {
    const et_uber_op op{uint16_t(l.calls[i].kernel_id), uint16_t(l.waits[i] ? ET_UBER_WAIT : 0u),
                        uint32_t(blob.size() * 8)};
    std::memcpy(&blob[1 + i], &op, sizeof op);
    blob.insert(blob.end(), l.calls[i].params.begin(), l.calls[i].params.end());
  }
  device_->launch(stream_, uber_, blob.data(), blob.size() * 8, mask_);
}

std::vector<EtBackend::Launched> EtBackend::launch(const std::vector<EtOp>& ops) {
  const AddressOf address = [this](const Tensor& t) { return memory_.address(t); };
  const auto range = [&](const Tensor& t) {
    const DeviceAddr at = address(t);
    return ByteRange{at, at + t.nbytes()};
  };
  std::vector<KernelCall> calls;
  std::vector<CallAccess> access;
  for (const EtOp& op : ops) {
    calls.push_back(make_call(op, address, options_.matrix_engine));
    CallAccess& a = access.emplace_back();
    for (const Tensor* t : op.reads()) a.reads.push_back(range(*t));
    for (const Tensor* t : op.writes()) a.writes.push_back(range(*t));
    a.alone = uses_scratchpads(calls.back().kernel_id);
  }
  // One kernel per launch keeps the graph's order; an uberkernel runs its calls phase by phase.
  std::vector<int> phase(ops.size(), 0);
  if (options_.uberkernel) phase = schedule_phases(access);
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return phase[a] < phase[b]; });

  std::vector<Launched> launched;
  int last_phase = -1;
  size_t phase_begin = 0;  // in launched.back().calls
  for (size_t i : order) {
    const bool join = options_.uberkernel && !launched.empty() && launched.back().calls.size() < kMaxUberOps;
    if (!join) launched.emplace_back();
    Launched& l = launched.back();
    const bool wait = !l.calls.empty() && phase[i] != last_phase;
    if (l.calls.empty() || wait) phase_begin = l.calls.size();
    for (size_t j = phase_begin; j < l.calls.size(); j++)
      if (share_activations(calls[i], l.calls[j])) break;
    l.waits.push_back(wait);
    l.calls.push_back(std::move(calls[i]));
    l.ops.push_back(ops[i]);
    last_phase = phase[i];
  }
  for (const Launched& l : launched) enqueue(l);
  return launched;
}

std::vector<EtBackend::CallTime> EtBackend::call_times(const ProfileRecord& r, const Launched& l, bool uber) {
  std::vector<CallTime> out(l.calls.size());
  const bool split = uber && r.sub_kernels.size() == l.calls.size() && !r.phases.empty();
  if (!split) {  // one kernel, or a record without the uberkernel's seams (a failed launch)
    for (CallTime& t : out) {
      t = {r.host_start_s, r.host_end_s, r.device_s / double(out.size()), r.flops / out.size(),
           (r.bytes_read + r.bytes_written) / out.size()};
    }
    return out;
  }
  size_t p = 0;
  for (size_t begin = 0; begin < out.size(); p++) {
    size_t end = begin + 1;
    while (end < out.size() && !l.waits[end]) end++;
    double work = 0;
    for (size_t i = begin; i < end; i++) work += r.sub_kernels[i].work_s;
    const ProfileRecord::Phase& ph = r.phases[std::min(p, r.phases.size() - 1)];
    const double start = p == 0 ? r.host_start_s : r.phases[p - 1].host_end_s;
    for (size_t i = begin; i < end; i++) {
      const double share = work > 0 ? r.sub_kernels[i].work_s / work : 1.0 / double(end - begin);
      out[i] = {start, ph.host_end_s, ph.device_s * share, r.sub_kernels[i].flops, r.sub_kernels[i].bytes};
    }
    begin = end;
  }
  return out;
}

void EtBackend::compute_part(const Graph& g, std::span<Tensor* const> host_reads) {
  std::vector<const Tensor*> transients;
  std::unordered_set<const Tensor*> seen;
  auto note = [&](const Tensor* t) {
    const Tensor& o = owner_of(*t);
    if (EtMemory::kind_of(o) == EtMemory::Kind::Transient && seen.insert(&o).second) transients.push_back(&o);
  };
  for (const Tensor* n : g.nodes) {
    note(n);
    for (const Tensor* s : n->src)
      if (s) note(s);
  }

  std::lock_guard device_lock(shared_->mutex);
  const double origin_us = now_us();
  device_->profiler_start();
  memory_.begin_part(transients);
  copy_in(g);
  const std::vector<EtOp> ops = plan_ops(g, host_reads, [this](const Tensor& t) { return memory_.address(t); });
  const std::vector<Launched> launched = launch(ops);
  for (const Tensor* t : host_reads) device_->memcpy_d2h_async(stream_, t->data, memory_.address(*t), t->nbytes());
  device_->wait(stream_);
  const std::vector<ProfileRecord> recs = device_->profiler_stop();
  if (auto err = device_->take_error(stream_)) throw Error("ET device " + device_->properties().name + ": " + *err);

  stats_.parts++;
  stats_.launches += launched.size();
  stats_.ops += ops.size();
  report(recs, launched, origin_us);
}

void EtBackend::report(const std::vector<ProfileRecord>& recs, const std::vector<Launched>& launched,
                       double origin_us) {
  std::vector<TraceLaunch> traced;
  size_t li = 0;
  double part_device_s = 0;
  for (const ProfileRecord& r : recs) {
    part_device_s += r.device_s;
    if (r.kind != ProfileRecord::Kind::Launch) continue;
    stats_.launch_device_s += r.device_s;
    const Launched& l = launched.at(li++);
    const bool uber = l.calls.size() > 1 || options_.uberkernel;
    const std::vector<CallTime> times = call_times(r, l, uber);
    TraceLaunch& t = traced.emplace_back();
    t.label = uber ? "uberkernel[" + std::to_string(l.calls.size()) + "]" : l.calls[0].label;
    for (size_t i = 0; i < l.calls.size(); i++) {
      t.kernels.push_back(l.calls[i].label);
      t.tensors.push_back(l.ops[i].node->name);
      t.device_s.push_back(times[i].device_s);
    }
    if (!options_.perf_log) continue;
    // One line per kernel call (an uberkernel's calls of one phase share its host interval).
    for (size_t i = 0; i < l.calls.size(); i++) {
      const double start_s = times[i].host_start_s, end_s = times[i].host_end_s, device_s = times[i].device_s;
      const Tensor& n = *l.ops[i].node;
      const uint64_t flops = times[i].flops;
      char line[512];
      std::snprintf(line, sizeof line,
                    "ET_PERF|op=%s|kernel=%s|duration_us=%.0f|tensor=%s|shape=[%" PRId64 ",%" PRId64 ",%" PRId64
                    ",%" PRId64 "]|start_us=%.0f|end_us=%.0f|flops=%" PRIu64 "|bytes=%" PRIu64 "|device_us=%.3f",
                    op_name(l.ops[i].head->op), l.calls[i].label.c_str(), (end_s - start_s) * 1e6, n.name, n.ne[0],
                    n.ne[1], n.ne[2], n.ne[3], origin_us + start_s * 1e6, origin_us + end_s * 1e6, flops,
                    times[i].bytes, device_s * 1e6);
      std::string text = line + l.calls[i].perf_keys;
      if (uber) text += "|uber_launch=" + std::to_string(stats_.launches - launched.size() + li - 1);
      // The simulator's counts are the launch's (every call of an uberkernel); et-rt's has cycles only.
      if (r.sysemu_cycles) text += "|sysemu_cycles=" + std::to_string(*r.sysemu_cycles);
      if (r.sysemu_insns) text += "|sysemu_insns=" + std::to_string(*r.sysemu_insns);
      options_.perf_log->line(text);
    }
  }
  stats_.device_s += part_device_s;
  if (trace_) trace_->add(recs, origin_us, device_clock_us_, traced);
  device_clock_us_ += part_device_s * 1e6;
}

std::unique_ptr<EtBackend> open_et_backend(const EtOptions& options) {
  return std::make_unique<EtBackend>(shared_device("et0", [] { return emu::open_emulator(); }), options);
}

}  // namespace hart::et
