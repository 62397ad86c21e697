package io.meshpilot.networking.grpcgen;

import java.util.Locale;

/** gRPC status names (Istio's abort.grpcStatus, e.g. "UNAVAILABLE") to their codes. */
public final class GrpcStatus {
    private GrpcStatus() {
    }

    public static int code(String name) {
        try {
            return io.grpc.Status.Code.valueOf(name.toUpperCase(Locale.ROOT)).value();
        } catch (IllegalArgumentException e) {
            try {
                return Integer.parseInt(name);
            } catch (NumberFormatException n) {
                return io.grpc.Status.Code.UNKNOWN.value();
            }
        }
    }
}
