package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.meshpilot.testing.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image (src/main/docker/Dockerfile) cannot be built here (no container runtime); what can
 * be checked is: its entrypoint is the java command of bin/pilot-discovery with the JVM flags
 * bin/lib/common.sh gives the image's Java version, it runs as a non-root user the chart's
 * securityContext names, and the chart's default image tag is this build's version.
 */
class ImageTest {
    static final Path DOCKERFILE = ServerProcess.home().resolve("src/main/docker/Dockerfile");
    static final Pattern EXEC = Pattern.compile("(?m)^exec ((?:.*\\\\\n)*.*)$"); // with its continuation lines
    static final Pattern FROM = Pattern.compile("(?m)^FROM eclipse-temurin:(\\d+)-jre\\s*$");

    @Test
    void theEntrypointIsBinPilotDiscoverysJavaCommand(@TempDir Path dir) throws Exception {
        List<String> entrypoint = entrypoint();
        String script = Files.readString(ServerProcess.home().resolve("bin/pilot-discovery"));
        Matcher exec = EXEC.matcher(script);
        assertTrue(exec.find(), "bin/pilot-discovery ends in one exec line");
        // the script's words, as bash splits them (none of them holds a quoted space)
        List<String> words = List.of(exec.group(1).replace("\\\n", " ").trim().split("\\s+"));
        // $(meshpilot_aot_flags): the JVM's AOT cache, trained by the script on this machine's JDK; the
        // image has none (a cache is taken only from the JVM build that wrote it, and the image
        // cannot be built here to train one)
        assertEquals(List.of("\"$JAVA_HOME/bin/java\"", "$(meshpilot_jvm_flags)", "$(meshpilot_aot_flags)",
                "${MESHPILOT_JAVA_OPTS:-}", "-Dmeshpilot.home=\"$MESHPILOT_HOME\"", "-jar", "\"$jar\"", "\"$@\""), words,
                "bin/pilot-discovery's command changed: change the Dockerfile's ENTRYPOINT with it");

        List<String> expected = new ArrayList<>();
        expected.add("java");
        expected.addAll(jvmFlags(imageJavaMajor(), dir));
        // MESHPILOT_JAVA_OPTS: empty in the image (the chart's JAVA_TOOL_OPTIONS carries the heap)
        expected.add("-Dmeshpilot.home=/");
        expected.add("-jar");
        expected.add(copiedTo("target/meshpilot.jar"));
        assertEquals(expected, entrypoint);
        // the jar's manifest finds its dependencies in libs/ beside it
        assertEquals(Path.of(copiedTo("target/meshpilot.jar")).resolveSibling("libs").toString() + "/",
                copiedTo("target/libs/"));
    }

    @Test
    void runsAsTheNonRootUserTheChartNames() throws IOException {
        String user = instruction("USER");
        assertNotEquals("0", user.split(":")[0]);
        assertNotEquals("root", user.split(":")[0]);
        assertEquals(1337, dockerfileUser());
        // ROOT_CA_DIR's default ./etc/cacerts is the chart's cacerts mount, /etc/cacerts
        assertEquals("/", instruction("WORKDIR"));
        assertEquals(Set.of("8080", "15010", "15012", "15014", "15017"), Set.of(instruction("EXPOSE").split(" ")));
    }

    @Test
    void theChartPointsAtThisBuildsImage() throws IOException {
        String pom = Files.readString(ServerProcess.home().resolve("pom.xml"));
        Matcher version = Pattern.compile("<artifactId>meshpilot</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertTrue(version.find());
        assertEquals(version.group(1).replace("-SNAPSHOT", ""), chartAppVersion(),
                "Chart.yaml's appVersion (the default image tag) is the project's version");
        String values = Files.readString(HelmChart.dir().resolve("values.yaml"));
        assertTrue(values.contains("\nhub: ghcr.io/meshpilot\n") && values.contains("\nimage: meshpilot\n"), values);
        assertTrue(Files.readString(DOCKERFILE).contains("-t ghcr.io/meshpilot/meshpilot:" + chartAppVersion() + " ."),
                "the documented build command tags the image the chart's defaults name");
    }

    static String chartAppVersion() {
        try {
            Matcher m = Pattern.compile("(?m)^appVersion: (\\S+)$").matcher(Files.readString(HelmChart.dir().resolve("Chart.yaml")));
            assertTrue(m.find());
            return m.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The numeric user id of the Dockerfile's USER. */
    static int dockerfileUser() {
        try {
            return Integer.parseInt(instruction("USER").split(":")[0]);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String instruction(String name) throws IOException {
        Matcher m = Pattern.compile("(?m)^" + name + " (.+)$").matcher(Files.readString(DOCKERFILE));
        assertTrue(m.find(), "no " + name + " in the Dockerfile");
        String value = m.group(1).trim();
        assertTrue(!m.find(), "one " + name);
        return value;
    }

    static List<String> entrypoint() throws IOException {
        return JsonParser.parseString(instruction("ENTRYPOINT")).getAsJsonArray().asList().stream()
                .map(e -> e.getAsString()).toList();
    }

    static int imageJavaMajor() throws IOException {
        Matcher m = FROM.matcher(Files.readString(DOCKERFILE));
        assertTrue(m.find(), "the image is built FROM eclipse-temurin:<major>-jre");
        return Integer.parseInt(m.group(1));
    }

    /** Where a COPY puts {@code source}. */
    static String copiedTo(String source) throws IOException {
        Matcher m = Pattern.compile("(?m)^COPY " + Pattern.quote(source) + " (\\S+)$").matcher(Files.readString(DOCKERFILE));
        assertTrue(m.find(), "no COPY of " + source);
        return m.group(1);
    }

    /**
     * What bin/lib/common.sh's meshpilot_jvm_flags prints for a JDK of this major version (a
     * stand-in JAVA_HOME whose release file names it).
     */
    static List<String> jvmFlags(int major, Path dir) throws Exception {
        Path jdk = Files.createDirectories(dir.resolve("jdk/bin"));
        Path java = Files.writeString(jdk.resolve("java"), "#!/bin/sh\nexit 0\n");
        assertTrue(java.toFile().setExecutable(true));
        Files.writeString(dir.resolve("jdk/release"), "JAVA_VERSION=\"" + major + ".0.1\"\n");
        Path out = dir.resolve("flags.out");
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", "source \"$1\" && meshpilot_jvm_flags", "flags",
                ServerProcess.home().resolve("bin/lib/common.sh").toString())
                .redirectOutput(out.toFile()).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", dir.resolve("jdk").toString());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), Files.readString(out));
        return List.of(Files.readString(out).trim().split("\\s+"));
    }
}
