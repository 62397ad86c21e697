package io.meshpilot.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.testing.Http;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's logging flags on the real JUL of this JVM: System.Logger calls as the server makes
 * them, written to a real file target, read back. Each test puts the JVM's logging back.
 */
class IstioLoggingTest {
    /** Loggers of three scopes, by the names our classes log under. */
    private static final System.Logger ADS = System.getLogger("io.meshpilot.xds.DiscoveryServer");
    private static final System.Logger DEFAULT = System.getLogger("io.meshpilot.startup");
    private static final System.Logger AUTHZ = System.getLogger("io.meshpilot.networking.authz.AuthorizationFilters");

    /** istiod's formatDate: UTC, microseconds. */
    private static final Pattern TIME = Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");

    static LogOptions options(String outputLevel, boolean json, Path file) {
        return LogOptions.parse(outputLevel, "default:none", "", Boolean.toString(json), List.of(file.toString()));
    }

    private static List<String> lines(Path file) throws IOException {
        return Files.readAllLines(file);
    }

    @Test
    void outputLevelsPerScope(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("pilot.log");
        try (IstioLogging logging = IstioLogging.install(options("ads:debug,default:warn", false, log))) {
            ADS.log(Level.DEBUG, "ads debug line");
            ADS.log(Level.TRACE, "ads trace line");
            DEFAULT.log(Level.INFO, "default info line");
            DEFAULT.log(Level.WARNING, "default warn line");
            AUTHZ.log(Level.INFO, "authorization info line");
            AUTHZ.log(Level.DEBUG, "authorization debug line");
        }
        List<String> lines = lines(log);
        assertTrue(lines.stream().anyMatch(l -> l.matches(TIME + "\tdebug\tads\tads debug line")), lines.toString());
        // istiod has no level below debug: a trace record is a debug line
        assertTrue(lines.stream().anyMatch(l -> l.matches(TIME + "\tdebug\tads\tads trace line")), lines.toString());
        // the default scope has no scope column, as in istiod
        assertTrue(lines.stream().anyMatch(l -> l.matches(TIME + "\twarn\tdefault warn line")), lines.toString());
        assertFalse(lines.stream().anyMatch(l -> l.contains("default info line")), lines.toString());
        // a scope the flag does not name keeps istiod's initial level, info
        assertTrue(lines.stream().anyMatch(l -> l.endsWith("\tinfo\tauthorization\tauthorization info line")), lines.toString());
        assertFalse(lines.stream().anyMatch(l -> l.contains("authorization debug line")), lines.toString());
    }

