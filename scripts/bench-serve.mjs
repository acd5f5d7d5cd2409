#!/usr/bin/env node
// Load test for OpenAI-compatible servers (`hart serve`, llama.cpp's llama-server): for each
// server, starts it on a free loopback port, then for each concurrency level (1, 4, 16) and with /
// without a shared prompt prefix (one for all requests, or one per group of six groups) sends
// streaming greedy completions and measures requests/s, output tokens/s, median / p99 time to
// first token and inter-token latency, and the prefix hit rate (cached / prompt tokens, where the
// server reports cached_tokens). --cache-key gives each group's requests its prompt_cache_key
// (what a router in front of several replicas hashes on: scripts/serve-cluster). With --repeat R
// the servers take turns R times (a fresh process each time, so neither profits from the other's
// cache or suffers alone from a busy moment) and every cell is the median of its R runs.
//   scripts/bench-serve.mjs [--requests N] [--max-tokens N] [--repeat R] [--json FILE] [--cache-key]
//                           NAME=COMMAND...
// COMMAND is the server's command line (split on spaces); `--host 127.0.0.1 --port P` is appended.
// Each row sends max(--requests, conc) requests; --json FILE keeps every run's numbers, written
// as they come in.
// Example:
//   scripts/bench-serve.mjs --repeat 3 "hart=build/hart serve -m M.gguf -t 2 --kv-size 8192" \
//     "llama=llama-server -m M.gguf -t 2 -tb 2 -np 16 -c 8192 --cont-batching --no-mmap"
//   scripts/bench-serve.mjs --cache-key "one=build/hart serve -m M.gguf -t 2" \
//     "three=scripts/serve-cluster -m M.gguf --replicas 3 -t 1"
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';

const args = process.argv.slice(2);
const opts = { '--requests': 32, '--max-tokens': 32, '--repeat': 1, '--json': '', '--cache-key': false };
const servers = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--cache-key') opts['--cache-key'] = true;
  else if (args[i] in opts) opts[args[i]] = typeof opts[args[i]] === 'number' ? Number(args[++i]) : args[++i];
  else if (args[i].includes('=')) {
    const eq = args[i].indexOf('=');
    servers.push({ name: args[i].slice(0, eq), cmd: args[i].slice(eq + 1).trim().split(/\s+/) });
  } else {
    console.error(`unknown argument '${args[i]}'`);
    process.exit(2);
  }
}
if (!servers.length) {
  console.error('usage: bench-serve.mjs [--requests N] [--max-tokens N] [--repeat R] [--json FILE] [--cache-key] NAME=COMMAND...');
  process.exit(2);
}
const minRequests = opts['--requests'], maxTokens = opts['--max-tokens'];

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});

