package io.meshpilot.features;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * istiod's {@code CA_TRUSTED_NODE_ACCOUNTS}: the service accounts ({@code namespace/name},
 * comma separated) of node agents (ztunnel) that may ask for certificates of pods on their
 * node. Empty: no impersonation at all.
 */
public record TrustedNodeAccounts(Set<Account> accounts) {
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    public record Account(String namespace, String serviceAccount) {
        @Override
        public String toString() {
            return namespace + "/" + serviceAccount;
        }
    }

    public TrustedNodeAccounts {
        accounts = Set.copyOf(accounts);
    }

    public static final TrustedNodeAccounts NONE = new TrustedNodeAccounts(Set.of());

    /**
     * @throws IllegalArgumentException naming CA_TRUSTED_NODE_ACCOUNTS and the bad entry
     */
    public static TrustedNodeAccounts parse(String value) {
        Set<Account> out = new LinkedHashSet<>();
        for (String entry : value.split(",")) {
            String e = entry.strip();
            if (e.isEmpty()) {
                continue;
            }
            String[] parts = e.split("/", -1);
            if (parts.length != 2 || !DNS_LABEL.matcher(parts[0]).matches()
                    || !DNS_SUBDOMAIN.matcher(parts[1]).matches()) {
                throw new IllegalArgumentException("CA_TRUSTED_NODE_ACCOUNTS: \"" + e
                        + "\" is not <namespace>/<service account>");
            }
            out.add(new Account(parts[0], parts[1]));
        }
        return new TrustedNodeAccounts(out);
    }

    public boolean isEmpty() {
        return accounts.isEmpty();
    }

    public boolean contains(String namespace, String serviceAccount) {
        return accounts.contains(new Account(namespace, serviceAccount));
    }
}
