// Starts a real `hart serve` on a free loopback port and gives an OpenAI client for it.
// HART (the binary) and HART_TESTDATA come from the environment CTest sets.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';

export const HART = process.env.HART;
export const TESTDATA = process.env.HART_TESTDATA;
export const model = (name) => path.join(TESTDATA, 'models', name);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// n consecutive free loopback ports (for a cluster: HAProxy's, then one per replica).
export async function freePortRange(n) {
  const isFree = (port) => new Promise((resolve) => {
    const srv = net.createServer();
    srv.on('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
  for (;;) {
    const base = 20000 + Math.floor(Math.random() * 40000);
    let ok = true;
    for (let p = base; ok && p < base + n; p++) ok = await isFree(p);
    if (ok) return base;
  }
}

// port: a given port (a replica restarted where it was) instead of a free one.
export async function startServer(args, { apiKey = 'none', port: fixedPort } = {}) {
  const port = fixedPort ?? await freePort();
  // A fixed clock for templates that print the date (gpt-oss, Llama 3.2, ...): tests that ask twice
  // and compare the answers got two prompts once, when midnight passed between the requests.
  const proc = spawn(HART, ['serve', '--host', '127.0.0.1', '--port', String(port), '-t', '2', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' },
  });
  let log = '';
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`hart serve exited: ${log}`);
    try {
      // Loaded: 200, or 503 "busy" for a server whose queue takes nothing (--max-queue 0).
      const r = await fetch(`${base}/health`);
      if (r.status === 200 || (await r.json()).status === 'busy') break;
    } catch {}
    if (i > 300) throw new Error(`hart serve did not become ready: ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0, timeout: 60000 });
  return {
    base,
    client,
    log: () => log,
    post: (route, body) =>
      fetch(`${base}${route}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }),
    proc,
    // Resolves with the exit code (null when a signal ended it).
    stop: () => new Promise((resolve) => {
      if (proc.exitCode !== null) return resolve(proc.exitCode);
      proc.on('exit', (code) => resolve(code));
      proc.kill('SIGTERM');
    }),
  };
}

export async function metric(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line ? Number(line.split(' ').pop()) : 0;
}
