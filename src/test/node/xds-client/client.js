#!/usr/bin/env node
// A second, independent xDS client for MeshPilot: @grpc/grpc-js-xds (not grpc-java, not Envoy).
// GrpcJsXdsClientTest runs it as a real process.
//
//   GRPC_XDS_BOOTSTRAP=bootstrap.json node client.js [--target URI] [--method /svc/Method]
//       [--deadline-ms N] [--hold] [PHASE...]
//
// A PHASE is COUNT[@HEADER=VALUE][!CODE]: COUNT sequential unary calls, with that metadata
// header when given, each expected to end with status CODE (a grpc status name, default OK).
// Requests and responses are raw UTF-8 bytes (no .proto): the backends answer their name.
//
// Prints ONE JSON line on stdout:
//   {"target":..,"phases":[{"calls":N,"headers":{..},"expect":"OK","ok":N,
//     "backends":{"v1":n,..},"errors":{"UNAVAILABLE: details":n},"unexpected":0}],"unexpected":0}
// then, with --hold, keeps the channel (and so its ADS stream) open until stdin ends, so the
// caller can inspect the control plane's view of this connection.
// Without PHASE arguments it reads one PHASE per line of stdin instead and prints one phase
// result per line ({"calls":N,...} as above), until stdin ends: the caller can change the
// mesh config between phases while the channel stays up (the protocol of the C-core client,
// src/test/python/xds-client/client.py, so ExternalXdsClient drives both the same way).
// Exit status: 0 when every call ended as expected, 1 when any did not, 2 on bad arguments,
// a bad phase line or a missing bootstrap.
'use strict';

const grpc = require('@grpc/grpc-js');
const grpcXds = require('@grpc/grpc-js-xds');

function usage(message) {
  process.stderr.write(`client.js: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {
    target: 'xds:///echo.test.svc.cluster.local:7070',
    method: '/test.Echo/Who',
    deadlineMs: 20000,
    hold: false,
    phases: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--target') opts.target = value();
    else if (a === '--method') opts.method = value();
    else if (a === '--deadline-ms') opts.deadlineMs = Number(value());
    else if (a === '--hold') opts.hold = true;
    else opts.phases.push(parsePhase(a));
  }
  if (!(opts.deadlineMs > 0)) usage('--deadline-ms must be a positive number');
  return opts;
}

function parsePhase(spec) {
  const m = /^(\d+)(?:@([^=!]+)=([^!]*))?(?:!([A-Z_]+))?$/.exec(spec);
  if (!m) usage(`bad PHASE "${spec}": want COUNT[@HEADER=VALUE][!CODE]`);
  const expect = m[4] || 'OK';
  if (!(expect in grpc.status)) usage(`unknown status "${expect}" in "${spec}"`);
  return { calls: Number(m[1]), headers: m[2] ? { [m[2].toLowerCase()]: m[3] } : {}, expect };
}

const codeName = (code) => Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
const identity = (b) => b;

function call(client, opts, headers) {
  // waitForReady: the first calls queue while the xDS resolver fetches LDS/RDS/CDS/EDS
  const md = new grpc.Metadata({ waitForReady: true });
  for (const [k, v] of Object.entries(headers)) md.set(k, v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(opts.method, identity, identity, Buffer.from('who', 'utf8'), md,
        { deadline: Date.now() + opts.deadlineMs },
        (err, reply) => resolve(err ? { err } : { name: reply.toString('utf8') }));
  });
}

async function runPhase(client, opts, phase) {
  const out = { calls: phase.calls, headers: phase.headers, expect: phase.expect, ok: 0,
    backends: {}, errors: {}, unexpected: 0 };
  for (let i = 0; i < phase.calls; i++) {
    const r = await call(client, opts, phase.headers);
    let code;
    if (r.err) {
      code = codeName(r.err.code);
      const key = `${code}: ${r.err.details}`;
      out.errors[key] = (out.errors[key] || 0) + 1;
    } else {
      code = 'OK';
      out.ok++;
      out.backends[r.name] = (out.backends[r.name] || 0) + 1;
    }
    if (code !== phase.expect) out.unexpected++;
  }
  return out;
}

// grpc-js-xds reports a bad bootstrap only as a later, unrelated-looking resolution error
// ("Cannot read properties of null ..."), so validate it first with its own loader.
function checkBootstrap() {
  let loader;
  try {
    loader = require('@grpc/grpc-js-xds/build/src/xds-bootstrap');
  } catch (e) {
    return; // internal module moved: grpc-js-xds will still validate it, less legibly
  }
  try {
    loader.loadBootstrapInfo();
  } catch (e) {
    usage(`bad xDS bootstrap: ${e.message}`);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!process.env.GRPC_XDS_BOOTSTRAP && !process.env.GRPC_XDS_BOOTSTRAP_CONFIG) {
    usage('set GRPC_XDS_BOOTSTRAP to the bootstrap JSON file');
  }
  checkBootstrap();
  grpcXds.register();
  const Client = grpc.makeGenericClientConstructor({}, 'MeshPilotXdsClient');
  const client = new Client(opts.target, grpc.credentials.createInsecure());
  if (opts.phases.length === 0) {
    process.exit(await phasesFromStdin(client, opts));
  }
  const result = { target: opts.target, phases: [], unexpected: 0 };
  for (const phase of opts.phases) {
    const r = await runPhase(client, opts, phase);
    result.phases.push(r);
    result.unexpected += r.unexpected;
  }
  process.stdout.write(JSON.stringify(result) + '\n');
  if (opts.hold) {
    await new Promise((resolve) => {
      process.stdin.on('end', resolve);
      process.stdin.on('error', resolve);
      process.stdin.resume();
    });
  }
  client.close();
  process.exit(result.unexpected === 0 ? 0 : 1);
}

// One PHASE per stdin line, one result line each; resolves to the exit status.
async function phasesFromStdin(client, opts) {
  const lines = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
  let unexpected = 0;
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const r = await runPhase(client, opts, parsePhase(line.trim()));
    unexpected += r.unexpected;
    process.stdout.write(JSON.stringify(r) + '\n');
  }
  client.close();
  return unexpected === 0 ? 0 : 1;
}

main().catch((e) => {
  process.stderr.write(`client.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
