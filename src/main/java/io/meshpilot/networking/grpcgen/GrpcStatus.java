package io.meshpilot.networking.grpcgen;

import io.grpc.Status;
import java.util.Locale;

/** gRPC status names (Istio's abort.grpcStatus, e.g. "UNAVAILABLE") to their codes. */
public final class GrpcStatus {
    private GrpcStatus() {
    }

    public static int code(String name) {
        try {
            return Status.Code.valueOf(name.toUpperCase(Locale.ROOT)).value();
        } catch (IllegalArgumentException e) {
            try {
                return Integer.parseInt(name);
            } catch (NumberFormatException n) {
                return Status.Code.UNKNOWN.value();
            }
        }
    }
}
