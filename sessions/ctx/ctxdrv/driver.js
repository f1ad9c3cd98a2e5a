// driver.js - the driver of a sessionfs javascript code context
// (installed as sfsctx.js next to the daemon). Run as
// `node --expose-internals sfsctx.js REQ ANS`: REQ and ANS are fifos it
// opens itself (node opens files close-on-exec, so no child process of
// the user's code inherits them). Requests are frames
// "code LEN\nKEY PATH"; the answer of each is frames "result", "text",
// "main", "ename", "evalue", "etrace", then "done", each payload starting
// with the execution's KEY (sessions/ctx/ctxproto.h). console.log and
// process.stdout are the process's descriptors 1 and 2, which the daemon
// reads apart from all this.
//
// With a third argument "typescript", each cell is made javascript first
// (sfsts.js: node's own type stripping, else the typescript package the
// cell's require finds), then runs as javascript does.
//
// The code runs in one vm context. Top-level let, const and class become
// assignments to the context's global object, so that they persist and
// a later execution may declare them again; code with a top-level await
// runs in an async function whose last expression is returned, and a
// value that is a promise is awaited. Its globals are those of a
// module's scope (global, require, module, exports, __filename,
// __dirname, process). The parser
// is acorn: node's own copy (hence --expose-internals), else an installed
// one.
'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');
const path = require('path');
const Module = require('module');
const net = require('net');
const ts = require('./sfsts.js');

function loadAcorn() {
  for (const name of ['internal/deps/acorn/acorn/dist/acorn', 'acorn']) {
    try {
      return require(name);
    } catch (e) {
      // the next one
    }
  }
  return null;
}
const acorn = loadAcorn();

const [reqPath, ansPath] = process.argv.slice(2);
const req = fs.openSync(reqPath, 'r');
const ans = fs.openSync(ansPath, 'w');
const FORMAT_MAX = 64 << 20; // a result's format at most (ctxproto.h)
let key = ''; // the execution's, from its request: every answer frame has it

const LOST = 86; // the exit status that says the protocol's descriptors are gone
const ansStat = fs.fstatSync(ans);

// The driver's descriptors were closed or replaced by the user's code:
// the context ends rather than write to what is there now.
function lost() {
  try {
    fs.writeSync(2, "sessionfs: the driver's descriptors were closed or replaced by the code\n");
  } finally {
    process.exit(LOST);
  }
}

function send(tag, data = '') {
  const body = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
  let out = Buffer.concat([Buffer.from(`${tag} ${key.length + body.length}\n${key}`), body]);
  try {
    const st = fs.fstatSync(ans);
    if (st.ino !== ansStat.ino || st.dev !== ansStat.dev) lost();
    while (out.length) {
      out = out.subarray(fs.writeSync(ans, out));
    }
  } catch (e) {
    lost();
  }
}

// The names a declaration pattern binds.
function names(p, out) {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier': out.push(p.name); break;
    case 'ObjectPattern':
      for (const q of p.properties) names(q.type === 'RestElement' ? q.argument : q.value, out);
      break;
    case 'ArrayPattern': for (const q of p.elements) names(q, out); break;
    case 'RestElement': names(p.argument, out); break;
    case 'AssignmentPattern': names(p.left, out); break;
  }
  return out;
}

// Whether node has an await (or for await) outside any function.
function topAwait(node) {
  if (!node || typeof node.type !== 'string') return false;
  if (node.type === 'AwaitExpression' || (node.type === 'ForOfStatement' && node.await)) return true;
  if (/Function/.test(node.type)) return false;
  return Object.values(node).some((v) => (Array.isArray(v) ? v.some(topAwait) : topAwait(v)));
}

