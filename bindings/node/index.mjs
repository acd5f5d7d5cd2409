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

  // Rejects with the library's message (e.g. "HART_ERR_BAD_FILE: ...") for a bad path. mmproj:
  // the model's multimodal projector (llama.cpp's mmproj GGUF, as `hart serve --mmproj`), with
  // which createChatCompletion takes images as image_url parts (data: URLs or bare base64);
  // loaded with the first request, which rejects when it is not a projector for this model.
  static async load(path, { nCtx = 0, nThreads = 0, mmproj = undefined } = {}) {
    return new Model(await native.load(path, nCtx, nThreads, mmproj));
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

  // An async iterable of text pieces, as `hart run` streams them: each piece is computed (on a
  // worker thread) when the loop asks for it, and breaking out of the loop frees the
  // generation, so nothing after the last piece taken is computed. Options: maxTokens,
  // temperature, topK, topP, minP, repeatPenalty, seed, jsonSchema (object or text), grammar
  // (GBNF). The iterable's `tokens` counts the tokens computed so far.
  generate(prompt, options = {}) {
    const opts = { ...options };
    if (opts.jsonSchema && typeof opts.jsonSchema !== 'string') opts.jsonSchema = JSON.stringify(opts.jsonSchema);
    const pieces = this.#stepwise(
      async () => native.generationNew(this.#h, await native.tokenize(this.#h, prompt, true, true), opts),
      native.generationNext, native.generationFree,
      (gen, piece) => {
        pieces.tokens = native.generationTokens(gen);
        return piece;
      });
    pieces.tokens = 0;
    return pieces;
  }

  // POST /v1/chat/completions in process: the OpenAI response object; with `stream: true` in
  // the body, an async iterable of the chunk objects as the engine makes them (breaking out of
  // the loop cancels the request).
  createChatCompletion(body) {
    return this.#request(true, body);
  }

  // POST /v1/completions in process (streamed likewise).
  createCompletion(body) {
    return this.#request(false, body);
  }

  #request(chat, body) {
    const chunks = this.#stepwise(() => native.requestSubmit(this.#h, chat, JSON.stringify(body)),
      native.requestNext, native.requestFree, (_, json) => JSON.parse(json));
    if (body.stream) return chunks;
    return (async () => {
      for await (const response of chunks) return response;
      throw new Error('the engine ended the request without a response');
    })();
  }

  // An async iterable over a native step-wise object: `open` makes it, `next` gives its next
  // output (null at the end), `free` ends it (also when the loop breaks), `shape` turns an
  // output into the value the loop sees. Each native call waits for the model's calls before it.
  #stepwise(open, next, free, shape) {
    const serial = (f) => this.#serial(f);
    return {
      [Symbol.asyncIterator]() {
        let handle = null;
        let done = false;
        const finish = () => {
          if (handle && !done) free(handle);
          done = true;
        };
        return {
          async next() {
            if (done) return { value: undefined, done: true };
            try {
              handle ??= await serial(open);
              const out = await serial(() => next(handle));
              if (out !== null) return { value: shape(handle, out), done: false };
            } catch (e) {
              finish();
              throw e;
            }
            finish();
            return { value: undefined, done: true };
          },
          async return() {
            finish();
            return { value: undefined, done: true };
          },
        };
      },
    };
  }

  // The text's embedding (mean-pooled for a decoder model, Euclidean-normalized).
  async embed(text) {
    return this.#serial(async () => native.embed(this.#h, await native.tokenize(this.#h, text, true, true)));
  }
}

export const version = () => native.version();
export default { Model, version };
