package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Service;
import io.meshpilot.model.AddressInfo;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pods listed by the ServiceEntries selecting them: istiod's case "pod selected by ServiceEntry
 * honors port name mapping" (pilot/pkg/serviceregistry/ambient/workloads_test.go TestPodWorkloads).
 */
class PodWorkloadsTest {
    @Test
    void podSelectedByServiceEntryHonorsPortNameMapping() {
        ServiceInfo entry = new ServiceInfo(ServiceInfo.Source.SERVICE_ENTRY, "httpbin2",
                AddressInfo.of(Address.newBuilder().setService(Service.newBuilder().setName("httpbin")
                        .setNamespace("httpbin2").setHostname("httpbin.httpbin2.mesh.internal")
                        .addPorts(Port.newBuilder().setServicePort(8002).setTargetPort(0))).build()),
                Map.of("app", "httpbin"), Map.of(8002, new ServiceInfo.PortName("http", "")));
        V1Pod pod = new V1Pod()
                .metadata(new V1ObjectMeta().name("httpbin-123").namespace("httpbin2").labels(Map.of("app", "httpbin")))
                .spec(new V1PodSpec().addContainersItem(new V1Container().name("app")
                        .addPortsItem(new V1ContainerPort().name("http").containerPort(8000).protocol("TCP"))))
                .status(new V1PodStatus().phase("Running").podIP("10.1.1.1")
                        .addConditionsItem(new V1PodCondition().type("Ready").status("True")));
        AddressInfo got = PodWorkloads.build(pod, ServiceEntryAddressesTest.context(), List.of(entry));
        assertEquals(Map.of("httpbin2/httpbin.httpbin2.mesh.internal", PortList.newBuilder()
                        .addPorts(Port.newBuilder().setServicePort(8002).setTargetPort(8000)).build()),
                got.address().getWorkload().getServicesMap());
    }
}
