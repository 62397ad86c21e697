package io.meshpilot.model;

/** Where a workload runs: region/zone/subzone (any part may be empty). */
public record Locality(String region, String zone, String subzone) {
    public static final Locality NONE = new Locality("", "", "");

    /** From istiod's "region/zone/subzone" form. */
    public static Locality parse(String s) {
        if (s == null || s.isEmpty()) {
            return NONE;
        }
        String[] p = s.split("/", 3);
        return new Locality(p[0], p.length > 1 ? p[1] : "", p.length > 2 ? p[2] : "");
    }

    @Override
    public String toString() {
        if (subzone.isEmpty()) {
            return zone.isEmpty() ? region : region + "/" + zone;
        }
        return region + "/" + zone + "/" + subzone;
    }
}
