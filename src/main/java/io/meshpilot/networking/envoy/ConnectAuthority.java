package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.SubstitutionFormatString;
import io.envoyproxy.envoy.extensions.filters.common.set_filter_state.v3.FilterStateValue;
import io.envoyproxy.envoy.extensions.filters.http.set_filter_state.v3.Config;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;

/**
 * istiod's {@code connect_authority} filters (pilot/pkg/xds/filters): what HBONE termination
 * hands to the inner connection as filter state, above all the CONNECT authority (the inner
 * destination) as the original destination {@code main_internal}'s original_dst filter reads.
 */
final class ConnectAuthority {
    static final String NAME = "connect_authority";
    /** istiod's OriginalDstFilterStateKey and AuthorityFilterStateKey. */
    static final String ORIGINAL_DST_LOCAL_IP = "envoy.filters.listener.original_dst.local_ip";
    static final String AUTHORITY_KEY = "io.istio.connect_authority";

    private ConnectAuthority() {
    }

    /**
     * istiod's ConnectAuthorityFilter: the authority as original destination and as authority
     * (for hostname matching), the peer's address and both identities, each shared once with the
     * upstream (main_internal).
     */
    static HttpFilter httpFilter() {
        Config config = Config.newBuilder()
                .addOnRequestHeaders(filterState(ORIGINAL_DST_LOCAL_IP, "%REQ(:AUTHORITY)%", ""))
                .addOnRequestHeaders(filterState(AUTHORITY_KEY, "%REQ(:AUTHORITY)%", "istio.hashable_string"))
                .addOnRequestHeaders(filterState("envoy.filters.listener.original_dst.remote_ip",
                        "%DOWNSTREAM_REMOTE_ADDRESS%", ""))
                .addOnRequestHeaders(filterState("io.istio.peer_principal", "%DOWNSTREAM_PEER_URI_SAN%", "envoy.string"))
                .addOnRequestHeaders(filterState("io.istio.local_principal", "%DOWNSTREAM_LOCAL_URI_SAN%", "envoy.string"))
                .build();
        return HttpFilter.newBuilder().setName(NAME).setTypedConfig(Any.pack(config)).build();
    }

    /** One filter state value from a format string, shared once with the upstream; {@code factory} may be empty. */
    static FilterStateValue filterState(String key, String format, String factory) {
        return FilterStateValue.newBuilder().setObjectKey(key).setFactoryKey(factory)
                .setFormatString(SubstitutionFormatString.newBuilder().setTextFormatSource(
                        DataSource.newBuilder().setInlineString(format)))
                .setSharedWithUpstream(FilterStateValue.SharedWithUpstream.ONCE).build();
    }
}
