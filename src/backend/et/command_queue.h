// The streams of an et::Device as one executor thread that runs every stream's commands in
// submission order (which keeps each stream in order), with the per-stream error that skips a
// failed stream's later commands until take_error(), events, and the profile records. The
// emulated devices (emu/emulator.h) and the ET runtime device (rt/rt_device.h) share it and
// differ in what running a command means (the Execute function).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/et/device.h"

namespace hart::et {

struct Command {
  enum class Type { H2D, D2H, Launch, Event };
  Type type = Type::Event;
  Stream stream = 0;
  DeviceAddr addr = 0;  // copies
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t bytes = 0;
  uint32_t kernel = 0;  // launches
  std::vector<uint64_t> params;  // 8-byte aligned copy of the parameter block
  uint64_t shire_mask = 0;
  Event event = 0;      // events
};

// A copy (H2D: host is the source; D2H: the destination) and a launch, as commands. The launch's
// shire mask must be non-empty and name only shires of props (else hart::Error).
Command copy_command(Command::Type type, Stream s, DeviceAddr addr, void* host, uint64_t bytes);
Command launch_command(const Properties& props, Stream s, Kernel k, const void* params, size_t params_bytes,
                       uint64_t shire_mask);

class CommandQueue {
 public:
  using Clock = std::chrono::steady_clock;
  // Runs one copy or launch on the executor thread: fills rec (kind, name, bytes, device_s, ...;
  // the host times are the queue's) and returns the device-side error, if any.
  using Execute = std::function<std::optional<std::string>(const Command& c, ProfileRecord& rec)>;

  // Starts the executor; device_name words the errors about unknown streams.
  CommandQueue(std::string device_name, Execute execute);
  ~CommandQueue();  // runs what is queued, then stops
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  Stream create_stream();
  void destroy_stream(Stream s);
  void enqueue(Command c);  // throws for an unknown stream
  // Enqueues c on the default stream and waits for it; its device-side error is thrown.
  void run_blocking(Command c);
  Event record_event(Stream s);
  bool event_done(Event e);
  void wait_event(Event e);
  void wait(Stream s);
  std::optional<std::string> take_error(Stream s);

  void profiler_start();
  std::vector<ProfileRecord> profiler_stop();
  // Seconds from profiler_start() to t (for the phases an Execute records).
  double since_start(Clock::time_point t);

 private:
  struct StreamState {
    size_t pending = 0;
    std::optional<std::string> error;
  };
  StreamState& stream_locked(Stream s);
  void executor_loop();
  void profile(ProfileRecord rec);

  std::string name_;
  Execute execute_;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Command> queue_;
  std::map<Stream, StreamState> streams_;
  Stream next_stream_ = 1;
  std::map<Event, bool> events_;  // recorded and not yet waited for
  Event next_event_ = 1;
  bool stopping_ = false;

  std::mutex prof_mutex_;
  bool profiling_ = false;
  Clock::time_point prof_start_;
  double device_clock_s_ = 0;
  std::vector<ProfileRecord> records_;

  std::thread executor_;  // last: starts once everything above exists
};

}  // namespace hart::et
