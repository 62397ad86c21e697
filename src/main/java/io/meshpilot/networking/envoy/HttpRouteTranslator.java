package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.RuntimeFractionalPercent;
import io.envoyproxy.envoy.config.route.v3.Decorator;
import io.envoyproxy.envoy.config.route.v3.DirectResponseAction;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.QueryParameterMatcher;
import io.envoyproxy.envoy.config.route.v3.RedirectAction;
import io.envoyproxy.envoy.config.route.v3.RetryPolicy;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.common.fault.v3.FaultDelay;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.CorsPolicy;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.FaultAbort;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatchAndSubstitute;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.v3.FractionalPercent;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.HTTPFaultInjection;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRedirect;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.Percent;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.config.Config;
import io.meshpilot.config.RouteSemantics;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.ConsistentHashing;
import io.meshpilot.networking.grpcgen.GrpcStatus;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.Optional;
import java.util.TreeMap;

/**
 * VirtualService HTTP routes as Envoy routes, the way istiod's route package translates them
 * for sidecars: match, destinations (one cluster or weighted clusters), redirect, direct
 * response, rewrite, timeout, retries (istiod's default policy unless the route says
 * otherwise), fault and CORS as per-filter config, mirrors, header operations.
 */
public final class HttpRouteTranslator {
    public static final String FAULT_FILTER = "envoy.filters.http.fault";
    public static final String CORS_FILTER = "envoy.filters.http.cors";
    public static final String PREVIOUS_HOSTS_PREDICATE = "envoy.retry_host_predicates.previous_hosts";
    /** istiod's retry_on for its default policy. */
    public static final String DEFAULT_RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
    static final Duration NO_TIMEOUT = Duration.getDefaultInstance();

    private HttpRouteTranslator() {
    }

    /**
     * Where a route is being built: the listener port, the VirtualService's namespace (short
     * destination hosts resolve there), the proxy's namespace and labels (null: unknown, so
     * {@code sourceLabels} are not evaluated), and the mesh's default retry policy (null: none).
     */
    public record Context(int port, String vsNamespace, String vsName, String proxyNamespace,
                          Map<String, String> proxyLabels, String domainSuffix, HTTPRetry meshRetry,
                          String gateway, PushContext push, boolean gatewaySemantics) {
        /** For sidecars: matches naming gateways apply only if they name {@code mesh}. */
        public Context(int port, String vsNamespace, String vsName, String proxyNamespace,
                       Map<String, String> proxyLabels, String domainSuffix, HTTPRetry meshRetry) {
            this(port, vsNamespace, vsName, proxyNamespace, proxyLabels, domainSuffix, meshRetry,
                    PushContext.MESH_GATEWAY, null);
        }

        /**
         * @param gateway {@link PushContext#MESH_GATEWAY} for sidecars, else the gateway's
         *                {@code namespace/name}: a match naming gateways applies only if it names this one
         * @param push    to find a destination's only port when the destination names none (may be null)
         */
        public Context(int port, String vsNamespace, String vsName, String proxyNamespace,
                       Map<String, String> proxyLabels, String domainSuffix, HTTPRetry meshRetry, String gateway,
                       PushContext push) {
            this(port, vsNamespace, vsName, proxyNamespace, proxyLabels, domainSuffix, meshRetry, gateway, push, false);
        }

        /**
         * The context of {@code vs}'s routes: with {@link RouteSemantics#GATEWAY} (generated from Gateway API
         * routes) its routes follow the Gateway API's rules ({@link #translate}).
         */
        public Context forVirtualService(Config vs) {
            return new Context(port, vsNamespace, vsName, proxyNamespace, proxyLabels, domainSuffix, meshRetry, gateway,
                    push, RouteSemantics.gatewayApi(vs));
        }
    }

