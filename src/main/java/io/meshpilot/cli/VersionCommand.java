package io.meshpilot.cli;

import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.lifecycle.ExitCodes;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pilot-discovery version}: same flags and layouts as istiod's version command. */
@Command(name = "version", mixinStandardHelpOptions = true, description = "Print out build version information.")
public final class VersionCommand implements Callable<Integer> {

    @Option(names = {"-s", "--short"}, description = "Print only the version.")
    boolean shortForm;

    @Option(names = {"-o", "--output"}, description = "One of 'yaml' or 'json'.")
    String output = "";

    @Override
    public Integer call() {
        BuildInfo info = BuildInfo.current();
        switch (output) {
            case "" -> System.out.println(shortForm ? info.version() : longForm(info));
            case "json" -> System.out.println(json(info));
            case "yaml" -> System.out.println(yaml(info));
            default -> {
                System.err.println("Error: --output must be 'yaml' or 'json'");
                return ExitCodes.USAGE;
            }
        }
        return ExitCodes.OK;
    }

    static String longForm(BuildInfo b) {
        return "version.BuildInfo{Version:\"" + b.version() + "\", GitRevision:\"" + b.revision()
                + "\", JavaVersion:\"" + b.javaVersion() + "\", BuildTime:\"" + b.buildTime()
                + "\", BuildStatus:\"" + b.status() + "\", GitTag:\"" + b.tag() + "\"}";
    }

    static String json(BuildInfo b) {
        StringBuilder sb = new StringBuilder("{\n  \"clientVersion\": {\n");
        var it = b.asMap().entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, String> e = it.next();
            sb.append("    \"").append(e.getKey()).append("\": \"").append(escape(e.getValue())).append('"')
                    .append(it.hasNext() ? ",\n" : "\n");
        }
        return sb.append("  }\n}").toString();
    }

    static String yaml(BuildInfo b) {
        StringBuilder sb = new StringBuilder("clientVersion:\n");
        new TreeMap<>(b.asMap()).forEach((k, v) -> sb.append("  ").append(k).append(": ").append(v).append('\n'));
        return sb.toString();
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
