// hart from Node: GGUF language models in process, over the C API (libhart) through a native addon
// whose calls run on libuv's worker threads.
//
//   import hart from 'hart';
//   const m = await hart.Model.load('stories260K.gguf', { nCtx: 256 });
//   for await (const piece of m.generate('Once upon a time', { maxTokens: 32, temperature: 0 })) process.stdout.write(piece);
//
// A model runs one call at a time (they queue in order); createChatCompletion is answered by the
// engine of `hart serve`, so tools and response_format behave as they do over HTTP.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const native = require('./build/Release/hart_node.node');

export class Model {
  #h;
  #queue = Promise.resolve();

  constructor(handle) {
    this.#h = handle;
  }

  // Rejects with the library's message (e.g. "HART_ERR_BAD_FILE: ...") for a bad path.
  static async load(path, { nCtx = 0, nThreads = 0 } = {}) {
    return new Model(await native.load(path, nCtx, nThreads));
  }

  // Runs f after the calls before it: the model's session is used by one call at a time.
  #serial(f) {
    const run = this.#queue.then(f);
    this.#queue = run.catch(() => {});
    return run;
  }

  // Token ids as `hart tokenize` gives them.
  tokenize(text, { addSpecial = true, parseSpecial = false } = {}) {
    return this.#serial(() => native.tokenize(this.#h, text, addSpecial, parseSpecial));
  }

  detokenize(tokens) {
    return native.detokenize(this.#h, tokens);
  }

  // An async iterable of text pieces, as `hart run` streams them; breaking out of the loop
  // cancels the generation. Options: maxTokens, temperature, topK, topP, minP, repeatPenalty,
  // seed, jsonSchema (object or text), grammar (GBNF).
  generate(prompt, options = {}) {
    const opts = { ...options };
    if (opts.jsonSchema && typeof opts.jsonSchema !== 'string') opts.jsonSchema = JSON.stringify(opts.jsonSchema);
    const pieces = [];
    let wake = null;
    let done = false;
    let failure = null;
    const start = () =>
      this.#serial(async () => {
        const tokens = await native.tokenize(this.#h, prompt, true, true);
        await native.generate(this.#h, tokens, opts, (piece) => {
          pieces.push(piece);
          wake?.();
        });
      }).then(
        () => { done = true; wake?.(); },
        (e) => { failure = e; done = true; wake?.(); });
    const h = this.#h;
    return {
      [Symbol.asyncIterator]() {
        let started = null;
        return {
          async next() {
            started ??= start();
            while (pieces.length === 0 && !done) await new Promise((r) => { wake = r; });
            if (pieces.length > 0) return { value: pieces.shift(), done: false };
            if (failure) throw failure;
            return { value: undefined, done: true };
          },
          async return() {
            if (started && !done) native.cancel(h);
            await started;
            return { value: undefined, done: true };
          },
        };
      },
    };
  }

  // POST /v1/chat/completions in process: the OpenAI response object.
  async createChatCompletion(body) {
    return this.#request(true, body);
  }

  // POST /v1/completions in process.
  async createCompletion(body) {
    return this.#request(false, body);
  }

  async #request(chat, body) {
    if (body.stream) throw new Error('stream: use the non-streaming form (the binding returns whole responses)');
    const json = await this.#serial(() => native.request(this.#h, chat, JSON.stringify(body), () => {}));
    return JSON.parse(json);
  }

  // The text's embedding (mean-pooled for a decoder model, Euclidean-normalized).
  async embed(text) {
    return this.#serial(async () => native.embed(this.#h, await native.tokenize(this.#h, text, true, true)));
  }
}

export const version = () => native.version();
export default { Model, version };