    /**
     * The Envoy routes of one VirtualService for {@code ctx.port()}; routes whose match does not
     * apply to this port, gateway or source are left out, and nothing after a catch-all route.
     */
    public static List<Route> routes(List<HTTPRoute> http, Context ctx) {
        // a route delegating to another VirtualService stands for that one's routes, translated where it lives
        List<DelegateRoutes.Expanded> expanded = new ArrayList<>();
        for (HTTPRoute r : http) {
            if (r.hasDelegate()) {
                expanded.addAll(DelegateRoutes.expand(r, ctx.vsNamespace(), ctx.vsName(), ctx.push()));
            } else {
                expanded.add(new DelegateRoutes.Expanded(r, null));
            }
        }
        List<Route> out = new ArrayList<>();
        for (DelegateRoutes.Expanded e : expanded) {
            HTTPRoute r = e.route();
            Context rctx = e.from() == null ? ctx : new Context(ctx.port(), e.from().namespace(), e.from().name(),
                    ctx.proxyNamespace(), ctx.proxyLabels(), ctx.domainSuffix(), ctx.meshRetry(), ctx.gateway(),
                    ctx.push(), ctx.gatewaySemantics());
            boolean catchAll = false;
            if (r.getMatchCount() == 0) {
                Route route = translate(r, null, rctx);
                if (route != null) {
                    out.add(route);
                }
                catchAll = true;
            } else {
                for (HTTPMatchRequest m : r.getMatchList()) {
                    Route route = translate(r, m, rctx);
                    if (route != null) {
                        out.add(route);
                        if (isCatchAll(route)) {
                            catchAll = true;
                            break;
                        }
                    }
                }
            }
            if (catchAll) {
                break;
            }
        }
        return out;
    }

    /**
     * istiod's ingress and gateway semantics (TranslateRouteMatch): a prefix other than {@code /}
     * matches whole path segments ({@code /cart} and {@code /cart/} match {@code /cart/x}, not
     * {@code /carts}), as the Ingress and Gateway APIs define a prefix.
     */
    static RouteMatch pathSeparatedPrefix(RouteMatch m) {
        if (m.getPathSpecifierCase() != RouteMatch.PathSpecifierCase.PREFIX || m.getPrefix().equals("/")) {
            return m;
        }
        String prefix = m.getPrefix();
        String path = prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
        return m.toBuilder().setPathSeparatedPrefix(path).build();
    }

    /** istiod's catch-all: prefix "/" (or regex ".*") with no header or query parameter condition. */
    public static boolean isCatchAll(Route r) {
        RouteMatch m = r.getMatch();
        boolean all = switch (m.getPathSpecifierCase()) {
            case PREFIX -> m.getPrefix().equals("/");
            case PATH_SEPARATED_PREFIX -> m.getPathSeparatedPrefix().equals("/");
            case SAFE_REGEX -> m.getSafeRegex().getRegex().equals(".*");
            default -> false;
        };
        return all && m.getHeadersCount() == 0 && m.getQueryParametersCount() == 0 && m.getDynamicMetadataCount() == 0;
    }

    static boolean sourceMatches(HTTPMatchRequest m, Context ctx) {
        if (m == null) {
            return true;
        }
        if (m.getGatewaysCount() > 0) {
            boolean named = false;
            for (String g : m.getGatewaysList()) {
                // short gateway names in a VirtualService are relative to its namespace
                String full = g.equals(PushContext.MESH_GATEWAY) || g.contains("/") ? g : ctx.vsNamespace() + "/" + g;
                named |= full.equals(ctx.gateway());
            }
            if (!named) {
                return false;
            }
        }
        // sourceLabels need the proxy's labels; when the caller does not know them they are not evaluated
        if (ctx.proxyLabels() != null
                && !LabelSelector.subsetOf(m.getSourceLabelsMap(), ctx.proxyLabels())) {
            return false;
        }
        return m.getSourceNamespace().isEmpty() || m.getSourceNamespace().equals(ctx.proxyNamespace());
    }

