package io.meshpilot.inject;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities in the canonical form the API machinery writes back
 * ({@code 2000m} becomes {@code 2}, {@code 1024Mi} becomes {@code 1Gi}), so an injected pod
 * reads as istiod's does. A quantity this does not understand is kept as written.
 */
final class Quantity {
    private static final Pattern FORM = Pattern.compile("([+-]?[0-9]*\\.?[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?");
    private static final String[] BINARY = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki", ""};
    private static final String[] DECIMAL = {"E", "P", "T", "G", "M", "k", "", "m", "u", "n"};
    private static final int[] DECIMAL_EXP = {18, 15, 12, 9, 6, 3, 0, -3, -6, -9};

    private Quantity() {
    }

    static String canonical(String q) {
        var m = FORM.matcher(q.trim());
        if (!m.matches()) {
            return q;
        }
        BigDecimal number = new BigDecimal(m.group(1));
        String suffix = m.group(2) == null ? "" : m.group(2);
        if (suffix.endsWith("i")) {
            int power = 6 - java.util.Arrays.asList(BINARY).indexOf(suffix);
            BigDecimal bytes = number.multiply(new BigDecimal(BigInteger.valueOf(1024).pow(power)));
            if (bytes.stripTrailingZeros().scale() > 0) {
                return q;
            }
            BigInteger b = bytes.toBigIntegerExact();
            for (int i = 0; i < BINARY.length; i++) {
                BigInteger unit = BigInteger.valueOf(1024).pow(6 - i);
                if (b.signum() != 0 && b.mod(unit).signum() == 0) {
                    return b.divide(unit) + BINARY[i];
                }
            }
            return b.toString();
        }
        int exp = DECIMAL_EXP[java.util.Arrays.asList(DECIMAL).indexOf(suffix)];
        BigDecimal value = number.scaleByPowerOfTen(exp);
        if (value.signum() == 0) {
            return "0";
        }
        for (int i = 0; i < DECIMAL.length; i++) {
            BigDecimal scaled = value.scaleByPowerOfTen(-DECIMAL_EXP[i]);
            if (scaled.stripTrailingZeros().scale() <= 0) {
                return scaled.toBigIntegerExact() + DECIMAL[i];
            }
        }
        return q;
    }
}
