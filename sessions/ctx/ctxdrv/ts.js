// ts.js - typescript cells made javascript, for the driver of a sessionfs
// code context (installed as sfsts.js next to sfsctx.js). What makes
// them, the first that works: node's own type stripping
// (module.stripTypeScriptTypes, node 22.13 and 23.2 on; else its internal
// amaro, node 22.6 on), which puts spaces where the types were so that
// every line stays where it was; else the typescript package found as the
// cells' require('typescript') finds it (the context's cwd and the
// directories above, NODE_PATH, ~/.node_modules, node's lib/node), whose
// transpileModule moves lines, mapped back through its source map in
// the lines of a stack.
'use strict';
const Module = require('module');

const MAPS_MAX = 1000; // the cells whose source maps are kept
const PROBE = 'let probe: number = 1; probe';

// node's own stripping, checked on a probe (its forms changed between
// versions), or null. Its warning that it is experimental, given once at
// the first call, is kept from the context's output between executions.
function stripper() {
  const warn = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return firstStripper();
  } finally {
    process.emitWarning = warn;
  }
}

function firstStripper() {
  const tries = [
    () => (src) => Module.stripTypeScriptTypes(src),
    () => {
      const amaro = require('internal/deps/amaro/dist/index');
      return (src) => amaro.transformSync(src, { mode: 'strip-only' }).code;
    },
  ];
  for (const t of tries) {
    try {
      const fn = t();
      if (/^let probe\s*= 1; probe/.test(fn(PROBE))) return fn;
    } catch (e) {
      // the next one
    }
  }
  return null;
}

// A SyntaxError whose stack names the cell's line, as V8's do.
function syntaxError(ts, filename, d) {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  const err = new SyntaxError(text);
  let where = filename;
  if (d.file && d.start !== undefined) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    where = `${filename}:${line + 1}:${character + 1}`;
  }
  err.stack = `SyntaxError: ${text}\n    at ${where}`;
  return err;
}

// The typescript package's transpileModule, keeping each cell's map.
function transpile(ts, maps) {
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    sourceMap: true,
    esModuleInterop: true,
  };
  return (src, filename) => {
    const out = ts.transpileModule(src, {
      fileName: 'cell.ts',
      reportDiagnostics: true,
      compilerOptions: options,
    });
    const bad = (out.diagnostics || []).find((d) => d.category === ts.DiagnosticCategory.Error);
    if (bad) throw syntaxError(ts, filename, bad);
    maps.set(filename, new Module.SourceMap(JSON.parse(out.sourceMapText)));
    if (maps.size > MAPS_MAX) maps.delete(maps.keys().next().value);
    return out.outputText.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
  };
}

// A line of a stack with each "<cell N>:LINE:COL" of a mapped cell put
// back at the cell's own line and column.
function mapLines(maps, line) {
  return line.replace(/(<cell \d+>):(\d+)(?::(\d+))?/g, (all, cell, l, c) => {
    const map = maps.get(cell);
    const e = map ? map.findEntry(Number(l) - 1, c ? Number(c) - 1 : 0) : null;
    if (!e || e.originalLine === undefined) return all;
    return `${cell}:${e.originalLine + 1}${c ? `:${e.originalColumn + 1}` : ''}`;
  });
}

// What makes the cells: {cell(src, filename) -> javascript, lines(line)
// -> the line mapped}, or {missing: why there is nothing}. require is the
// cells' own.
function transpiler(require) {
  const strip = stripper();
  if (strip) return { cell: (src) => strip(src), lines: (line) => line };
  let ts;
  try {
    ts = require('typescript');
    if (typeof ts.transpileModule !== 'function') throw new Error('no transpileModule');
  } catch (e) {
    return {
      missing: `typescript: node ${process.version} cannot strip types and no ` +
        'typescript package is installed (npm install typescript)',
    };
  }
  const maps = new Map();
  return { cell: transpile(ts, maps), lines: (line) => mapLines(maps, line) };
}

module.exports = { transpiler, file: __filename };
