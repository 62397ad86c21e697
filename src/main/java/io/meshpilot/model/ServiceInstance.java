package io.meshpilot.model;

import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** One endpoint of one port of one service (istiod's model.ServiceInstance). */
public record ServiceInstance(Service service, Port servicePort, IstioEndpoint endpoint) {

    /**
     * The instances of {@code service}'s port {@code port} among its endpoints whose labels
     * carry every one of {@code labels} (istiod's GetProxyServiceTargets subset match), as
     * each registry answers {@link ServiceDiscovery#instances}. None when the service has no
     * such port.
     */
    public static List<ServiceInstance> select(Service service, int port, Map<String, String> labels,
                                               List<IstioEndpoint> endpoints) {
        var servicePort = service.port(port);
        if (servicePort.isEmpty()) {
            return List.of();
        }
        List<ServiceInstance> out = new ArrayList<>();
        for (IstioEndpoint e : endpoints) {
            if (e.servicePortName().equals(servicePort.get().name()) && LabelSelector.subsetOf(labels, e.labels())) {
                out.add(new ServiceInstance(service, servicePort.get(), e));
            }
        }
        return out;
    }
}