    static Route translate(HTTPRoute in, HTTPMatchRequest m, Context ctx) {
        if (m != null && m.getPort() != 0 && m.getPort() != ctx.port()) {
            return null;
        }
        if (!sourceMatches(m, ctx)) {
            return null;
        }
        String name = in.getName();
        if (m != null && !m.getName().isEmpty()) {
            name = name + "." + m.getName();
        }
        RouteMatch match = routeMatch(m);
        Route.Builder out = Route.newBuilder().setName(name)
                .setMatch(ctx.gatewaySemantics() ? pathSeparatedPrefix(match) : match);
        if (m != null && !m.getStatPrefix().isEmpty()) {
            out.setStatPrefix(m.getStatPrefix());
        }
        String authority = "";
        if (in.hasHeaders()) {
            authority = applyHeaders(in.getHeaders(), out);
        }
        if (in.hasRedirect()) {
            RedirectAction redirect = redirect(in.getRedirect(), ctx.port());
            if (redirect == null) {
                return null; // unsupported redirect code: istiod leaves the route without an action
            }
            out.setRedirect(redirect);
        } else if (in.hasDirectResponse()) {
            DirectResponseAction.Builder dr = DirectResponseAction.newBuilder().setStatus(in.getDirectResponse().getStatus());
            var body = in.getDirectResponse().getBody();
            switch (body.getSpecifierCase()) {
                case STRING -> dr.setBody(DataSource.newBuilder().setInlineString(body.getString()));
                case BYTES -> dr.setBody(DataSource.newBuilder().setInlineBytes(body.getBytes()));
                default -> {
                }
            }
            out.setDirectResponse(dr);
        } else {
            out.setRoute(action(in, authority, out, ctx));
        }
        out.setDecorator(Decorator.newBuilder().setOperation(operation(out, ctx)));
        if (in.hasFault()) {
            HTTPFault fault = fault(in.getFault());
            if (fault != null) {
                out.putTypedPerFilterConfig(FAULT_FILTER, Any.pack(fault));
            }
        }
        if (in.hasCorsPolicy()) {
            out.putTypedPerFilterConfig(CORS_FILTER, Any.pack(cors(in.getCorsPolicy())));
        }
        return out.build();
    }

