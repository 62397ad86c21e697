package io.meshpilot.model;

import io.meshpilot.config.Config;
import java.util.List;

/**
 * The Telemetry and WasmPlugin objects of one push, each list oldest first (istiod sorts both
 * by creation time before it merges or orders them).
 */
record ExtensionConfigs(List<Config> telemetries, List<Config> wasmPlugins) {
    static final ExtensionConfigs NONE = new ExtensionConfigs(List.of(), List.of());

    ExtensionConfigs {
        telemetries = List.copyOf(telemetries);
        wasmPlugins = List.copyOf(wasmPlugins);
    }
}