    @Test
    void allSetsEveryScopeAndBareLevelIsTheDefaultScopes(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("pilot.log");
        try (IstioLogging logging = IstioLogging.install(options("all:error,info", false, log))) {
            ADS.log(Level.WARNING, "ads warn line");
            DEFAULT.log(Level.INFO, "default info line");
        }
        List<String> lines = lines(log);
        assertFalse(lines.stream().anyMatch(l -> l.contains("ads warn line")), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.endsWith("\tinfo\tdefault info line")), lines.toString());
    }

    @Test
    void jsonLinesCarryIstiodsKeys(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("pilot.log");
        LogOptions opts = LogOptions.parse("ads:debug", "default:none", "ads", "true", List.of(log.toString()));
        try (IstioLogging logging = IstioLogging.install(opts)) {
            ADS.log(Level.DEBUG, "push \"quoted\"\tand tab");
            DEFAULT.log(Level.WARNING, "default warn", new IllegalStateException("boom"));
        }
        List<String> lines = lines(log);
        assertEquals(2, lines.size(), lines.toString());
        JsonObject ads = JsonParser.parseString(lines.get(0)).getAsJsonObject();
        assertEquals(List.of("level", "time", "scope", "caller", "msg"), List.copyOf(ads.keySet()), lines.get(0));
        assertEquals("debug", ads.get("level").getAsString());
        assertTrue(TIME.matcher(ads.get("time").getAsString()).matches(), lines.get(0));
        assertEquals("ads", ads.get("scope").getAsString());
        assertEquals("push \"quoted\"\tand tab", ads.get("msg").getAsString());
        assertTrue(ads.get("caller").getAsString().matches("logging/IstioLoggingTest\\.java:\\d+"), lines.get(0));

        JsonObject dflt = JsonParser.parseString(lines.get(1)).getAsJsonObject();
        assertEquals(List.of("level", "time", "msg", "stack"), List.copyOf(dflt.keySet()), lines.get(1));
        assertEquals("warn", dflt.get("level").getAsString());
        assertTrue(dflt.get("stack").getAsString().startsWith("java.lang.IllegalStateException: boom"), lines.get(1));
    }

    @Test
    void textTimeIsUtcWhateverTheLocalZone(@TempDir Path dir) throws Exception {
        TimeZone before = TimeZone.getDefault();
        Path log = dir.resolve("pilot.log");
        Instant from;
        Instant to;
        try (IstioLogging logging = IstioLogging.install(options("", false, log))) {
            TimeZone.setDefault(TimeZone.getTimeZone("Asia/Kolkata"));
            from = Instant.now();
            DEFAULT.log(Level.INFO, "a line");
            to = Instant.now();
        } finally {
            TimeZone.setDefault(before);
        }
        String line = lines(log).getFirst();
        Instant logged = Instant.parse(line.substring(0, line.indexOf('\t')));
        // a local time written with a literal Z would be 5h30 off
        assertFalse(logged.isBefore(from.minusMillis(1)) || logged.isAfter(to.plusMillis(1)), line + " not in " + from + ".." + to);
    }

    @Test
    void stackTraceLevelAddsTheStackOfTheLogCall(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("pilot.log");
        LogOptions opts = LogOptions.parse("", "ads:warn", "", "false", List.of(log.toString()));
        try (IstioLogging logging = IstioLogging.install(opts)) {
            ADS.log(Level.WARNING, "ads warn line");
            ADS.log(Level.INFO, "ads info line");
        }
        String all = Files.readString(log);
        assertTrue(all.matches("(?s)" + TIME + "\twarn\tads\tads warn line\n\tat io\\.meshpilot\\.logging\\.IstioLoggingTest\\."
                + "stackTraceLevelAddsTheStackOfTheLogCall.*\n" + TIME + "\tinfo\tads\tads info line\n"), all);
    }

    @Test
    void controlzScopejListsScopesAndPutChangesTheNextLine(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("pilot.log");
        try (IstioLogging logging = IstioLogging.install(options("", true, log));
             ControlZ z = ControlZ.start("127.0.0.1", 0, logging.scopes(), Map.of())) {
            Http.Reply list = Http.get(z.port(), "/scopej/");
            assertEquals(200, list.status(), list.body());
            JsonArray scopes = JsonParser.parseString(list.body()).getAsJsonArray();
            List<String> names = scopes.asList().stream().map(e -> e.getAsJsonObject().get("name").getAsString()).toList();
            assertEquals(names.stream().sorted().toList(), names);
            assertTrue(names.containsAll(List.of("default", "ads", "authorization", "ca", "model", "validation")), names.toString());
            JsonObject ads = scopes.asList().stream().map(JsonElement::getAsJsonObject)
                    .filter(o -> o.get("name").getAsString().equals("ads")).findFirst().orElseThrow();
            assertEquals(List.of("name", "description", "output_level", "stack_trace_level", "log_callers"),
                    List.copyOf(ads.keySet()));
            assertEquals("info", ads.get("output_level").getAsString());
            assertEquals("none", ads.get("stack_trace_level").getAsString());
            assertFalse(ads.get("log_callers").getAsBoolean());
            // istioctl asks without the trailing slash
            assertEquals(list.body(), Http.get(z.port(), "/scopej").body());

            ADS.log(Level.DEBUG, "before the change");
            Http.Reply put = Http.send(z.port(), "/scopej/ads", "PUT", "{\"name\":\"ads\",\"output_level\":\"debug\"}", null);
            assertEquals(202, put.status(), put.body());
            ADS.log(Level.DEBUG, "after the change");
            assertEquals("debug", JsonParser.parseString(Http.get(z.port(), "/scopej/ads").body())
                    .getAsJsonObject().get("output_level").getAsString());

            Http.Reply unknown = Http.send(z.port(), "/scopej/nosuch", "PUT", "{\"output_level\":\"debug\"}", null);
            assertEquals(400, unknown.status());
            assertEquals("unknown scope name: nosuch", unknown.body());
            Http.Reply badLevel = Http.send(z.port(), "/scopej/ads", "PUT", "{\"output_level\":\"loud\"}", null);
            assertEquals(400, badLevel.status());
            assertTrue(badLevel.body().contains("loud"), badLevel.body());
            Http.Reply notJson = Http.send(z.port(), "/scopej/ads", "PUT", "output_level=debug", null);
            assertEquals(400, notJson.status());
            // a bad request keeps the last good setting
            assertEquals("debug", logging.scopes().get("ads").outputLevel().label());
        }
        String all = Files.readString(log);
        assertFalse(all.contains("before the change"), all);
        assertTrue(all.lines().anyMatch(l -> l.contains("\"scope\":\"ads\"") && l.contains("\"msg\":\"after the change\"")
                && l.startsWith("{\"level\":\"debug\"")), all);
    }

    /**
     * ControlZ may listen off-host ({@code --ctrlz_address '*'}): a body past the 8 MiB every
     * listener takes is refused with 413 unread, and the scope keeps its level.
     */
    @Test
    void controlzRefusesABodyLargerThanTheLimit(@TempDir Path dir) throws Exception {
        try (IstioLogging logging = IstioLogging.install(options("", true, dir.resolve("pilot.log")));
             ControlZ z = ControlZ.start("127.0.0.1", 0, logging.scopes(), Map.of())) {
            String padding = "x".repeat((int) HttpLimits.MAX_REQUEST_BODY);
            Http.Reply put = Http.send(z.port(), "/scopej/ads", "PUT",
                    "{\"output_level\":\"debug\",\"padding\":\"" + padding + "\"}", null);
            assertEquals(413, put.status(), put.body());
            assertEquals("request body larger than " + HttpLimits.MAX_REQUEST_BODY + " bytes", put.body());
            assertEquals("info", logging.scopes().get("ads").outputLevel().label());
        }
    }

    @Test
    void badFlagValuesNameTheFlag(@TempDir Path dir) {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LogOptions.parse("ads:loud", "", "", "false", List.of()))
                .getMessage().startsWith("--log_output_level \"ads:loud\": invalid output level 'loud'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LogOptions.parse("a:b:c", "", "", "false", List.of()))
                .getMessage().startsWith("--log_output_level \"a:b:c\": invalid output level format"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LogOptions.parse("", "ads:often", "", "false", List.of()))
                .getMessage().startsWith("--log_stacktrace_level"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LogOptions.parse("", "", "", "maybe", List.of()))
                .getMessage().startsWith("--log_as_json \"maybe\""));
        String missing = dir.resolve("no/such/dir/pilot.log").toString();
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> IstioLogging.install(LogOptions.parse("", "", "", "false", List.of(missing))))
                .getMessage().startsWith("--log_target \"" + missing + "\": cannot open"));
        // istiod ignores scope names it does not have; we say so
        LogOptions unknown = LogOptions.parse("nosuch:debug", "", "", "false", List.of());
        assertEquals(List.of("nosuch"), unknown.unknownScopes());
    }
}
