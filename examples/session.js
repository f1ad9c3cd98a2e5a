#!/usr/bin/env node
// session.js: drive sessionfs from Node.js with nothing but the fs module.
//
//     node examples/session.js [MOUNTPOINT]      (default: ./mnt)
//
// Creates a session, runs commands in it, starts a background process,
// reads its logs, kills it and deletes the session. Exits non-zero if
// anything is not as expected. It uses the sync API on purpose: each call
// is one plain file operation, and writeFileSync (open, write, close) of
// cmd returns when the command has ended, which is just what we want.
'use strict';
const fs = require('fs');
const path = require('path');

const mnt = process.argv[2] || './mnt';
const session = path.join(mnt, 'sessions', `example-js-${process.pid}`);
const file = (...names) => path.join(session, ...names);
const read = (name) => fs.readFileSync(name, 'utf8');

function expect(cond, what) {
  if (!cond) {
    console.error(`error: ${what}`);
    process.exit(1); // the 'exit' handler below deletes the session
  }
}

// Runs cmd in the session; returns { code, stdout }.
function run(cmd) {
  console.log(`running: ${cmd}`);
  fs.writeFileSync(file('cmd'), cmd + '\n');
  return { code: Number(read(file('exit'))), stdout: read(file('stdout')) };
}

// Reads a stream file until a line starts with prefix; returns that line
// (null if the stream ended first). Each read returns what has arrived.
function waitForLine(name, prefix) {
  const fd = fs.openSync(name, 'r');
  const buf = Buffer.alloc(65536);
  let text = '';
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return null; // end of stream: the process has exited
      text += buf.toString('utf8', 0, n);
      const line = text.split('\n').slice(0, -1).find((l) => l.startsWith(prefix));
      if (line !== undefined) return line;
    }
  } finally {
    fs.closeSync(fd);
  }
}

console.log(`creating session ${session}`);
fs.mkdirSync(session);
process.on('exit', () => {
  // Deleting the session ends everything it started.
  if (fs.existsSync(session)) {
    console.log('deleting the session');
    fs.rmdirSync(session);
  }
});

// A variable for every command of the session: one file per variable.
fs.writeFileSync(file('env', 'GREETING'), 'hello\n');

// cd and export persist to the next command, like in a terminal.
run('cd /tmp');
let r = run('echo "$GREETING from $PWD"');
console.log(`  stdout: ${r.stdout.trim()}`);
expect(r.code === 0 && r.stdout === 'hello from /tmp\n', `unexpected result ${JSON.stringify(r)}`);

r = run('echo "something went wrong" >&2; exit 3');
console.log(`  stderr: ${read(file('stderr')).trim()}`);
console.log(`  exit:   ${r.code}`);
expect(r.code === 3, `exit status ${r.code}, not 3`);

// A background process: mkdir names it, writing cmd starts it (the close
// returns as soon as it has started). It runs in the session's cwd.
const proc = (name) => file('procs', 'logger', name);
console.log('starting a background process in procs/logger');
fs.mkdirSync(file('procs', 'logger'));
fs.writeFileSync(proc('cmd'),
  'i=0; while :; do i=$((i + 1)); echo "log line $i from $PWD"; sleep 0.2; done\n');
console.log(`  pid ${read(proc('pid')).trim()}`);

console.log('waiting for its third log line');
const line = waitForLine(proc('stream'), 'log line 3');
console.log(`  stream: ${line}`);
expect(line === 'log line 3 from /tmp', `unexpected log line ${line}`);
console.log(`  its log so far: ${read(proc('stdout')).split('\n').length - 1} lines in stdout`);

console.log('killing it');
fs.writeFileSync(proc('ctl'), 'kill\n');
const code = read(proc('exit')).trim(); // blocks until it has exited
const status = Object.fromEntries(read(proc('status')).trim().split('\n')
  .map((l) => [l.slice(0, l.indexOf(' ')), l.slice(l.indexOf(' ') + 1)]));
console.log(`  exit ${code}, state ${status.state}`);
expect(status.state === 'killed', `state ${status.state}, not killed`);
console.log('done');
