#include "backend/et/command_queue.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "backend/et/hex.h"
#include "common/error.h"

namespace hart::et {


CommandQueue::CommandQueue(std::string device_name, Execute execute)
    : name_(std::move(device_name)), execute_(std::move(execute)) {
  streams_[0] = {};
  executor_ = std::thread([this] { executor_loop(); });
}

CommandQueue::~CommandQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  executor_.join();
}

Stream CommandQueue::create_stream() {
  std::lock_guard lock(mutex_);
  streams_[next_stream_] = {};
  return next_stream_++;
}

void CommandQueue::destroy_stream(Stream s) {
  if (s == 0) throw Error("the default stream cannot be destroyed");
  wait(s);
  std::lock_guard lock(mutex_);
  streams_.erase(s);
}

CommandQueue::StreamState& CommandQueue::stream_locked(Stream s) {
  const auto it = streams_.find(s);
  if (it == streams_.end()) throw Error("unknown stream " + std::to_string(s) + " on device " + name_);
  return it->second;
}

void CommandQueue::enqueue(Command c) {
  {
    std::lock_guard lock(mutex_);
    stream_locked(c.stream).pending++;
    queue_.push_back(std::move(c));
  }
  cv_.notify_all();
}

void CommandQueue::run_blocking(Command c) {
  c.stream = 0;
  enqueue(std::move(c));
  wait(0);
  if (auto err = take_error(0)) throw Error(*err);
}

Event CommandQueue::record_event(Stream s) {
  Command c;
  c.type = Command::Type::Event;
  c.stream = s;
  {
    std::lock_guard lock(mutex_);
    c.event = next_event_++;
    events_[c.event] = false;
  }
  const Event e = c.event;
  enqueue(std::move(c));
  return e;
}

bool CommandQueue::event_done(Event e) {
  std::lock_guard lock(mutex_);
  if (e == 0 || e >= next_event_) throw Error("unknown event " + std::to_string(e));
  const auto it = events_.find(e);
  return it == events_.end() || it->second;  // absent: already waited for
}

void CommandQueue::wait_event(Event e) {
  std::unique_lock lock(mutex_);
  if (e == 0 || e >= next_event_) throw Error("unknown event " + std::to_string(e));
  cv_.wait(lock, [&] {
    const auto it = events_.find(e);
    return it == events_.end() || it->second;
  });
  events_.erase(e);
}

void CommandQueue::wait(Stream s) {
  const auto start = Clock::now();
  {
    std::unique_lock lock(mutex_);
    stream_locked(s);
    cv_.wait(lock, [&] { return stream_locked(s).pending == 0; });
  }
  ProfileRecord rec;
  rec.kind = ProfileRecord::Kind::Wait;
  rec.stream = s;
  std::lock_guard lock(prof_mutex_);
  if (!profiling_) return;
  rec.host_start_s = std::chrono::duration<double>(start - prof_start_).count();
  rec.host_end_s = std::chrono::duration<double>(Clock::now() - prof_start_).count();
  records_.push_back(std::move(rec));
}

std::optional<std::string> CommandQueue::take_error(Stream s) {
  std::lock_guard lock(mutex_);
  return std::exchange(stream_locked(s).error, std::nullopt);
}

void CommandQueue::profiler_start() {
  std::lock_guard lock(prof_mutex_);
  profiling_ = true;
  prof_start_ = Clock::now();
  device_clock_s_ = 0;
  records_.clear();
}

std::vector<ProfileRecord> CommandQueue::profiler_stop() {
  std::lock_guard lock(prof_mutex_);
  profiling_ = false;
  return std::exchange(records_, {});
}

double CommandQueue::since_start(Clock::time_point t) {
  std::lock_guard lock(prof_mutex_);
  return std::chrono::duration<double>(t - prof_start_).count();
}

void CommandQueue::profile(ProfileRecord rec) {
  std::lock_guard lock(prof_mutex_);
  if (!profiling_) return;
  rec.device_start_s = device_clock_s_;
  device_clock_s_ += rec.device_s;
  records_.push_back(std::move(rec));
}

void CommandQueue::executor_loop() {
  for (;;) {
    Command c;
    bool skip;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every command has run
      c = std::move(queue_.front());
      queue_.pop_front();
      skip = streams_[c.stream].error.has_value() && c.type != Command::Type::Event;
    }
    std::optional<std::string> error;
    if (!skip && c.type != Command::Type::Event) {
      ProfileRecord rec;
      rec.stream = c.stream;
      const auto start = Clock::now();
      try {
        error = execute_(c, rec);
      } catch (const std::exception& e) {  // a host-side failure of the device's own layers
        error = e.what();
      }
      rec.failed = error.has_value();
      rec.host_start_s = since_start(start);
      rec.host_end_s = since_start(Clock::now());
      profile(std::move(rec));
    }
    {
      std::lock_guard lock(mutex_);
      StreamState& st = streams_[c.stream];
      if (error && !st.error) st.error = std::move(error);
      st.pending--;
      if (c.type == Command::Type::Event) {
        const auto it = events_.find(c.event);
        if (it != events_.end()) it->second = true;
      }
    }
    cv_.notify_all();
  }
}

Command copy_command(Command::Type type, Stream s, DeviceAddr addr, void* host, uint64_t bytes) {
  Command c;
  c.type = type;
  c.stream = s;
  c.addr = addr;
  if (type == Command::Type::H2D) c.src = host;
  else c.dst = host;
  c.bytes = bytes;
  return c;
}

Command launch_command(const Properties& props, Stream s, Kernel k, const void* params, size_t params_bytes,
                       uint64_t shire_mask) {
  if (shire_mask == 0 || (shire_mask & ~props.all_shires_mask()) != 0) {
    throw Error("launch: shire mask " + hex(shire_mask) + " is empty or names shires the device lacks (" +
                std::to_string(props.shires) + ")");
  }
  Command c;
  c.type = Command::Type::Launch;
  c.stream = s;
  c.kernel = k.id;
  c.shire_mask = shire_mask;
  c.params.resize((params_bytes + 7) / 8);
  if (params_bytes) std::memcpy(c.params.data(), params, params_bytes);
  return c;
}

}  // namespace hart::et
