package io.meshpilot.cli;

import io.helidon.logging.common.LogConfig;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.lifecycle.BuildInfo;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point: {@code pilot-discovery [discovery|version|request] ...}. */
@Command(name = "pilot-discovery", mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "MeshPilot: an Istio-compatible service-mesh control plane (istiod's pilot-discovery).",
        subcommands = {DiscoveryCommand.class, VersionCommand.class, RequestCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] argv) {
        // logging.properties from the jar, before the first log line (Helidon would only
        // load it when the container starts)
        LogConfig.configureRuntime();
        System.exit(commandLine().execute(argv));
    }

    /** The configured command tree; tests execute it without exiting the JVM. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        // istiod accepts unknown flags for compatibility; DiscoveryCommand warns about them.
        cl.getSubcommands().get("discovery").setUnmatchedArgumentsAllowed(true)
                .setUnmatchedOptionsArePositionalParams(false);
        return cl;
    }

    /**
     * Parses {@code discovery} flags against the given environment into validated args,
     * exactly as the command does (used by tests and embedders).
     */
    public static PilotArgs parseDiscoveryArgs(String[] flags,
                                                                       Function<String, String> env) {
        CommandLine cl = commandLine();
        String[] argv = new String[flags.length + 1];
        argv[0] = "discovery";
        System.arraycopy(flags, 0, argv, 1, flags.length);
        CommandLine.ParseResult result = cl.parseArgs(argv);
        DiscoveryCommand cmd = (DiscoveryCommand) result.subcommand().commandSpec().userObject();
        return cmd.withEnv(env).toArgs();
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** {@code pilot-discovery --version}. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {BuildInfo.current().version()};
        }
    }
}
