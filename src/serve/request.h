// A generation request as the scheduler sees it, and the stream of events it sends back to the
// HTTP thread that waits for them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "sample/sampler.h"
#include "spec/spec_params.h"

namespace hart::serve {

// A run of image embeddings in a prompt: positions [begin, begin + n) take these rows (n_embd
// floats each) in place of tokens. The prompt's ids there are the image's content keys
// (image_input.h): negative, never a token, so the prefix cache tells images apart by them.
struct PromptEmbeddings {
  int32_t begin = 0;
  std::vector<float> embd;
};

struct GenParams {
  std::vector<int32_t> prompt;
  // In position order, each run ending before the prompt's last token; nullptr: text alone.
  std::shared_ptr<const std::vector<PromptEmbeddings>> images;
  SamplerParams sampling;
  int max_tokens = 0;  // > 0, and prompt + max_tokens fits the context
  std::vector<std::string> stops;
  std::vector<int32_t> shown_tokens;  // control tokens whose text the output keeps (TextOutput)
  int n = 1;  // choices: sequences with the prompt's prefill shared and seeds seed, seed + 1, ...
  std::shared_ptr<const grammar::Grammar> grammar;  // structured output: the completion must match it
  // Speculative decoding (the server's settings with the request's speculative.* fields; no
  // types: none), validated against the engine's chunk size.
  spec::SpecParams spec;
  // The llama-server slot it runs in (Engine::pick_slot), whose tokens it sets when it ends; -1: none.
  int slot = -1;
  // The scale of each of the model's LoRA adapters (Model::loras) for every token; empty: all 0.
  std::vector<float> lora;
};

struct TokenInfo {
  int32_t id;
  float logprob = 0;
  std::vector<TokenLogprob> top;
};

struct Event {
  int index = 0;                  // the choice (GenParams::n)
  std::string text;               // text that became final
  std::vector<TokenInfo> tokens;  // tokens generated since the last event
  bool done = false;              // this choice is done
  std::string finish_reason;      // when done: "stop", "length", "cancelled" or "error"
  std::string error;              // when finish_reason == "error"
  std::string stop_word;          // when a stop string ended the text: which one
  int prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  // When done: milliseconds from admission to the first token, and from there to the end.
  double prompt_ms = 0, predicted_ms = 0;
  int64_t draft_n = 0, draft_n_accepted = 0;  // speculative decoding's (llama-server's timings)
};

// A non-streaming writer's choice: its events' text collected, and the whole text as one event
// at the last one (nothing before), for the writers that read a reply through its stream path.
class WholeText {
 public:
  std::optional<Event> add(const Event& ev) {
    text_ += ev.text;
    if (!ev.done && ev.finish_reason != "error") return std::nullopt;
    Event whole = ev;
    whole.text = text_;
    return whole;
  }

 private:
  std::string text_;
};

// Engine -> HTTP thread. cancel() comes the other way: the client went away.
class Stream {
 public:
  void push(Event e) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back(std::move(e));
    }
    cv_.notify_one();
  }
  Event pop() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !events_.empty(); });
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }
  // The next event, or nothing when none came within `timeout`.
  std::optional<Event> pop_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace hart::serve