// The server running now: stopped with this script, however it ends.
let current = null;
process.on('exit', () => current?.kill('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));

async function start(cmd) {
  const port = await freePort();
  const proc = spawn(cmd[0], [...cmd.slice(1), '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  current = proc;
  let log = '';
  proc.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited:\n${log}`);
    try {
      if ((await fetch(`${base}/health`)).status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () => new Promise((resolve) => {
    proc.on('exit', resolve);
    proc.kill('SIGTERM');
  });
  return { base, stop };
}

const words = 'the dog cat ball tree park sun bird girl boy mom happy big little red ran saw played'.split(' ');
const text = (seed, n) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 13 + ((seed * i) % 5)) % words.length]).join(' ');
const shared = 'Once upon a time, ' + text(999, 120) + '. ';
const kGroups = 6;
const groupPrefix = (g) => `Group ${g}. ` + text(500 + g, 120) + '. ';

// One streaming completion; every text chunk is a token's arrival (both servers send one
// chunk per token), the usage chunk (when the server sends one) has the exact count.
async function one(base, prompt, key) {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, temperature: 0, stream: true, cache_prompt: true,
                           stream_options: { include_usage: true }, ...(key ? { prompt_cache_key: key } : {}) }),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const times = [];
  let buf = '', usage = null, prompt_tokens = 0, cached = 0;
  const decoder = new TextDecoder();
  for await (const part of res.body) {
    buf += decoder.decode(part, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      if (chunk.usage) {
        usage = chunk.usage.completion_tokens;
        prompt_tokens = chunk.usage.prompt_tokens ?? 0;
        cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      }
      if (chunk.choices?.[0]?.text) times.push(performance.now());
    }
  }
  return { t0, times, tokens: usage ?? times.length, prompt_tokens, cached };
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);

const rows = [];
for (const prefix of ['none', 'shared', 'groups'])
  for (const conc of [1, 4, 16]) rows.push({ prefix, conc });

// One row against a running server: --requests requests (at least conc), conc at a time.
async function runRow(base, { prefix, conc }) {
  const perRow = Math.max(minRequests, conc);
  const lead = { none: () => '', shared: () => shared, groups: (i) => groupPrefix(i % kGroups) }[prefix];
  const prompts = Array.from({ length: perRow }, (_, i) => lead(i) + text(i + conc * 100, prefix === 'none' ? 128 : 8));
  const key = (i) => (prefix === 'groups' && opts['--cache-key'] ? `group-${i % kGroups}` : undefined);
  const ttft = [], itl = [];
  let tokens = 0, next = 0, prompt_tokens = 0, cached = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < prompts.length) {
      const i = next++;
      const r = await one(base, prompts[i], key(i));
      tokens += r.tokens;
      prompt_tokens += r.prompt_tokens;
      cached += r.cached;
      if (r.times.length) ttft.push(r.times[0] - r.t0);
      for (let i = 1; i < r.times.length; i++) itl.push(r.times[i] - r.times[i - 1]);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  return { rps: perRow / secs, tps: tokens / secs, ttft50: pct(ttft, 50), ttft99: pct(ttft, 99), itl50: pct(itl, 50),
           itl99: pct(itl, 99), hit: prompt_tokens ? cached / prompt_tokens : NaN };
}

const runs = new Map();  // `${server}|${prefix}|${conc}` -> results of each repeat
const save = () => opts['--json'] &&
  writeFileSync(opts['--json'], JSON.stringify({ minRequests, maxTokens, repeat: opts['--repeat'], servers, runs: Object.fromEntries(runs) }, null, 1));
for (let rep = 0; rep < opts['--repeat']; rep++)
  for (const srv of servers) {
    const s = await start(srv.cmd);
    try {
      for (const row of rows) {
        const key = `${srv.name}|${row.prefix}|${row.conc}`;
        if (!runs.has(key)) runs.set(key, []);
        runs.get(key).push(await runRow(s.base, row));
        save();  // a server that dies later does not take the finished rows with it
      }
      console.error(`repeat ${rep + 1}/${opts['--repeat']}: ${srv.name} done`);
    } catch (e) {
      console.error(`repeat ${rep + 1}/${opts['--repeat']}: ${srv.name} failed: ${e.message}${e.cause ? ` (${e.cause.message})` : ''}`);
    } finally {
      await s.stop();
    }
  }

const fields = ['rps', 'tps', 'ttft50', 'ttft99', 'itl50', 'itl99', 'hit'];
const table = [];
for (const row of rows)
  for (const srv of servers) {
    const rs = runs.get(`${srv.name}|${row.prefix}|${row.conc}`) ?? [];
    const cell = { server: srv.name, ...row };
    for (const f of fields) cell[f] = median(rs.map((r) => r[f]));
    table.push(cell);
  }
console.log(`max(${minRequests}, conc) requests per row, ${maxTokens} output tokens at most, greedy, median of the runs (${opts['--repeat']} repeats)`);
console.log('| server | prefix | conc | req/s | out tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms | prefix hit |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
for (const c of table)
  console.log(`| ${c.server} | ${c.prefix} | ${c.conc} | ${f(c.rps)} | ${f(c.tps)} | ${f(c.ttft50)} | ${f(c.ttft99)} | ${f(c.itl50)} | ${f(c.itl99)} | ${Number.isNaN(c.hit) ? '-' : c.hit.toFixed(2)} |`);
