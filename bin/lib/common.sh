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
