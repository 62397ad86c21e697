package io.meshpilot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.logging.LogLevel;
import io.meshpilot.logging.LogOptions;
import io.meshpilot.logging.LogScopes;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** istiod's logging flags as the discovery command reads them (they used to be ignored as unknown). */
class LoggingFlagsParseTest {

    private static DiscoveryCommand parse(String... flags) {
        String[] argv = new String[flags.length + 1];
        argv[0] = "discovery";
        System.arraycopy(flags, 0, argv, 1, flags.length);
        CommandLine.ParseResult r = Main.commandLine().parseArgs(argv);
        return (DiscoveryCommand) r.subcommand().commandSpec().userObject();
    }

    @Test
    void istiodsLoggingFlagsAreReadNotIgnored() {
        String[] flags = {"--log_output_level=ads:debug,default:warn", "--log_as_json", "--log_caller", "ads",
                "--log_stacktrace_level=ads:error", "--log_target", "stderr", "--log_target=/tmp/x.log",
                "--ctrlz_port=0", "--ctrlz_address", "*"};
        assertEquals(List.of(), Main.parseDiscoveryArgs(flags, Map.<String, String>of()::get).ignoredArguments());
        LogOptions o = parse(flags).logOptions();
        assertEquals(LogLevel.DEBUG, o.outputLevels().get("ads"));
        assertEquals(LogLevel.WARN, o.outputLevels().get(LogScopes.DEFAULT));
        assertEquals(LogLevel.INFO, o.outputLevels().get("authorization"));
        assertEquals(LogLevel.ERROR, o.stackTraceLevels().get("ads"));
        assertTrue(o.json());
        assertEquals(Set.of("ads"), o.callerScopes());
        assertEquals(List.of("stderr", "/tmp/x.log"), o.targets());
    }

    @Test
    void istiodsDefaults() {
        LogOptions o = parse().logOptions();
        assertTrue(!o.json());
        assertEquals(List.of("stdout"), o.targets());
        assertEquals(LogLevel.INFO, o.outputLevels().get(LogScopes.DEFAULT));
        assertEquals(LogLevel.NONE, o.outputLevels().get("grpc"));
        assertEquals(LogLevel.NONE, o.stackTraceLevels().get("ads"));
        assertTrue(o.callerScopes().isEmpty());
        // --log_as_json=false, as pflag takes it
        assertTrue(!parse("--log_as_json=false").logOptions().json());
    }

    @Test
    void loggersMapToIstiodScopes() {
        assertEquals("ads", LogScopes.of("io.meshpilot.xds.AdsService").name());
        assertEquals("authorization", LogScopes.of("io.meshpilot.networking.authz.AuthorizationFilters").name());
        assertEquals("ca", LogScopes.of("io.meshpilot.security.CertificateService").name());
        assertEquals("pkica", LogScopes.of("io.meshpilot.security.ca.SelfSignedCaStore").name());
        assertEquals("model", LogScopes.of("io.meshpilot.security.jwt.JwksCache").name());
        assertEquals("grpc", LogScopes.of("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler").name());
        // a prefix matches whole name segments only
        assertEquals(LogScopes.DEFAULT, LogScopes.of("io.meshpilot.xdsextra.Foo").name());
        assertEquals(LogScopes.DEFAULT, LogScopes.of("io.meshpilot.startup").name());
        assertEquals(LogScopes.DEFAULT, LogScopes.of("io.helidon.webserver.LoomServer").name());
    }
}
