package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.List;
import java.util.Set;

/** Builds the resources of one type for one proxy from one PushContext. */
@FunctionalInterface
public interface Generator {
    /**
     * @param names    the resource names the proxy asked for
     * @param wildcard whether it asked for everything of this type
     */
    List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard);
}