    private static RouteAction.Builder action(HTTPRoute in, String authority, Route.Builder out, Context ctx) {
        RouteAction.Builder action = RouteAction.newBuilder();
        Duration timeout = in.hasTimeout() ? in.getTimeout() : NO_TIMEOUT;
        action.setTimeout(timeout).setMaxGrpcTimeout(timeout);
        if (ctx.gatewaySemantics()) {
            // the Gateway API answers a backend that does not exist with 500 (istiod's route.go)
            action.setClusterNotFoundResponseCode(RouteAction.ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR);
        }
        if (in.hasRewrite()) {
            var rw = in.getRewrite();
            if (rw.hasUriRegexRewrite()) {
                action.setRegexRewrite(RegexMatchAndSubstitute.newBuilder()
                        .setPattern(RegexMatcher.newBuilder().setRegex(rw.getUriRegexRewrite().getMatch()))
                        .setSubstitution(rw.getUriRegexRewrite().getRewrite()));
            } else if (ctx.gatewaySemantics() && rw.getUri().equals("/")) {
                // ReplacePrefixMatch "/": the matched prefix is removed, keeping one "/" (istiod's route.go)
                action.setRegexRewrite(RegexMatchAndSubstitute.newBuilder()
                        .setPattern(RegexMatcher.newBuilder()
                                .setRegex("^" + Pattern.quote(out.getMatch().getPathSeparatedPrefix()) + "(/?)(.*)"))
                        .setSubstitution("/\\2"));
            } else if (!rw.getUri().isEmpty()) {
                action.setPrefixRewrite(rw.getUri());
            }
            if (!rw.getAuthority().isEmpty()) {
                authority = rw.getAuthority();
            }
        }
        if (!authority.isEmpty()) {
            action.setHostRewriteLiteral(authority);
        }
        if (in.hasMirror()) {
            FractionalPercent p = mirrorPercent(in);
            if (p != null) {
                action.addRequestMirrorPolicies(mirror(in.getMirror(), p, ctx));
            }
        }
        for (var mirror : in.getMirrorsList()) {
            FractionalPercent p = mirror.hasPercentage() ? positive(mirror.getPercentage()) : hundred(100);
            if (p != null && mirror.hasDestination()) {
                action.addRequestMirrorPolicies(mirror(mirror.getDestination(), p, ctx));
            }
        }
        boolean consistentHash = false;
        if (in.getRouteCount() == 1) {
            HTTPRouteDestination d = in.getRoute(0);
            action.setCluster(cluster(d.getDestination(), ctx));
            Optional<RouteAction.HashPolicy> hash = hashPolicy(d.getDestination(), ctx);
            hash.ifPresent(action::addHashPolicy);
            consistentHash = hash.isPresent();
            if (d.hasHeaders()) {
                String a = applyHeaders(d.getHeaders(), out);
                if (!a.isEmpty() && !action.hasHostRewriteLiteral()) {
                    action.setHostRewriteLiteral(a);
                }
            }
        } else if (in.getRouteCount() > 1) {
            WeightedCluster.Builder wc = WeightedCluster.newBuilder();
            for (HTTPRouteDestination d : in.getRouteList()) {
                if (d.getWeight() == 0) {
                    continue; // istiod drops zero weights when there are other destinations
                }
                WeightedCluster.ClusterWeight.Builder cw = WeightedCluster.ClusterWeight.newBuilder()
                        .setName(cluster(d.getDestination(), ctx)).setWeight(UInt32Value.of(d.getWeight()));
                if (d.hasHeaders()) {
                    HeaderOps ops = headerOps(d.getHeaders());
                    cw.addAllRequestHeadersToAdd(ops.requestAdd).addAllRequestHeadersToRemove(ops.requestRemove)
                            .addAllResponseHeadersToAdd(ops.responseAdd).addAllResponseHeadersToRemove(ops.responseRemove);
                    if (!ops.authority.isEmpty()) {
                        cw.setHostRewriteLiteral(ops.authority);
                    }
                }
                wc.addClusters(cw);
                hashPolicy(d.getDestination(), ctx).ifPresent(action::addHashPolicy);
            }
            action.setWeightedClusters(wc);
        }
        RetryPolicy retry = retryPolicy(in.hasRetries() ? in.getRetries() : ctx.meshRetry(), consistentHash);
        if (retry != null) {
            action.setRetryPolicy(retry);
        }
        return action;
    }

    /** The hash policy of the destination's DestinationRule (istiod's LookupHash), when the context has a push. */
    private static Optional<RouteAction.HashPolicy> hashPolicy(Destination d, Context ctx) {
        if (ctx.push() == null) {
            return Optional.empty();
        }
        String host = PushContext.resolve(d.getHost(), ctx.vsNamespace(), ctx.domainSuffix());
        return ConsistentHashing.hashPolicy(ConsistentHashing.forDestination(ctx.push(),
                ProxyScope.of(ctx.proxyNamespace()), host, d.getSubset(), d.hasPort() ? d.getPort().getNumber() : 0));
    }

    /** istiod's cluster for a destination: its port, else the listener port. */
    static String cluster(Destination d, Context ctx) {
        String host = PushContext.resolve(d.getHost(), ctx.vsNamespace(), ctx.domainSuffix());
        int port = d.hasPort() ? d.getPort().getNumber() : ctx.port();
        if (!d.hasPort() && ctx.push() != null) {
            // istiod's GetDestinationCluster: a service with a single port is reached on that port
            var only = ctx.push().service(host).filter(s -> s.ports().size() == 1);
            if (only.isPresent()) {
                port = only.get().ports().get(0).port();
            }
        }
        return ClusterNames.outbound(port, d.getSubset(), host);
    }

    private static RouteAction.RequestMirrorPolicy mirror(Destination d, FractionalPercent p, Context ctx) {
        return RouteAction.RequestMirrorPolicy.newBuilder().setCluster(cluster(d, ctx))
                .setRuntimeFraction(RuntimeFractionalPercent.newBuilder().setDefaultValue(p))
                .setTraceSampled(BoolValue.of(false)).build();
    }

