package dev.rlmmcp.transport.http;

import dev.rlmmcp.base.CallContext;
import jakarta.servlet.http.HttpServletRequest;
import java.util.regex.Pattern;

/**
 * The id a balancer offers for a session the request creates ({@value #HEADER}). The shipped nginx configuration
 * hashes a request that names no session on a fresh key, {@code s-} and its {@code $request_id}, and sends that
 * key along; a session named after it is hashed, on each later request, to the node that created it and owns
 * it, so its calls are not forwarded. Nothing of the balancer's hashing is known here: the key it hashed is
 * simply reused. An offer the cluster knows already is not taken (see {@code Sessions#create}). An initialize
 * names its MCP session after the offer the same way ({@link McpSessionAdoption#startAs}).
 */
final class SessionOffer {

    static final String HEADER = "Rlm-New-Session-Id";
    private static final Pattern ID = Pattern.compile("s-[A-Za-z0-9_-]{16,62}");

    private SessionOffer() {}

    /** Hands the request's offer, if it has a well-formed one, to the call it is served by. */
    static void carry(HttpServletRequest request, CallContext context) {
        String offered = offered(request);
        if (offered != null) {
            context.offerSessionId(offered);
        }
    }

    /** The request's offer if it is well formed, else null. */
    static String offered(HttpServletRequest request) {
        String offered = request.getHeader(HEADER);
        return offered != null && ID.matcher(offered).matches() ? offered : null;
    }
}
