package io.meshpilot.logging;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.sun.security.auth.module.UnixSystem;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * The ControlZ topics besides the logging scopes (istiod's pkg/ctrlz/topics), as JSON objects
 * with istiod's keys, and the HTML page of each. Not served: the environment topic (istiod
 * shows every variable, and the environment may hold secrets), arguments and signals.
 */
final class ControlZTopics {
    /** One topic: its title, its prefix ({@code /<prefix>z/} HTML, {@code /<prefix>j/} JSON). */
    record Topic(String title, String prefix) {
    }

    /** The topics on the home page, in istiod's order. */
    static final List<Topic> ALL = List.of(new Topic("Logging Scopes", "scope"),
            new Topic("Memory Usage", "mem"), new Topic("Process Info", "proc"), new Topic("Version Info", "version"));

    private ControlZTopics() {
    }

    /** istiod's Version Info: its BuildInfo JSON. */
    static JsonObject version(Map<String, String> buildInfo) {
        JsonObject o = new JsonObject();
        buildInfo.forEach(o::addProperty);
        return o;
    }

    /**
     * istiod's Process Info keys. The JVM has no effective ids apart from the real ones, and
     * no goroutines: both thread counts are the live Java threads.
     */
    static JsonObject process() {
        JsonObject o = new JsonObject();
        long uid = -1;
        long gid = -1;
        JsonArray groups = new JsonArray();
        try {
            UnixSystem unix = new UnixSystem();
            uid = unix.getUid();
            gid = unix.getGid();
            for (long g : unix.getGroups()) {
                groups.add(g);
            }
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            // not a Unix: ids unknown (-1)
        }
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        o.addProperty("egid", gid);
        o.addProperty("euid", uid);
        o.addProperty("gid", gid);
        o.add("groups", groups);
        o.addProperty("pid", ProcessHandle.current().pid());
        o.addProperty("ppid", ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L));
        o.addProperty("uid", uid);
        o.addProperty("wd", System.getProperty("user.dir"));
        o.addProperty("hostname", hostname());
        o.addProperty("tempdir", System.getProperty("java.io.tmpdir"));
        o.addProperty("threads", threads);
        o.addProperty("goroutines", threads);
        return o;
    }

    /**
     * istiod's Memory Usage (Go's runtime.MemStats) as far as the JVM has it: heap in use
     * (Alloc, HeapAlloc, HeapInuse), heap committed (HeapSys), committed heap and non-heap
     * (Sys), committed but unused heap (HeapIdle), collections and their total time.
     */
    static JsonObject memory() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        MemoryUsage nonHeap = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage();
        long collections = 0;
        long collectionMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            collections += Math.max(0, gc.getCollectionCount());
            collectionMillis += Math.max(0, gc.getCollectionTime());
        }
        JsonObject o = new JsonObject();
        o.addProperty("Alloc", heap.getUsed());
        o.addProperty("Sys", heap.getCommitted() + nonHeap.getCommitted());
        o.addProperty("HeapAlloc", heap.getUsed());
        o.addProperty("HeapSys", heap.getCommitted());
        o.addProperty("HeapIdle", heap.getCommitted() - heap.getUsed());
        o.addProperty("HeapInuse", heap.getUsed());
        o.addProperty("NumGC", collections);
        o.addProperty("PauseTotalNs", collectionMillis * 1_000_000);
        return o;
    }

    /** The home page: a link to every topic. */
    static String homePage() {
        StringBuilder b = new StringBuilder("<ul>\n");
        for (Topic t : ALL) {
            b.append("<li><a href=\"/").append(t.prefix()).append("z/\">").append(t.title()).append("</a></li>\n");
        }
        return page("ControlZ", b.append("</ul>\n").toString());
    }

    /** A topic's page: its JSON object as a table of names and values. */
    static String objectPage(String title, JsonObject o) {
        StringBuilder b = new StringBuilder("<table>\n");
        o.entrySet().forEach(e -> b.append("<tr><th>").append(escape(e.getKey())).append("</th><td>")
                .append(escape(text(e.getValue()))).append("</td></tr>\n"));
        return page(title, b.append("</table>\n").toString());
    }

    /** The logging scopes page: one row per scope; {@code PUT /scopej/<scope>} changes one. */
    static String scopesPage(Map<LogScopes.Scope, ScopeSettings> scopes) {
        StringBuilder b = new StringBuilder("<p>Change a scope with <code>PUT /scopej/&lt;scope&gt;</code>"
                + " (what <code>istioctl admin log</code> does).</p>\n<table>\n<tr><th>Name</th><th>Description</th>"
                + "<th>Output Level</th><th>Stack Trace Level</th><th>Log Callers</th></tr>\n");
        scopes.forEach((s, st) -> b.append("<tr><td>").append(escape(s.name())).append("</td><td>")
                .append(escape(s.description())).append("</td><td>").append(st.outputLevel().label())
                .append("</td><td>").append(st.stackTraceLevel().label()).append("</td><td>")
                .append(st.logCallers()).append("</td></tr>\n"));
        return page("Logging Scopes", b.append("</table>\n").toString());
    }

    private static String page(String title, String body) {
        return "<!DOCTYPE html>\n<html>\n<head>\n<title>" + escape(title) + "</title>\n</head>\n<body>\n<h1>"
                + escape(title) + "</h1>\n" + body + "<p><a href=\"/\">ControlZ</a></p>\n</body>\n</html>\n";
    }

    private static String text(JsonElement e) {
        return e.isJsonPrimitive() ? e.getAsString() : e.toString();
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&#34;");
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "";
        }
    }
}