    @SuppressWarnings("deprecation")
    private static FractionalPercent mirrorPercent(HTTPRoute in) {
        if (in.hasMirrorPercentage()) {
            return positive(in.getMirrorPercentage());
        }
        if (in.hasMirrorPercent()) {
            return in.getMirrorPercent().getValue() > 0 ? hundred(in.getMirrorPercent().getValue()) : null;
        }
        return hundred(100);
    }

    private static FractionalPercent positive(Percent p) {
        return p.getValue() > 0 ? million(p.getValue()) : null;
    }

    /** Istio's percent (0-100, fractional) as Envoy's per-million fraction, truncated as istiod does. */
    public static FractionalPercent million(double percent) {
        return FractionalPercent.newBuilder().setNumerator((int) (percent * 10_000))
                .setDenominator(FractionalPercent.DenominatorType.MILLION).build();
    }

    static FractionalPercent hundred(int percent) {
        return FractionalPercent.newBuilder().setNumerator(percent)
                .setDenominator(FractionalPercent.DenominatorType.HUNDRED).build();
    }

    /**
     * istiod's retry conversion: no policy means the default (2 retries on connect-failure,
     * refused-stream, unavailable, cancelled and 503, another host on each retry, 5 host
     * selection attempts); attempts 0 disables retries; else the default with the route's
     * attempts, retryOn (numbers become retriable status codes), perTryTimeout, backoff.
     */
    public static RetryPolicy retryPolicy(HTTPRetry in) {
        return retryPolicy(in, false);
    }

    /**
     * @param consistentHash the route hashes to one destination: a retry may go to the same host
     *                       (unless {@code retryIgnorePreviousHosts} asks otherwise), or the
     *                       affinity the hash gives would break on every retry (istiod's
     *                       ConvertPolicy with hashPolicy)
     */
    static RetryPolicy retryPolicy(HTTPRetry in, boolean consistentHash) {
        RetryPolicy.Builder out = RetryPolicy.newBuilder().setNumRetries(UInt32Value.of(2)).setRetryOn(DEFAULT_RETRY_ON)
                .setHostSelectionRetryMaxAttempts(5).addRetriableStatusCodes(503);
        if (!consistentHash) {
            out.addRetryHostPredicate(previousHosts());
        }
        if (in == null) {
            return out.build();
        }
        if (in.getAttempts() <= 0) {
            return null;
        }
        out.setNumRetries(UInt32Value.of(in.getAttempts()));
        if (!in.getRetryOn().isEmpty()) {
            List<String> on = new ArrayList<>();
            List<Integer> codes = new ArrayList<>();
            for (String part : in.getRetryOn().split(",")) {
                String p = part.trim();
                if (p.isEmpty()) {
                    continue;
                }
                Integer code = statusCode(p);
                if (code != null) {
                    codes.add(code);
                } else {
                    on.add(p);
                }
            }
            String retryOn = String.join(",", on);
            if (!codes.isEmpty() && !retryOn.contains("retriable-status-codes")) {
                retryOn = retryOn.isEmpty() ? "retriable-status-codes" : retryOn + ",retriable-status-codes";
            }
            out.setRetryOn(retryOn).clearRetriableStatusCodes().addAllRetriableStatusCodes(codes);
        }
        if (in.hasPerTryTimeout()) {
            out.setPerTryTimeout(in.getPerTryTimeout());
        }
        if (in.hasRetryIgnorePreviousHosts()) {
            out.clearRetryHostPredicate();
            if (in.getRetryIgnorePreviousHosts().getValue()) {
                out.addRetryHostPredicate(previousHosts());
            }
        }
        if (in.hasBackoff()) {
            out.setRetryBackOff(RetryPolicy.RetryBackOff.newBuilder().setBaseInterval(in.getBackoff()));
        }
        return out.build();
    }