// Async when it does not parse as a script, or when it has a top-level
// await that also parses as a script: `await (x)` is a call of a
// function named await there.
function parse(src) {
  const opts = { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true };
  if (/\bawait\b/.test(src)) {
    try {
      const ast = acorn.parse(src, { ...opts, allowAwaitOutsideFunction: true });
      if (topAwait(ast)) return { ast, isAsync: true };
    } catch (e) {
      // as a script, below
    }
  }
  try {
    return { ast: acorn.parse(src, opts), isAsync: false };
  } catch (e) {
    return { ast: acorn.parse(src, { ...opts, allowAwaitOutsideFunction: true }), isAsync: true };
  }
}

// The code as it runs: declarations made assignments, the names they bind
// (defined on the global object first), and whether it is async.
function transform(src) {
  const { ast, isAsync } = parse(src);
  const edits = [];
  const declared = [];
  let hoisted = '';
  const text = (n) => src.slice(n.start, n.end);
  ast.body.forEach((st, i) => {
    const last = i === ast.body.length - 1;
    if (st.type === 'VariableDeclaration') {
      const parts = st.declarations.map((d) => {
        names(d.id, declared);
        if (d.init) return `(${text(d.id)} = ${text(d.init)})`;
        return st.kind === 'var' ? 'undefined' : `(${text(d.id)} = undefined)`;
      });
      edits.push([st.start, st.end, `void (${parts.join(', ')});`]);
    } else if (st.type === 'ClassDeclaration') {
      declared.push(st.id.name);
      edits.push([st.start, st.end, `void (${st.id.name} = ${text(st)});`]);
    } else if (st.type === 'FunctionDeclaration' && isAsync) {
      declared.push(st.id.name);
      hoisted += `${st.id.name} = ${text(st)}; `;
      edits.push([st.start, st.end, '']);
    } else if (last && isAsync && st.type === 'ExpressionStatement') {
      edits.push([st.start, st.end, `return (${text(st.expression)});`]);
    }
  });
  let out = src;
  for (const [a, b, t] of edits.reverse()) out = out.slice(0, a) + t + out.slice(b);
  // on the first line, so that the lines of the code are its own (and so
  // are a hoisted function's when it comes first)
  if (isAsync) out = `(async () => {${hoisted}${out}\n})()`;
  return { code: out, declared, isAsync };
}

// A module's scope, as node code expects one: global, require (of the
// cwd), module, exports, __filename and __dirname (the cwd), process.
const cellFile = path.join(process.cwd(), '[sessionfs]');
const cellModule = new Module(cellFile, null);
cellModule.filename = cellFile;
cellModule.paths = Module._nodeModulePaths(process.cwd());
const sandbox = {
  console, process, Buffer, URL, URLSearchParams, TextEncoder, TextDecoder,
  setTimeout, clearTimeout, setInterval, clearInterval, setImmediate,
  clearImmediate, queueMicrotask, structuredClone, fetch: globalThis.fetch,
  require: Module.createRequire(cellFile),
  module: cellModule,
  exports: cellModule.exports,
  __filename: cellFile,
  __dirname: process.cwd(),
};
sandbox.globalThis = sandbox;
sandbox.global = sandbox;
const context = vm.createContext(sandbox);
const typescript = process.argv[4] === 'typescript' ? ts.transpiler(sandbox.require) : null;
if (typescript && typescript.missing) {
  send('fatal', typescript.missing);
  process.exit(1);
}
let count = 0;
let running = null; // the interrupt of the execution in progress
let interruptPending = false; // an interrupt before the user's code began
let thrown = []; // errors of timers and promises nobody awaited

process.on('SIGINT', () => {
  if (running) running(new Error('Interrupted'));
  else interruptPending = true;
});
// What user code leaves behind (a timer that throws, a promise nobody
// awaits): during an execution it is that execution's error; between
// executions it is kept for the next one's stderr. The context lives on.
function leftover(e) {
  if (running) running(e);
  else thrown.push(e);
}
process.on('uncaughtException', leftover);
process.on('unhandledRejection', leftover);

function describe(e) {
  try {
    return `${e && typeof e.stack === 'string' ? e.stack : util.inspect(e)}\n`;
  } catch (err) {
    return '(an error that cannot be shown)\n';
  }
}

