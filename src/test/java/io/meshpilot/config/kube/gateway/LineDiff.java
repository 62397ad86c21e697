package io.meshpilot.config.kube.gateway;

import java.util.ArrayList;
import java.util.List;

/**
 * A line diff of two texts (longest common subsequence): the lines only in the first with
 * {@code -}, only in the second with {@code +}, each run of changes after the unchanged line
 * before it, so a difference deep in a spec shows where it is.
 */
final class LineDiff {
    /** Texts longer than this (lines) are shown whole instead: the table is quadratic. */
    private static final int MAX_LINES = 3000;

    private LineDiff() {
    }

    static String between(String expected, String actual) {
        List<String> a = expected.lines().toList();
        List<String> b = actual.lines().toList();
        if (a.size() > MAX_LINES || b.size() > MAX_LINES) {
            return "- " + String.join("\n- ", a) + "\n+ " + String.join("\n+ ", b);
        }
        int[][] common = new int[a.size() + 1][b.size() + 1];
        for (int i = a.size() - 1; i >= 0; i--) {
            for (int j = b.size() - 1; j >= 0; j--) {
                common[i][j] = a.get(i).equals(b.get(j)) ? common[i + 1][j + 1] + 1
                        : Math.max(common[i + 1][j], common[i][j + 1]);
            }
        }
        List<String> out = new ArrayList<>();
        String lastSame = null;
        boolean inChange = false;
        int i = 0;
        int j = 0;
        while (i < a.size() || j < b.size()) {
            if (i < a.size() && j < b.size() && a.get(i).equals(b.get(j))) {
                lastSame = a.get(i);
                inChange = false;
                i++;
                j++;
                continue;
            }
            if (!inChange && lastSame != null) {
                out.add("  " + lastSame);
            }
            inChange = true;
            if (j >= b.size() || (i < a.size() && common[i + 1][j] >= common[i][j + 1])) {
                out.add("- " + a.get(i++));
            } else {
                out.add("+ " + b.get(j++));
            }
        }
        return String.join("\n", out);
    }
}
