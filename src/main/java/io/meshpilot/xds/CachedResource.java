package io.meshpilot.xds;

/**
 * One generated resource held by the XDS cache, for {@code /debug/cachez}: its type URL, its
 * name, and its serialized size in bytes.
 */
public record CachedResource(String typeUrl, String name, int bytes) {
}
