// driver.js - the driver of a sessionfs javascript code context
// (installed as sfsctx.js next to the daemon). Run as
// `node --expose-internals sfsctx.js REQ ANS`: REQ and ANS are fifos it
// opens itself (node opens files close-on-exec, so no child process of
// the user's code inherits them). Requests are frames "code LEN\nPATH";
// the answer of each is frames "result", "text", "main", "ename",
// "evalue", "etrace", then "done" (sessions/ctxproto.h). console.log and
// process.stdout are the process's descriptors 1 and 2, which the daemon
// reads apart from all this.
//
// The code runs in one vm context. Top-level let, const and class become
// assignments to the context's global object, so that they persist and
// a later execution may declare them again; code with a top-level await
// runs in an async function whose last expression is returned. The parser
// is acorn: node's own copy (hence --expose-internals), else an installed
// one.
'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');
const path = require('path');
const Module = require('module');

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

function send(tag, data = '') {
  const body = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
  let out = Buffer.concat([Buffer.from(`${tag} ${body.length}\n`), body]);
  while (out.length) {
    out = out.subarray(fs.writeSync(ans, out));
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

function parse(src) {
  const opts = { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true };
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
      hoisted += `${st.id.name} = ${text(st)};\n`;
      edits.push([st.start, st.end, '']);
    } else if (last && isAsync && st.type === 'ExpressionStatement') {
      edits.push([st.start, st.end, `return (${text(st.expression)});`]);
    }
  });
  let out = src;
  for (const [a, b, t] of edits.reverse()) out = out.slice(0, a) + t + out.slice(b);
  if (isAsync) out = `(async () => {\n${hoisted}${out}\n})()`;
  return { code: out, declared, isAsync };
}

const sandbox = {
  console, process, Buffer, URL, URLSearchParams, TextEncoder, TextDecoder,
  setTimeout, clearTimeout, setInterval, clearInterval, setImmediate,
  clearImmediate, queueMicrotask, structuredClone, fetch: globalThis.fetch,
  require: Module.createRequire(path.join(process.cwd(), '[sessionfs]')),
};
sandbox.globalThis = sandbox;
const context = vm.createContext(sandbox);
let count = 0;
let running = null; // the interrupt of the execution in progress

process.on('SIGINT', () => {
  if (running) running(new Error('Interrupted'));
});
// What user code leaves behind (a timer that throws, a promise nobody
// awaits) is reported on stderr; the context lives on.
function report(e) {
  try {
    process.stderr.write(`${e && e.stack ? e.stack : util.inspect(e)}\n`);
  } catch (err) {
    // stderr is gone: nothing to report to
  }
}
process.on('uncaughtException', report);
process.on('unhandledRejection', report);

function errorFrames(e) {
  const name = (e && e.name) || 'Error';
  const value = e && e.message !== undefined ? String(e.message) : String(e);
  const stack = (e && typeof e.stack === 'string' ? e.stack : `${name}: ${value}`).split('\n');
  send('ename', name);
  send('evalue', value);
  for (const line of stack) {
    if (line.includes(__filename) || /\(node:|at node:/.test(line)) continue;
    send('etrace', line);
  }
}

async function execute(file) {
  const src = fs.readFileSync(file, 'utf8');
  const filename = `<cell ${++count}>`;
  let value;
  let failed = null;
  try {
    let code = src;
    let isAsync = false;
    if (acorn) {
      try {
        const t = transform(src);
        for (const n of t.declared) if (!(n in sandbox)) sandbox[n] = undefined;
        ({ code, isAsync } = t);
      } catch (e) {
        // a syntax error: compiled as written, V8 reports it
      }
    }
    const script = new vm.Script(code, { filename });
    value = script.runInContext(context, { breakOnSigint: true, displayErrors: false });
    if (isAsync) {
      value = await Promise.race([value, new Promise((_, reject) => { running = reject; })]);
    }
  } catch (e) {
    failed = { e };
  }
  running = null;
  if (!failed && value !== undefined) {
    send('result');
    send('text', util.inspect(value));
    send('main');
  }
  if (failed) errorFrames(failed.e);
  send('done');
}

// Requests, one execution at a time, in order.
let pending = Buffer.alloc(0);
let queue = Promise.resolve();
const stream = fs.createReadStream(null, { fd: req, highWaterMark: 65536 });
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
    if (tag === 'code') queue = queue.then(() => execute(body));
  }
});
send('ready');