    private static RetryPolicy.RetryHostPredicate previousHosts() {
        return RetryPolicy.RetryHostPredicate.newBuilder().setName(PREVIOUS_HOSTS_PREDICATE)
                .setTypedConfig(Any.pack(PreviousHostsPredicate.getDefaultInstance())).build();
    }

    /** A retryOn part that is an HTTP status code Go's http.StatusText knows (1xx-5xx, roughly). */
    private static Integer statusCode(String s) {
        try {
            int i = Integer.parseInt(s);
            return i >= 100 && i <= 599 ? i : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** istiod's TranslateRouteMatch (sidecar semantics: plain prefixes). */
    public static RouteMatch routeMatch(HTTPMatchRequest in) {
        RouteMatch.Builder out = RouteMatch.newBuilder().setPrefix("/");
        if (in == null) {
            return out.build();
        }
        List<HeaderMatcher> headers = new ArrayList<>();
        in.getHeadersMap().forEach((k, v) -> headers.add(headerMatcher(k, v)));
        in.getWithoutHeadersMap().forEach((k, v) -> {
            HeaderMatcher.Builder h = headerMatcher(k, v).toBuilder().setInvertMatch(true);
            if (!presentMatch(v)) {
                h.setTreatMissingHeaderAsEmpty(true);
            }
            headers.add(h.build());
        });
        headers.sort(Comparator.comparing(HeaderMatcher::getName));
        out.addAllHeaders(headers);
        switch (in.getUri().getMatchTypeCase()) {
            case EXACT -> out.setPath(in.getUri().getExact());
            case PREFIX -> out.setPrefix(in.getUri().getPrefix());
            case REGEX -> out.setSafeRegex(RegexMatcher.newBuilder().setRegex(in.getUri().getRegex()));
            default -> {
            }
        }
        out.setCaseSensitive(BoolValue.of(!in.getIgnoreUriCase()));
        if (in.hasMethod()) {
            out.addHeaders(headerMatcher(":method", in.getMethod()));
        }
        if (in.hasAuthority()) {
            out.addHeaders(headerMatcher(":authority", in.getAuthority()));
        }
        if (in.hasScheme()) {
            out.addHeaders(headerMatcher(":scheme", in.getScheme()));
        }
        new TreeMap<>(in.getQueryParamsMap()).forEach((k, v) -> {
            QueryParameterMatcher.Builder q = QueryParameterMatcher.newBuilder().setName(k);
            if (presentMatch(v)) {
                q.setPresentMatch(true);
            } else {
                q.setStringMatch(stringMatcher(v));
            }
            out.addQueryParameters(q);
        });
        return out.build();
    }

    /** Empty matches and the regex "*" mean "present", as in istiod. */
    static boolean presentMatch(StringMatch m) {
        return m == null || m.getMatchTypeCase() == StringMatch.MatchTypeCase.MATCHTYPE_NOT_SET
                || m.getMatchTypeCase() == StringMatch.MatchTypeCase.REGEX && m.getRegex().equals("*");
    }

    static HeaderMatcher headerMatcher(String name, StringMatch m) {
        HeaderMatcher.Builder h = HeaderMatcher.newBuilder().setName(name);
        if (presentMatch(m)) {
            h.setPresentMatch(true);
        } else {
            h.setStringMatch(stringMatcher(m));
        }
        return h.build();
    }

    /** Istio's StringMatch as Envoy's; an unset match is a prefix "" (matches anything). */
    public static StringMatcher stringMatcher(StringMatch s) {
        return switch (s.getMatchTypeCase()) {
            case EXACT -> StringMatcher.newBuilder().setExact(s.getExact()).build();
            case PREFIX -> StringMatcher.newBuilder().setPrefix(s.getPrefix()).build();
            case REGEX -> StringMatcher.newBuilder().setSafeRegex(RegexMatcher.newBuilder().setRegex(s.getRegex())).build();
            default -> StringMatcher.newBuilder().setPrefix("").build();
        };
    }

    private static RedirectAction redirect(HTTPRedirect r, int port) {
        RedirectAction.Builder b = RedirectAction.newBuilder().setHostRedirect(r.getAuthority()).setPathRedirect(r.getUri());
        if (!r.getScheme().isEmpty()) {
            b.setSchemeRedirect(r.getScheme());
        }
        if (r.getRedirectPortCase() != HTTPRedirect.RedirectPortCase.REDIRECTPORT_NOT_SET) {
            int p = 0;
            if (r.getRedirectPortCase() == HTTPRedirect.RedirectPortCase.PORT) {
                p = r.getPort();
            } else if (r.getDerivePort() == HTTPRedirect.RedirectPortSelection.FROM_REQUEST_PORT) {
                p = port;
            }
            String scheme = r.getScheme().isEmpty() ? "http" : r.getScheme(); // sidecars never terminate TLS
            if (p == 80 && scheme.equals("http") || p == 443 && scheme.equals("https")) {
                p = 0;
            }
            b.setPortRedirect(p);
        }
        RedirectAction.RedirectResponseCode code = switch (r.getRedirectCode()) {
            case 0, 301 -> RedirectAction.RedirectResponseCode.MOVED_PERMANENTLY;
            case 302 -> RedirectAction.RedirectResponseCode.FOUND;
            case 303 -> RedirectAction.RedirectResponseCode.SEE_OTHER;
            case 307 -> RedirectAction.RedirectResponseCode.TEMPORARY_REDIRECT;
            case 308 -> RedirectAction.RedirectResponseCode.PERMANENT_REDIRECT;
            default -> null;
        };
        return code == null ? null : b.setResponseCode(code).build();
    }

    /** The request and response header operations of {@code h}; the authority to rewrite to, or "". */
    private record HeaderOps(List<HeaderValueOption> requestAdd, List<String> requestRemove,
                             List<HeaderValueOption> responseAdd, List<String> responseRemove, String authority) {
    }

    private static HeaderOps headerOps(Headers h) {
        var req = h.getRequest();
        var resp = h.getResponse();
        List<HeaderValueOption> reqAdd = new ArrayList<>(headerValues(req.getSetMap(), false));
        reqAdd.addAll(headerValues(req.getAddMap(), true));
        List<HeaderValueOption> respAdd = new ArrayList<>(headerValues(resp.getSetMap(), false));
        respAdd.addAll(headerValues(resp.getAddMap(), true));
        String authority = authority(req.getSetMap());
        if (authority.isEmpty()) {
            authority = authority(req.getAddMap());
        }
        return new HeaderOps(reqAdd, dropInternal(req.getRemoveList()), respAdd, dropInternal(resp.getRemoveList()),
                authority);
    }

    private static String applyHeaders(Headers h, Route.Builder out) {
        HeaderOps ops = headerOps(h);
        out.addAllRequestHeadersToAdd(ops.requestAdd).addAllRequestHeadersToRemove(ops.requestRemove)
                .addAllResponseHeadersToAdd(ops.responseAdd).addAllResponseHeadersToRemove(ops.responseRemove);
        return ops.authority;
    }

    private static boolean internal(String key) {
        return key.startsWith(":") || key.equalsIgnoreCase("host");
    }

    private static String authority(Map<String, String> headers) {
        String a = "";
        for (var e : new TreeMap<>(headers).entrySet()) {
            if (e.getKey().equalsIgnoreCase(":authority") || e.getKey().equalsIgnoreCase("host")) {
                a = e.getValue();
            }
        }
        return a;
    }

    private static List<String> dropInternal(List<String> keys) {
        return keys.stream().filter(k -> !internal(k)).toList();
    }

    /** set: overwrite or add; add: append or add; sorted by name; pseudo headers and Host left out. */
    private static List<HeaderValueOption> headerValues(Map<String, String> headers, boolean append) {
        List<HeaderValueOption> out = new ArrayList<>();
        new TreeMap<>(headers).forEach((k, v) -> {
            if (!internal(k)) {
                out.add(HeaderValueOption.newBuilder().setHeader(HeaderValue.newBuilder().setKey(k).setValue(v))
                        .setAppendAction(append ? HeaderValueOption.HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD
                                : HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD).build());
            }
        });
        return out;
    }

    /** istiod's fault translation; null when neither a usable delay nor abort remains. */
    @SuppressWarnings("deprecation")
    public static HTTPFault fault(HTTPFaultInjection in) {
        HTTPFault.Builder out = HTTPFault.newBuilder();
        if (in.hasDelay() && in.getDelay().hasFixedDelay()) {
            var d = in.getDelay();
            out.setDelay(FaultDelay.newBuilder().setFixedDelay(d.getFixedDelay())
                    .setPercentage(d.hasPercentage() ? million(d.getPercentage().getValue()) : hundred(d.getPercent())));
        }
        if (in.hasAbort()) {
            var a = in.getAbort();
            FaultAbort.Builder abort = FaultAbort.newBuilder();
            if (a.hasPercentage()) {
                abort.setPercentage(million(a.getPercentage().getValue()));
            }
            switch (a.getErrorTypeCase()) {
                case HTTP_STATUS -> out.setAbort(abort.setHttpStatus(a.getHttpStatus()));
                case GRPC_STATUS -> out.setAbort(abort.setGrpcStatus(GrpcStatus.code(a.getGrpcStatus())));
                default -> {
                } // http2_error is not supported by istiod either
            }
        }
        return out.hasDelay() || out.hasAbort() ? out.build() : null;
    }

    /** istiod's CORS translation (per-route CorsPolicy of envoy.filters.http.cors). */
    @SuppressWarnings("deprecation")
    public static CorsPolicy cors(io.meshpilot.api.networking.v1alpha3.CorsPolicy in) {
        CorsPolicy.Builder out = CorsPolicy.newBuilder().setForwardNotMatchingPreflights(BoolValue.of(
                in.getUnmatchedPreflights() != io.meshpilot.api.networking.v1alpha3.CorsPolicy.UnmatchedPreflights.IGNORE));
        if (in.getAllowOriginsCount() > 0) {
            for (StringMatch m : in.getAllowOriginsList()) {
                if (m.getMatchTypeCase() != StringMatch.MatchTypeCase.MATCHTYPE_NOT_SET) {
                    out.addAllowOriginStringMatch(stringMatcher(m));
                }
            }
        } else {
            for (String o : in.getAllowOriginList()) {
                out.addAllowOriginStringMatch(StringMatcher.newBuilder().setExact(o));
            }
        }
        out.setFilterEnabled(RuntimeFractionalPercent.newBuilder().setDefaultValue(hundred(100)));
        if (in.hasAllowCredentials()) {
            out.setAllowCredentials(in.getAllowCredentials());
        }
        out.setAllowHeaders(String.join(",", in.getAllowHeadersList()))
                .setAllowMethods(String.join(",", in.getAllowMethodsList()))
                .setExposeHeaders(String.join(",", in.getExposeHeadersList()));
        if (in.hasMaxAge()) {
            out.setMaxAge(Long.toString(in.getMaxAge().getSeconds()));
        }
        return out.build();
    }

    /** istiod's trace operation: {@code host:port/path} for one cluster, else {@code vsName:port/path}. */
    private static String operation(Route.Builder r, Context ctx) {
        RouteMatch m = r.getMatch();
        String path = switch (m.getPathSpecifierCase()) {
            case PREFIX -> m.getPrefix() + "*";
            case PATH -> m.getPath();
            case SAFE_REGEX -> m.getSafeRegex().getRegex();
            default -> "/*";
        };
        if (r.hasRoute() && r.getRoute().hasCluster()) {
            ClusterNames.Outbound c = ClusterNames.parseOutbound(r.getRoute().getCluster());
            if (c != null) {
                return c.host() + ":" + c.port() + path;
            }
        }
        return ctx.vsName() + ":" + ctx.port() + path;
    }
}
