package io.meshpilot.model;

import io.meshpilot.features.PilotFeatures;

/**
 * Whether sidecars and gateways send HBONE to the workloads that take it (istiod's
 * {@code features.EnableHBONESend}, {@code PreferHBONESend} and {@code EnableIngressWaypointRouting},
 * all only with ambient mode on).
 *
 * @param enabled   PILOT_ENABLE_SENDING_HBONE: outbound clusters try HBONE first and the proxy gets
 *                  {@code connect_originate}; endpoints without a sidecar that take HBONE are reached through it
 * @param preferred PILOT_PREFER_SENDING_HBONE: also endpoints that have a sidecar (Istio mutual TLS otherwise)
 * @param ingressWaypoints ENABLE_INGRESS_WAYPOINT_ROUTING: gateways send to the waypoint of a service labelled
 *                  {@code istio.io/ingress-use-waypoint} (or in a namespace so labelled) instead of its pods
 */
public record HboneSend(boolean enabled, boolean preferred, boolean ingressWaypoints) {
    public static final HboneSend OFF = new HboneSend(false, false, false);

    public static HboneSend of(PilotFeatures.Ambient ambient) {
        return ambient.enabled()
                ? new HboneSend(ambient.hboneSend(), ambient.preferHboneSend(), ambient.ingressWaypointRouting()) : OFF;
    }
}
