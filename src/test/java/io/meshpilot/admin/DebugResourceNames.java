package io.meshpilot.admin;

import java.util.List;

/** Test access to the debug endpoint names the server derives from its resource class. */
public final class DebugResourceNames {
    private DebugResourceNames() {
    }

    public static List<String> names() {
        return DebugResource.endpointNames();
    }
}
