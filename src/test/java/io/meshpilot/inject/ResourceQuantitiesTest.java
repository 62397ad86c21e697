package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Resource quantities written into an injected pod in the form Kubernetes' API machinery
 * writes back (resource.Quantity's String), so the injected pod reads as istiod's; what is no
 * quantity is left as written for the API server to refuse with its own message.
 */
class ResourceQuantitiesTest {

    @ParameterizedTest
    @CsvSource({
            "2000m, 2", "100m, 100m", "0.1, 100m", "1.5, 1500m", "0.001, 1m", "1.0, 1",
            "1000, 1k", "1k, 1k", "1500k, 1500k", "1G, 1G", "12345678, 12345678", "-1, -1", "0, 0",
            "1024Mi, 1Gi", "128Mi, 128Mi", "2Gi, 2Gi", "1Ki, 1Ki", "1000Ki, 1000Ki", "0.5Ki, 512",
            "1e3, 1e3", "5e-3, 5e-3",
            // a fractional binary quantity that is a whole number of bytes keeps its binary suffix, as Go's
            "0.5Gi, 512Mi", "1.5Gi, 1536Mi", "1.0Gi, 1Gi", "2.5Mi, 2560Ki", "0m, 0", "0Gi, 0"})
    void quantitiesAreWrittenInKubernetesCanonicalForm(String written, String canonical) {
        assertEquals(canonical, ResourceQuantities.canonical(written));
    }

    @ParameterizedTest
    @ValueSource(strings = {"junk", "Mi", "", "1.5.5", "1Zi", "100 m"})
    void whatIsNoQuantityIsKeptAsWritten(String written) {
        assertEquals(written, ResourceQuantities.canonical(written));
    }
}
