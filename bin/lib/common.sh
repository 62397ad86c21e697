# Shared by bin/pilot-discovery and bin/test: find a JDK >= 21 and the Maven wrapper.
# Sourced, not executed.

MESHPILOT_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Prints the major version of the JDK at $1 (a JAVA_HOME), or nothing.
meshpilot_java_major() {
  local release="$1/release" v
  [ -x "$1/bin/java" ] || return 0
  if [ -f "$release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release")
  else
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  fi
  echo "$v"
}

# Sets JAVA_HOME to a JDK >= 21: the caller's JAVA_HOME if it qualifies, else the newest
# JDK under /usr/lib/jvm. Fails with one line when there is none.
meshpilot_find_jdk() {
  local major best="" best_major=0 dir
  if [ -n "${JAVA_HOME:-}" ]; then
    major=$(meshpilot_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then
      export JAVA_HOME
      return 0
    fi
  fi
  for dir in /usr/lib/jvm/*; do
    [ -L "$dir" ] && continue
    major=$(meshpilot_java_major "$dir")
    if [ -n "$major" ] && [ "$major" -ge 21 ] && [ "$major" -gt "$best_major" ]; then
      best="$dir"; best_major="$major"
    fi
  done
  if [ -z "$best" ]; then
    echo "meshpilot: no JDK >= 21 found (set JAVA_HOME or install one under /usr/lib/jvm)" >&2
    return 1
  fi
  export JAVA_HOME="$best"
}

# JVM flags for our JDK: quiet the native-access and Unsafe warnings of netty/protobuf.
meshpilot_jvm_flags() {
  local major
  major=$(meshpilot_java_major "$JAVA_HOME")
  echo -n "--enable-native-access=ALL-UNNAMED"
  [ "${major:-0}" -ge 23 ] && echo -n " --sun-misc-unsafe-memory-access=allow"
  echo
}

meshpilot_mvn() {
  "$MESHPILOT_HOME/mvnw" -B -q "$@"
}

# JDK plus Maven's own JVM flags (Maven runs on that JDK; the flags keep JDK 23+ quiet).
meshpilot_setup() {
  meshpilot_find_jdk || return 1
  export MAVEN_OPTS="${MAVEN_OPTS:-$(meshpilot_jvm_flags)}"
}

# Flags that start `discovery` on ephemeral loopback ports with its state (CA root, REST writes)
# under $1: a start that disturbs nothing (the AOT training run, bin/bench startup).
meshpilot_ephemeral_flags() {
  echo -n "--httpAddr 127.0.0.1:0 --grpcAddr 127.0.0.1:0 --secureGRPCAddr 127.0.0.1:0"
  echo -n " --monitoringAddr 127.0.0.1:0 --httpsAddr 127.0.0.1:0 --ctrlz_port 0"
  echo " --caStateDir $1/ca --configStateDir $1/config"
}

# Waits until file $1 has a line matching the extended regex $2, while process $3 lives, for at
# most $4 seconds. Fails when the process ended or the time ran out first.
meshpilot_await_line() {
  local file="$1" pattern="$2" pid="$3" deadline=$((SECONDS + $4))
  until grep -qE "$pattern" "$file" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      return 1
    fi
    sleep 0.02
  done
}

# The JVM's AOT cache for the jar (JDK 25: JEP 483, 514, 515): the classes a start loads, already
# parsed and linked, with the method profiles of a training run. One per JDK build, since the JVM
# takes a cache only from the JVM that wrote it.
meshpilot_aot_cache() {
  local runtime
  runtime=$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"/\1/p' "$JAVA_HOME/release" 2>/dev/null)
  echo "$MESHPILOT_HOME/target/meshpilot-jdk${runtime:-unknown}.aot"
}

# The flags that make the JVM read the AOT cache: nothing before JDK 25, with
# MESHPILOT_AOT_CACHE=off, or while the cache is missing or older than the jar. The JVM's own
# aot/cds lines are off: flags that make it refuse the cache (another GC, a heap past 32 GiB) only
# cost the time it saves, and its messages would break the one-line log format.
meshpilot_aot_flags() {
  local cache
  cache=$(meshpilot_aot_cache)
  if meshpilot_aot_wanted && meshpilot_aot_current "$cache"; then
    echo "-XX:AOTCache=$cache -Xlog:aot*=off -Xlog:cds*=off"
  fi
}

# Whether this JDK has AOT caches (25 and later) and MESHPILOT_AOT_CACHE is not off.
meshpilot_aot_wanted() {
  local major
  major=$(meshpilot_java_major "$JAVA_HOME")
  [ "${major:-0}" -ge 25 ] && [ "${MESHPILOT_AOT_CACHE:-on}" != off ]
}

# Whether the cache $1 exists and was written after the jar was built.
meshpilot_aot_current() {
  [ -f "$1" ] && [ "$1" -nt "$MESHPILOT_HOME/target/meshpilot.jar" ]
}

# Writes the AOT cache from a training run: one embedded start of the jar on ephemeral ports, state
# in a temporary directory, stopped once ready (the JVM writes the cache as it exits). Skipped
# before JDK 25, with MESHPILOT_AOT_CACHE=off, or while the cache is newer than the jar.
meshpilot_aot_train() {
  local jar="$MESHPILOT_HOME/target/meshpilot.jar" cache dir pid
  cache=$(meshpilot_aot_cache)
  if ! meshpilot_aot_wanted || meshpilot_aot_current "$cache"; then
    return 0
  fi
  echo "meshpilot: training the JVM's AOT cache for faster starts (once per build) ..." >&2
  # beside the cache, so the finished file is renamed into place whole
  dir=$(mktemp -d "$MESHPILOT_HOME/target/aot-training.XXXXXX")
  # shellcheck disable=SC2046
  "$JAVA_HOME/bin/java" $(meshpilot_jvm_flags) -XX:AOTCacheOutput="$dir/cache.aot" \
    -Dmeshpilot.home="$MESHPILOT_HOME" -jar "$jar" discovery $(meshpilot_ephemeral_flags "$dir") \
    >"$dir/log" 2>&1 &
  pid=$!
  # a script's background job ignores Ctrl-C: stop the training start with the script
  trap 'kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"; exit 130' INT TERM
  if meshpilot_await_line "$dir/log" 'ready: started in' "$pid" 120; then
    kill -TERM "$pid"
  else
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" || true
  trap - INT TERM
  if [ -s "$dir/cache.aot" ]; then
    mv -f "$dir/cache.aot" "$cache"
  else
    echo "meshpilot: no AOT cache (the training start failed; it runs without): $(tail -n 1 "$dir/log")" >&2
  fi
  rm -rf "$dir"
}
