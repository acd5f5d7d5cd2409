#!/usr/bin/env node
// Load test for `hart serve`: starts the server on a free loopback port, then for each
// concurrency level (1, 4, 16) and with / without a shared prompt prefix sends streaming
// completions and reports requests/s, output tokens/s, and median / p99 time to first token
// and inter-token latency.
//   scripts/bench-serve.mjs HART_BINARY MODEL [--requests N] [--max-tokens N] [-- extra serve flags]
import { spawn } from 'node:child_process';
import net from 'node:net';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const serveExtra = dash >= 0 ? argv.slice(dash + 1) : [];
const args = dash >= 0 ? argv.slice(0, dash) : argv;
if (args.length < 2) {
  console.error('usage: bench-serve.mjs HART_BINARY MODEL [--requests N] [--max-tokens N] [-- serve flags]');
  process.exit(2);
}
const [hart, model] = args;
const opt = (name, def) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const perLevel = opt('--requests', 32);
const maxTokens = opt('--max-tokens', 32);

const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const base = `http://127.0.0.1:${port}`;
const server = spawn(hart, ['serve', '-m', model, '--port', String(port), ...serveExtra], { stdio: ['ignore', 'ignore', 'inherit'] });
process.on('exit', () => server.kill('SIGTERM'));
for (;;) {
  try {
    if ((await fetch(`${base}/health`)).status === 200) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 100));
}

const words = 'the dog cat ball tree park sun bird girl boy mom happy big little red ran saw played'.split(' ');
const text = (seed, n) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 13 + ((seed * i) % 5)) % words.length]).join(' ');
const shared = 'Once upon a time, ' + text(999, 120) + '. ';

async function one(prompt) {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    body: JSON.stringify({ prompt, max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true } }),
  });
  const times = [];
  let buf = '', tokens = 0;
  const decoder = new TextDecoder();
  for await (const part of res.body) {
    buf += decoder.decode(part, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      else if (chunk.choices[0]?.text) times.push(performance.now());
    }
  }
  return { t0, times, tokens };
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

console.log(`model ${model}, ${perLevel} requests per row, ${maxTokens} output tokens each, greedy`);
console.log('prefix  | conc | req/s  | out tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms');
console.log('--------|------|--------|-----------|-------------|-------------|------------|-----------');
for (const sharedPrefix of [false, true]) {
  for (const conc of [1, 4, 16]) {
    const prompts = Array.from({ length: perLevel }, (_, i) => (sharedPrefix ? shared : '') + text(i + conc * 100, sharedPrefix ? 8 : 128));
    const ttft = [], itl = [];
    let tokens = 0, next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: conc }, async () => {
      while (next < prompts.length) {
        const r = await one(prompts[next++]);
        tokens += r.tokens;
        if (r.times.length) ttft.push(r.times[0] - r.t0);
        for (let i = 1; i < r.times.length; i++) itl.push(r.times[i] - r.times[i - 1]);
      }
    }));
    const secs = (performance.now() - t0) / 1000;
    const f = (x, w) => x.toFixed(1).padStart(w);
    console.log(`${(sharedPrefix ? 'shared' : 'none').padEnd(7)} | ${String(conc).padStart(4)} | ${f(perLevel / secs, 6)} | ${f(tokens / secs, 9)} | ` +
                `${f(pct(ttft, 50), 11)} | ${f(pct(ttft, 99), 11)} | ${f(pct(itl, 50), 10)} | ${f(pct(itl, 99), 9)}`);
  }
}
server.kill('SIGTERM');
