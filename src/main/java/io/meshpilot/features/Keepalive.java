package io.meshpilot.features;

import java.time.Duration;

/** gRPC keepalive as istiod's --keepalive* flags. */
public record Keepalive(Duration interval, Duration timeout, Duration maxServerConnectionAge) {
}
