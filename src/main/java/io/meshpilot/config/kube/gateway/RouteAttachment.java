package io.meshpilot.config.kube.gateway;

import io.meshpilot.config.ConfigKey;

/**
 * A route accepted by one listener of a parent: what the route conversion reports so that
 * the Gateway's and ListenerSet's status can count {@code attachedRoutes} per listener.
 */
public record RouteAttachment(ParentKey parent, String sectionName, ConfigKey route) {
}
