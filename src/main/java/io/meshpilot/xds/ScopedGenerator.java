package io.meshpilot.xds;

import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;

/**
 * A generator whose state-of-the-world response depends only on the push, the names asked for
 * and a scope it names: one response is built per scope and shared by every proxy in it
 * ({@link SharedResponses}).
 */
interface ScopedGenerator extends Generator {
    /**
     * What, besides the push version, endpoint generation, names and wildcard, the response for
     * {@code proxy} depends on: two proxies with equal scopes get byte-identical responses. A
     * value compared by equals (a record where parts come from the proxy, so that no proxy's
     * values can spell another's scope).
     */
    Object responseScope(Proxy proxy, PushContext push, boolean wildcard);
}
