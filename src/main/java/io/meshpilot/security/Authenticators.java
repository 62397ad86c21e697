package io.meshpilot.security;

import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The authenticators of the secure gRPC port (istiod's server.authenticators), in the order
 * they are asked. The client-certificate authenticator is always there; JWT_RULE adds the
 * token authenticator, Kubernetes mode the TokenReview one.
 */
public final class Authenticators {
    private final List<Authenticator> all = new CopyOnWriteArrayList<>(List.of(new ClientCertAuthenticator()));

    public void register(Authenticator a) {
        all.add(a);
    }

    public List<Authenticator> all() {
        return List.copyOf(all);
    }

    /**
     * The first authenticator that recognizes the caller decides; when none does, the errors
     * of all are reported together, as istiod does.
     */
    public Authenticator.Caller authenticate(CallPeer peer, CallHeaders headers)
            throws Authenticator.AuthenticationException {
        List<String> errors = new ArrayList<>();
        for (Authenticator a : all) {
            try {
                var caller = a.authenticate(peer, headers);
                if (caller.isPresent()) {
                    return caller.get();
                }
                errors.add(a.type() + ": no credentials");
            } catch (Authenticator.AuthenticationException e) {
                errors.add(a.type() + ": " + e.getMessage());
            }
        }
        throw new Authenticator.AuthenticationException("authentication failure: " + String.join("; ", errors));
    }
}
