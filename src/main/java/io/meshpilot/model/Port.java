package io.meshpilot.model;

import io.meshpilot.config.protocol.Protocol;

/** A service port: name, number, protocol (istiod's model.Port). */
public record Port(String name, int port, Protocol protocol) {
}
