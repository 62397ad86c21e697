package io.meshpilot.admin;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's {@code /debug} page (pilot/pkg/xds/debug.go {@code Debug} and {@code indexTmpl}):
 * the "Pilot Debug Console", an HTML table of every debug handler, sorted by path, each linked
 * with istiod's description. {@code istioctl dashboard istiod-debug} opens it.
 */
final class DebugIndex {
    /** istiod's descriptions (AddDebugHandlers), by page. */
    private static final Map<String, String> HELP = Map.ofEntries(
            Map.entry("ecdsz", "Status and debug interface for ECDS"),
            Map.entry("edsz", "Status and debug interface for EDS"),
            Map.entry("ndsz", "Status and debug interface for NDS"),
            Map.entry("adsz", "Status and debug interface for ADS"),
            Map.entry("adsz?push=true", "Initiates push of the current state to all connected endpoints"),
            Map.entry("syncz", "Synchronization status of all Envoys connected to this Pilot instance"),
            Map.entry("registryz", "Debug support for registry"),
            Map.entry("endpointz", "Obsolete, use endpointShardz"),
            Map.entry("endpointShardz", "Info about the endpoint shards"),
            Map.entry("cachez", "Info about the internal XDS caches"),
            Map.entry("cachez?sizes=true", "Info about the size of the internal XDS caches"),
            Map.entry("cachez?clear=true", "Clear the XDS caches"),
            Map.entry("configz", "Debug support for config"),
            Map.entry("sidecarz", "Debug sidecar scope for a proxy"),
            Map.entry("resourcesz", "Debug support for watched resources"),
            Map.entry("instancesz", "Debug support for service instances"),
            Map.entry("ambientz", "Debug support for ambient"),
            Map.entry("authorizationz", "Internal authorization policies"),
            Map.entry("telemetryz", "Debug Telemetry configuration"),
            Map.entry("config_dump", "ConfigDump in the form of the Envoy admin config dump API for passed in proxyID"),
            Map.entry("push_status", "Last PushContext Details"),
            Map.entry("pushcontext", "Debug support for current push context"),
            Map.entry("connections", "Info about the connected XDS clients"),
            Map.entry("inject", "Active inject template"),
            Map.entry("mesh", "Active mesh config"),
            Map.entry("clusterz", "List remote clusters where istiod reads endpoints"),
            Map.entry("networkz", "List cross-network gateways"),
            Map.entry("force_disconnect", "Disconnects a proxy from this Pilot"),
            Map.entry("list", "List all supported debug commands in json"));

    private DebugIndex() {
    }

    /** istiod's description of a page; empty for one istiod does not have. */
    static String help(String page) {
        return HELP.getOrDefault(page, "");
    }

    /** The page for these entries (what {@code /debug/list} names, plus {@code list}). */
    static String html(List<String> pages) {
        Map<String, String> rows = new TreeMap<>();
        pages.forEach(p -> rows.put("/debug/" + p, help(p)));
        rows.put("/debug/list", help("list"));
        StringBuilder b = new StringBuilder("""
                <html>
                <head>
                <title>Pilot Debug Console</title>
                </head>
                <style>
                #endpoints {
                  font-family: "Trebuchet MS", Arial, Helvetica, sans-serif;
                  border-collapse: collapse;
                }

                #endpoints td, #endpoints th {
                  border: 1px solid #ddd;
                  padding: 8px;
                }

                #endpoints tr:nth-child(even){background-color: #f2f2f2;}

                #endpoints tr:hover {background-color: #ddd;}

                #endpoints th {
                  padding-top: 12px;
                  padding-bottom: 12px;
                  text-align: left;
                  background-color: black;
                  color: white;
                }
                </style>
                <body>
                <br/>
                <p style = "font-family:Arial,Helvetica,sans-serif;">
                Note: Use <b>pretty</b> in query string (like <b>debug/configz?pretty</b>) to format the output.
                </p>
                <table id="endpoints">
                <tr><th>Endpoint</th><th>Description</th></tr>
                """);
        rows.forEach((path, help) -> b.append("\t<tr>\n\t<td><a href='").append(escape(path)).append("'>")
                .append(escape(path)).append("</a></td><td>").append(escape(help)).append("</td>\n\t</tr>\n"));
        return b.append("""
                </table>
                <br/>
                </body>
                </html>
                """).toString();
    }

    /** html/template's escaping of the text it inserts. */
    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")
                .replace("\"", "&#34;");
    }
}