function safe(fn, fallback) {
  try {
    return fn();
  } catch (e) {
    return fallback;
  }
}

function errorFrames(e) {
  const name = safe(() => String((e && e.name) || 'Error'), 'Error');
  const value = safe(() => (e && e.message !== undefined ? String(e.message) : String(e)),
    '(a value that cannot be shown)');
  const stack = safe(() => (e && typeof e.stack === 'string' ? e.stack : `${name}: ${value}`),
    `${name}: ${value}`).split('\n');
  send('ename', name);
  send('evalue', value);
  for (const line of stack) {
    if (line.includes(__filename) || line.includes(ts.file) || /\(node:|at node:/.test(line)) continue;
    send('etrace', typescript ? typescript.lines(line) : line);
  }
}

// Resolves once what was written to s has reached its pipe.
function drained(s) {
  if (!s.writableLength || s.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      s.off('close', done);
      resolve();
    };
    s.once('close', done);
    s.write('', done);
  });
}

async function run(src, filename) {
  let code = typescript ? typescript.cell(src, filename) : src;
  let isAsync = false;
  if (acorn) {
    try {
      const t = transform(code);
      for (const n of t.declared) if (!(n in sandbox)) sandbox[n] = undefined;
      ({ code, isAsync } = t);
    } catch (e) {
      // a syntax error: compiled as written, V8 reports it
    }
  }
  const script = new vm.Script(code, { filename });
  const stop = new Promise((_, reject) => { running = reject; });
  stop.catch(() => {});
  if (interruptPending) throw new Error('Interrupted');
  const value = script.runInContext(context, { breakOnSigint: true, displayErrors: false });
  // a promise (or thenable) is awaited, as other notebooks do, until the
  // execution is interrupted (its timeout too); boxed, so that the
  // caller's await does not unwrap what it resolves to again
  return isAsync || thenable(value) ? { value: await Promise.race([value, stop]) } : { value };
}

function thenable(v) {
  return safe(() => v !== null && (typeof v === 'object' || typeof v === 'function') &&
    typeof v.then === 'function', false);
}

async function execute(file) {
  const filename = `<cell ${++count}>`;
  let value;
  let failed = null;
  for (const e of thrown.splice(0)) process.stderr.write(`sessionfs: left over from before: ${describe(e)}`);
  try {
    ({ value } = await run(fs.readFileSync(file, 'utf8'), filename));
  } catch (e) {
    failed = { e };
  }
  running = null;
  try {
    if (!failed && value !== undefined) {
      let text;
      try {
        text = util.inspect(value);
      } catch (e) {
        failed = { e };
      }
      if (!failed) {
        let body = Buffer.from(text);
        if (body.length > FORMAT_MAX) {
          body = body.subarray(0, FORMAT_MAX);
          process.stderr.write(`sessionfs: the result's text is over ${FORMAT_MAX} bytes: truncated\n`);
        }
        send('result');
        send('text', body);
        send('main');
      }
    }
    if (failed) errorFrames(failed.e);
  } finally {
    await Promise.all([drained(process.stdout), drained(process.stderr)]);
    interruptPending = false;
    send('done');
  }
}

// Requests, one execution at a time, in order. The fifo is read as a
// socket (no thread of libuv's pool blocked in read(), which would keep
// node from exiting).
let pending = Buffer.alloc(0);
let queue = Promise.resolve();
const stream = new net.Socket({ fd: req, readable: true, writable: false });
stream.on('error', lost);
stream.on('end', () => process.exit(0)); // the daemon is gone
stream.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl < 0) return;
    const [tag, n] = pending.subarray(0, nl).toString().split(' ');
    const len = Number(n);
    if (pending.length < nl + 1 + len) return;
    const body = pending.subarray(nl + 1, nl + 1 + len).toString();
    pending = pending.subarray(nl + 1 + len);
    const sp = body.indexOf(' ');
    if (tag === 'code') {
      queue = queue.then(() => {
        key = body.slice(0, sp);
        return execute(body.slice(sp + 1));
      });
    }
  }
});
send('ready');
