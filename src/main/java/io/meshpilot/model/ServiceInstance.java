package io.meshpilot.model;

/** One endpoint of one port of one service (istiod's model.ServiceInstance). */
public record ServiceInstance(Service service, Port servicePort, IstioEndpoint endpoint) {
}
