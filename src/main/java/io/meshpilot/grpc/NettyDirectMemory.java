package io.meshpilot.grpc;

import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import io.meshpilot.monitoring.IstioGauge;

/**
 * {@code meshpilot_grpc_netty_direct_memory_bytes} (ours; istiod's Go runtime has no such
 * memory): the direct memory grpc-java's Netty holds for the gRPC ports, the part of a slow
 * fleet's queued responses that the heap gauges do not show.
 *
 * <p>The value is Netty's own count, {@code PlatformDependent.usedDirectMemory()}: the counter
 * that Netty checks against its limit and that throws {@code OutOfDirectMemoryError} when full,
 * so it is what ran out in issue 34's 10,000-proxy run. The JVM's {@code direct} buffer pool
 * (the JVM series Micrometer would export) misses it: on JDK 25 without
 * {@code --sun-misc-unsafe-memory-access=allow}, Netty 4.2 allocates through {@code
 * java.lang.foreign} and the pool showed 1 byte while Netty held 100 MiB; grpc-java's own
 * pooled allocator, whose public metric would count the same, is not reachable from outside its
 * package. Netty reports -1 when it keeps no count; the Netty grpc-netty-shaded 1.85.1 bundles
 * (4.2.17) counted with and without Unsafe and with {@code -Dio.netty.maxDirectMemory=0}.
 */
public final class NettyDirectMemory {
    public static final String GAUGE = "meshpilot_grpc_netty_direct_memory_bytes";

    private NettyDirectMemory() {
    }

    /** Registered with the other meters once the registry is up. */
    public static void registerGauge() {
        IstioGauge.register(GAUGE, "Direct memory held by grpc-java's Netty buffers (Netty's own count, which its "
                + "OutOfDirectMemoryError enforces).", PlatformDependent::usedDirectMemory);
    }
}
