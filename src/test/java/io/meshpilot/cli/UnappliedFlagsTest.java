package io.meshpilot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** istiod's flags MeshPilot reads but does not apply are each named in a start-up line when given. */
class UnappliedFlagsTest {
    private static DiscoveryCommand parsed(String... flags) {
        String[] argv = new String[flags.length + 1];
        argv[0] = "discovery";
        System.arraycopy(flags, 0, argv, 1, flags.length);
        return (DiscoveryCommand) Main.commandLine().parseArgs(argv).subcommand().commandSpec().userObject();
    }

    @Test
    void eachNotAppliedFlagIsWarnedByNameWhenGiven() {
        List<String> lines = parsed("--cniNamespace", "kube-system", "--profile=false").unappliedFlags();
        for (String flag : DiscoveryCommand.READ_NOT_APPLIED) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(flag + " ")), flag + " in " + lines);
        }
        assertEquals(DiscoveryCommand.READ_NOT_APPLIED.size(), lines.size(), lines.toString());
    }

    @Test
    void nothingIsSaidWhenTheyAreLeftAtIstiodsDefaults() {
        assertEquals(List.of(), parsed().unappliedFlags());
        assertEquals(List.of(), parsed("--profile").unappliedFlags());
    }
}
