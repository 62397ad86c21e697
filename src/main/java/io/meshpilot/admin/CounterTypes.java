package io.meshpilot.admin;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.meshpilot.monitoring.IstioCounter;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * istiod's counters keep their names without {@code _total} (dashboards and alerts query
 * {@code pilot_xds_pushes}, not {@code pilot_xds_pushes_total}), which Helidon's counters
 * would add; {@link IstioCounter} therefore registers them as gauges. This filter restores
 * their type on the way out: in the Prometheus text format (0.0.4) a counter sample may carry
 * any name, so only the {@code # TYPE name gauge} line of each of istiod's counters becomes
 * {@code # TYPE name counter}. OpenMetrics output (which would require {@code _total}) is left
 * alone.
 */
final class CounterTypes implements Filter {
    private static final String METRICS = "/metrics";
    private static final byte[] TYPE = "# TYPE ".getBytes(StandardCharsets.US_ASCII);
    private static final String GAUGE = " gauge";
    private static final String APPLICATION_SCOPE = "mp_scope=\"application\"";

    private final Predicate<String> isCounter;

    CounterTypes(Predicate<String> isCounter) {
        this.isCounter = isCounter;
    }

    static CounterTypes forIstioCounters() {
        return new CounterTypes(IstioCounter::isCounter);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        String path = req.path().path();
        if (path.equals(METRICS) || path.startsWith(METRICS + "/")) {
            res.streamFilter(out -> new Rewriter(out, isCounter, () -> res.headers()
                    .first(HeaderNames.CONTENT_TYPE).orElse("")));
        }
        chain.proceed();
    }

    /** Copies the text line by line, retyping the counters' TYPE lines. */
    static final class Rewriter extends FilterOutputStream {
        private final Predicate<String> isCounter;
        private final Supplier<String> contentType;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        private Boolean plainText;

        Rewriter(OutputStream out, Predicate<String> isCounter, Supplier<String> contentType) {
            super(out);
            this.isCounter = isCounter;
            this.contentType = contentType;
        }

        private boolean plainText() {
            if (plainText == null) {
                plainText = !contentType.get().contains("openmetrics");
            }
            return plainText;
        }

        @Override
        public void write(int b) throws IOException {
            if (!plainText()) {
                out.write(b);
                return;
            }
            line.write(b);
            if (b == '\n') {
                flushLine();
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (!plainText()) {
                out.write(b, off, len);
                return;
            }
            int start = off;
            int end = off + len;
            for (int i = off; i < end; i++) {
                if (b[i] == '\n') {
                    line.write(b, start, i + 1 - start);
                    flushLine();
                    start = i + 1;
                }
            }
            line.write(b, start, end - start);
        }

        private void flushLine() throws IOException {
            byte[] bytes = line.toByteArray();
            line.reset();
            if (startsWithType(bytes)) {
                String text = new String(bytes, StandardCharsets.UTF_8);
                String body = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
                if (body.endsWith(GAUGE)) {
                    String name = body.substring(TYPE.length, body.length() - GAUGE.length());
                    if (isCounter.test(name)) {
                        out.write(("# TYPE " + name + " counter" + (text.endsWith("\n") ? "\n" : ""))
                                .getBytes(StandardCharsets.UTF_8));
                        return;
                    }
                }
            }
            if (bytes.length > 0 && bytes[0] != '#') {
                String text = new String(bytes, StandardCharsets.UTF_8);
                if (text.contains(APPLICATION_SCOPE)) {
                    out.write(withoutApplicationScope(text).getBytes(StandardCharsets.UTF_8));
                    return;
                }
            }
            out.write(bytes);
        }

        /**
         * Helidon MP tags every meter with its MicroProfile scope; istiod's series have no such
         * label, and a query or recording rule that matches label sets exactly would miss them.
         * Every istiod metric is in the application scope, so dropping that one value keeps
         * series distinct; the JVM's base and vendor metrics keep theirs.
         */
        static String withoutApplicationScope(String sample) {
            int open = sample.indexOf('{');
            if (open < 0 || !sample.contains(APPLICATION_SCOPE)) {
                return sample;
            }
            // label by label, values read as quoted strings: a value holding "{," or the scope's
            // text (a proxy's NACK message, say) stays as it is
            List<String> kept = new ArrayList<>();
            int i = open + 1;
            int n = sample.length();
            while (i < n && sample.charAt(i) != '}') {
                int eq = sample.indexOf('=', i);
                if (eq < 0 || eq + 1 >= n || sample.charAt(eq + 1) != '"') {
                    return sample; // not the text format: left alone
                }
                int j = eq + 2;
                while (j < n && sample.charAt(j) != '"') {
                    j += sample.charAt(j) == '\\' ? 2 : 1;
                }
                if (j >= n) {
                    return sample;
                }
                String label = sample.substring(i, j + 1);
                if (!label.equals(APPLICATION_SCOPE)) {
                    kept.add(label);
                }
                i = j + 1;
                if (i < n && sample.charAt(i) == ',') {
                    i++;
                }
            }
            if (i >= n) {
                return sample;
            }
            String labels = kept.isEmpty() ? "" : "{" + String.join(",", kept) + "}";
            return sample.substring(0, open) + labels + sample.substring(i + 1);
        }

        private static boolean startsWithType(byte[] bytes) {
            if (bytes.length < TYPE.length) {
                return false;
            }
            for (int i = 0; i < TYPE.length; i++) {
                if (bytes[i] != TYPE[i]) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            if (line.size() > 0) {
                flushLine();
            }
            super.close();
        }
    }
}
