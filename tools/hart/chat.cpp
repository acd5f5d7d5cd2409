// hart chat: an interactive conversation. The model's chat template (its Jinja
// tokenizer.chat_template, or --chat-template / --chat-template-file) renders the whole history
// each turn; the KV cache keeps the common prefix, so only the new part is processed.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "chat_setup.h"
#include "command.h"
#include "parse_args.h"
#include "common/error.h"
#include "model/generate.h"
#include "model_options.h"
#include "print.h"
#include "spec_options.h"
#include "tokenizer/text_output.h"

namespace hart::cli {
namespace {


size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) i++;
  return i;
}

int cmd_chat(int argc, char** argv) {
  CLI::App app{"Chat with a model interactively (/reset starts over, /exit or Ctrl-D quits)", "hart chat"};
  ModelOptions mo;
  SamplingOptions so;
  ChatTemplateOptions cto;
  SpecOptions spo;
  std::string system_prompt;
  int n_predict = -1;
  mo.add_to(app);
  so.add_to(app);
  cto.add_to(app);
  spo.add_to(app);
  app.add_option("--system", system_prompt, "system message opening the conversation");
  app.add_option("-n,--n-predict", n_predict, "max tokens per reply (-1: until the model stops)")
      ->capture_default_str();
  if (!parse_args(app, argc, argv, kSpecShortAliases)) return 0;
  if (print_devices_if_asked(mo)) return 0;
  SessionParams sp = mo.session_params();
  sp.speculative = spo.enabled(sp.n_batch);

  LoadedModel lm = load_model(mo);
  const Tokenizer& tok = *lm.tokenizer;
  // A file without a template is an error here: the user picks one.
  const ChatFormatter chat = choose_chat_formatter(lm.model->file.get(), tok, cto, std::nullopt);
  std::fprintf(stderr, "hart: chat template %s\n", chat.name().c_str());

  Session session(*lm.model, sp, mo.backends());
  Speculation speculation;
  if (sp.speculative) speculation = make_speculation(spo, mo, lm, &so.p);
  spec::SpecStats spec_stats;
  Sampler sampler(so.p, lm.model->hp.n_vocab);
  ChatRequest history;
  history.kwargs = nlohmann::ordered_json{{"preserve_reasoning", true}};  // llama-server's default
  const auto add = [&](const char* role, const std::string& text) {
    history.messages.push_back({{"role", role}, {"content", text}});
  };
  if (!system_prompt.empty()) add("system", system_prompt);
  std::vector<int32_t> cached;  // the tokens whose K/V the session holds, in order
  const bool interactive = isatty(STDIN_FILENO);

  std::string line;
  while (true) {
    if (interactive) std::fputs("\n> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit") break;
    if (line == "/reset") {
      history.messages.erase(history.messages.begin() + (system_prompt.empty() ? 0 : 1), history.messages.end());
      continue;
    }
    if (line.empty()) continue;
    add("user", line);
    std::string prompt;
    try {
      prompt = chat.apply(history);
    } catch (const Error& e) {
      // The template refuses this conversation (say, roles that must alternate): drop the turn.
      std::fprintf(stderr, "hart: the chat template cannot render this turn: %s\n", e.what());
      history.messages.erase(history.messages.end() - 1);
      continue;
    }
    std::vector<int32_t> tokens = tok.encode(prompt, true, true);
    if (int(tokens.size()) >= session.n_ctx()) {  // the conversation so far and this turn
      std::fprintf(stderr, "hart: the context is full (%d tokens, -c): this turn does not fit; /reset starts over\n",
                   session.n_ctx());
      history.messages.erase(history.messages.end() - 1);
      continue;
    }

    // Reuse the cached prefix; always process at least the last token to get fresh logits. A
    // recurrent state (or a slid window) cannot go back into the past: then all is recomputed.
    const size_t keep = size_t(session.truncate(int(std::min(common_prefix(cached, tokens), tokens.size() - 1))));
    cached.assign(tokens.begin(), tokens.begin() + long(keep));
    sampler.reset();
    for (size_t i = 0; i < keep; i++) sampler.accept(tokens[i]);

    TextOutput stream(tok, {});
    std::vector<int32_t> reply;
    GenerateOptions go;
    go.n_predict = n_predict;
    go.is_eog = [&](int32_t t) { return tok.is_eog(t); };
    go.on_token = [&](int32_t t) {
      reply.push_back(t);
      print(stream.push(t));
      return true;
    };
    const std::vector<int32_t> fresh(tokens.begin() + long(keep), tokens.end());
    const GenerateStats st = sp.speculative
                                 ? spec::generate(session, sampler, fresh, go, *speculation.speculator, spec_stats, cached)
                                 : generate(session, sampler, fresh, go);
    print(stream.flush());
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (st.context_full)
      std::fprintf(stderr, "hart: the context is full (%d tokens, -c): the reply stops here; /reset starts over\n",
                   session.n_ctx());
    cached.insert(cached.end(), fresh.begin(), fresh.end());
    // The reply tokens that were fed back through the model (all but a cut-off last one).
    cached.insert(cached.end(), reply.begin(), reply.begin() + (session.n_past() - long(cached.size())));
    add("assistant", tok.decode(reply));
    if (sp.speculative) {  // this turn's text counted into the dynamic lookup cache (-lcd)
      std::vector<int32_t> turn = fresh;
      turn.insert(turn.end(), reply.begin(), reply.end());
      speculation.save_dynamic_cache(turn);
    }
  }
  if (sp.speculative) print_spec_stats(spec_stats);
  return 0;
}

}  // namespace

HART_COMMAND(chat, "chat with a model interactively", cmd_chat);

}  // namespace hart::cli
