package io.meshpilot.config.kube.gateway.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.TextFormat;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** istiod's TestSortHTTPRoutes table (pilot/pkg/config/kube/gateway/conversion_test.go) against {@link RouteMerge#sorted}. */
class RouteMergeTest {
    static HTTPRoute match(String matchText) {
        HTTPRoute.Builder b = HTTPRoute.newBuilder();
        try {
            TextFormat.merge(matchText.isEmpty() ? "" : "match { " + matchText + " }", b);
        } catch (TextFormat.ParseException e) {
            throw new IllegalArgumentException(e);
        }
        return b.build();
    }

    static List<HTTPRoute> routes(String... matches) {
        return Stream.of(matches).map(RouteMergeTest::match).toList();
    }

    static Stream<Arguments> istiodCases() {
        String h1 = "headers { key: \"header1\" value { exact: \"value1\" } }";
        String h2 = h1 + " headers { key: \"header2\" value { exact: \"value2\" } }";
        String q1 = "query_params { key: \"param1\" value { exact: \"value1\" } }";
        String q2 = q1 + " query_params { key: \"param2\" value { exact: \"value2\" } }";
        String get = "method { exact: \"GET\" }";
        return Stream.of(
                Arguments.of("match is preferred over no match",
                        routes("", "uri { exact: \"/foo\" }"), routes("uri { exact: \"/foo\" }", "")),
                Arguments.of("path matching exact > prefix  > regex",
                        routes("uri { prefix: \"/\" }", "uri { regex: \".*foo\" }", "uri { exact: \"/foo\" }"),
                        routes("uri { exact: \"/foo\" }", "uri { prefix: \"/\" }", "uri { regex: \".*foo\" }")),
                Arguments.of("path prefix matching with largest characters",
                        routes("uri { prefix: \"/foo\" }", "uri { prefix: \"/\" }", "uri { prefix: \"/foobar\" }"),
                        routes("uri { prefix: \"/foobar\" }", "uri { prefix: \"/foo\" }", "uri { prefix: \"/\" }")),
                Arguments.of("path match is preferred over method match",
                        routes(get, "uri { prefix: \"/foobar\" }"), routes("uri { prefix: \"/foobar\" }", get)),
                Arguments.of("largest number of header matches is preferred", routes(h1, h2), routes(h2, h1)),
                Arguments.of("largest number of query params is preferred", routes(q1, q2), routes(q2, q1)),
                Arguments.of("path > method > header > query params",
                        routes("uri { prefix: \"/\" }", q1, get, "headers { key: \"param1\" value { exact: \"value1\" } }"),
                        routes("uri { prefix: \"/\" }", get, "headers { key: \"param1\" value { exact: \"value1\" } }", q1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("istiodCases")
    void sortsAsIstiodsTable(String name, List<HTTPRoute> in, List<HTTPRoute> expected) {
        assertEquals(expected, RouteMerge.sorted(in));
    }
}
