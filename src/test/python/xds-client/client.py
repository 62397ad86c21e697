#!/usr/bin/python3
"""A third, independent xDS client for MeshPilot: gRPC C-core (the stack under Python, C++,
Ruby and PHP gRPC), through Debian's python3-grpcio. CCoreXdsClientTest runs it as a real
process, with the same phases as the grpc-js client (src/test/node/xds-client/client.js).

  GRPC_XDS_BOOTSTRAP=bootstrap.json /usr/bin/python3 client.py [--target URI]
      [--method /svc/Method] [--deadline-ms N] [PHASE...]
  /usr/bin/python3 client.py --health HOST:PORT

--health makes one grpc.health.v1.Health/Check call (no xDS) and prints
  {"code":"OK","response":"<hex of the reply>"} or {"code":"UNAVAILABLE","details":".."}.

A PHASE is COUNT[@HEADER=VALUE][!CODE]: COUNT sequential unary calls, with that metadata
header when given, each expected to end with status CODE (a grpc status name, default OK).
Requests and responses are raw bytes (no .proto): the backends answer their name.

Phases given as arguments run first; then one phase per line of stdin, until stdin ends (so
the caller can change the mesh config between phases while the channel, and its ADS stream,
stays up). Prints one JSON line on stdout per phase:
  {"calls":N,"headers":{..},"expect":"OK","ok":N,"backends":{"v1":n,..},
   "errors":{"UNAVAILABLE: details":n},"unexpected":0}
Exit status: 0 when every call ended as expected, 1 when any did not, 2 on bad arguments, a
bad phase line or a missing bootstrap, 3 when grpc (python3-grpcio) cannot be imported.
"""
import json
import os
import re
import sys

try:
    import grpc
except ImportError as e:
    sys.stderr.write("client.py: cannot import grpc (%s); install Debian's python3-grpcio "
                     "for /usr/bin/python3 (bin/test does it)\n" % e)
    sys.exit(3)

PHASE = re.compile(r"^(\d+)(?:@([^=!]+)=([^!]*))?(?:!([A-Z_]+))?$")
STATUS_NAMES = {code.name for code in grpc.StatusCode}


def usage(message):
    sys.stderr.write("client.py: %s\n" % message)
    sys.exit(2)


def parse_phase(spec):
    m = PHASE.match(spec)
    if not m:
        usage('bad PHASE "%s": want COUNT[@HEADER=VALUE][!CODE]' % spec)
    expect = m.group(4) or "OK"
    if expect not in STATUS_NAMES:
        usage('unknown status "%s" in "%s"' % (expect, spec))
    headers = {m.group(2).lower(): m.group(3)} if m.group(2) else {}
    return {"calls": int(m.group(1)), "headers": headers, "expect": expect}


def parse_args(argv):
    opts = {"target": "xds:///echo.test.svc.cluster.local:7070", "method": "/test.Echo/Who",
            "deadline_ms": 20000, "phases": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--target", "--method", "--deadline-ms"):
            if i + 1 >= len(argv):
                usage("%s needs a value" % a)
            i += 1
            if a == "--target":
                opts["target"] = argv[i]
            elif a == "--method":
                opts["method"] = argv[i]
            else:
                try:
                    opts["deadline_ms"] = int(argv[i])
                except ValueError:
                    usage("--deadline-ms must be a positive number")
                if opts["deadline_ms"] <= 0:
                    usage("--deadline-ms must be a positive number")
        else:
            opts["phases"].append(parse_phase(a))
        i += 1
    return opts


def run_phase(who, opts, phase):
    out = {"calls": phase["calls"], "headers": phase["headers"], "expect": phase["expect"], "ok": 0,
           "backends": {}, "errors": {}, "unexpected": 0}
    metadata = tuple(phase["headers"].items())
    for _ in range(phase["calls"]):
        try:
            # wait_for_ready: the first calls queue while the xDS resolver fetches LDS/RDS/CDS/EDS
            name = who(b"who", timeout=opts["deadline_ms"] / 1000.0, metadata=metadata,
                       wait_for_ready=True).decode("utf-8")
            code = "OK"
            out["ok"] += 1
            out["backends"][name] = out["backends"].get(name, 0) + 1
        except grpc.RpcError as e:
            code = e.code().name
            key = "%s: %s" % (code, e.details())
            out["errors"][key] = out["errors"].get(key, 0) + 1
        if code != phase["expect"]:
            out["unexpected"] += 1
    return out


def health(address, deadline_ms):
    with grpc.insecure_channel(address) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        try:
            # an empty HealthCheckRequest (service ""): the server's overall health
            reply = check(b"", timeout=deadline_ms / 1000.0)
            result = {"code": "OK", "response": reply.hex()}
        except grpc.RpcError as e:
            result = {"code": e.code().name, "details": e.details()}
    sys.stdout.write(json.dumps(result) + "\n")
    return 0 if result["code"] == "OK" else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--health":
        sys.exit(health(sys.argv[2], 10000))
    opts = parse_args(sys.argv[1:])
    if not os.environ.get("GRPC_XDS_BOOTSTRAP") and not os.environ.get("GRPC_XDS_BOOTSTRAP_CONFIG"):
        usage("set GRPC_XDS_BOOTSTRAP to the bootstrap JSON file")
    unexpected = 0
    with grpc.insecure_channel(opts["target"]) as channel:
        who = channel.unary_unary(opts["method"])  # no serializers: bytes in, bytes out

        def report(phase):
            result = run_phase(who, opts, phase)
            sys.stdout.write(json.dumps(result) + "\n")
            sys.stdout.flush()
            return result["unexpected"]

        for phase in opts["phases"]:
            unexpected += report(phase)
        for line in sys.stdin:
            if line.strip():
                unexpected += report(parse_phase(line.strip()))
    sys.exit(0 if unexpected == 0 else 1)


if __name__ == "__main__":
    main()
