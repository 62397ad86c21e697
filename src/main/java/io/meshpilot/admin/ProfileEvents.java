package io.meshpilot.admin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;

/**
 * What a served profile may hold: the JDK's "profile" settings without the events whose fields
 * carry what the process was started with or runs - environment variables, system and
 * security properties, JVM and program arguments, string-valued JVM flags, agents' options,
 * the command lines of the machine's processes and of those the JVM starts. Any of them may
 * hold a secret (a token in an environment variable, a password in a {@code -D} or a flag),
 * and a profile is answered to any caller the debug endpoints admit.
 */
final class ProfileEvents {
    static final Set<String> REVEALING = Set.of(
            "jdk.InitialEnvironmentVariable",
            "jdk.InitialSystemProperty",
            "jdk.InitialSecurityProperty",
            "jdk.SecurityPropertyModification",
            "jdk.JVMInformation",
            "jdk.StringFlag",
            "jdk.StringFlagChanged",
            "jdk.JavaAgent",
            "jdk.NativeAgent",
            "jdk.SystemProcess",
            "jdk.ProcessStart");

    private ProfileEvents() {
    }

    /** The settings to record with: the revealing events are never recorded by this recording. */
    static Map<String, String> settings() {
        Map<String, String> settings;
        try {
            settings = new HashMap<>(Configuration.getConfiguration("profile").getSettings());
        } catch (IOException | ParseException e) {
            throw new IllegalStateException("the JDK's own \"profile\" JFR settings cannot be read", e);
        }
        REVEALING.forEach(event -> settings.put(event + "#enabled", "false"));
        return settings;
    }

    /**
     * The stopped recording's bytes without the revealing events. The settings alone are not
     * enough: every recording in the JVM writes into the same chunks, and a dump copies the
     * chunks, so another recording that enables them (an operator's
     * {@code -XX:StartFlightRecording} or {@code jcmd JFR.start}) would put them in ours.
     */
    static byte[] answer(Recording stopped) throws IOException {
        Path recorded = Files.createTempFile("meshpilot-profile-", ".jfr");
        try {
            Path answer = Files.createTempFile("meshpilot-profile-answer-", ".jfr");
            try {
                stopped.dump(recorded);
                try (RecordingFile file = new RecordingFile(recorded)) {
                    file.write(answer, event -> !REVEALING.contains(event.getEventType().getName()));
                }
                return Files.readAllBytes(answer);
            } finally {
                Files.deleteIfExists(answer);
            }
        } finally {
            Files.deleteIfExists(recorded);
        }
    }
}
