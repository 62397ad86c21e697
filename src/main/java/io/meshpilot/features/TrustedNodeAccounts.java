package io.meshpilot.features;

import io.meshpilot.util.PrintableText;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * istiod's {@code CA_TRUSTED_NODE_ACCOUNTS}: the service accounts ({@code namespace/name},
 * comma separated) of node agents (ztunnel) that may ask for certificates of pods on their
 * node. Empty: no impersonation at all.
 */
public record TrustedNodeAccounts(Set<Account> accounts) {
    private static final System.Logger LOG = System.getLogger(TrustedNodeAccounts.class.getName());

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
     * As istiod's features.CATrustedNodeAccounts: comma separated {@code namespace/name}; an entry
     * without a slash is warned about and ignored, not fatal (blanks around entries are dropped).
     */
    public static TrustedNodeAccounts parse(String value) {
        Set<Account> out = new LinkedHashSet<>();
        for (String entry : value.split(",")) {
            String e = entry.strip();
            if (e.isEmpty()) {
                continue;
            }
            int slash = e.indexOf('/');
            if (slash < 0) {
                LOG.log(System.Logger.Level.WARNING, "Invalid CA_TRUSTED_NODE_ACCOUNTS, ignoring: " + PrintableText.clip(e, 256));
                continue;
            }
            out.add(new Account(e.substring(0, slash), e.substring(slash + 1)));
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
