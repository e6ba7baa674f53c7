package dev.rlmmcp.transport.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.Locale;
import java.util.Set;

/**
 * Protection against DNS rebinding on every endpoint: the Host header must name this server, and a
 * browser's Origin must be this server or a configured CORS origin. Requests without an Origin
 * (every non-browser client) pass the Origin check.
 */
final class OriginHostFilter extends HttpFilter {

    private static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "::1", "[::1]");

    private final transient HostPolicy policy;

    OriginHostFilter(HostPolicy policy) {
        this.policy = policy;
    }

    /**
     * Which names this server answers to. With {@code anyHost} (a non-loopback bind without a host
     * list) the Host header is not checked: such a server needs an API key anyway.
     */
    record HostPolicy(Set<String> hosts, Set<String> corsOrigins, boolean anyHost) {

        HostPolicy {
            hosts = hosts.stream().map(h -> h.toLowerCase(Locale.ROOT)).collect(java.util.stream.Collectors.toSet());
            corsOrigins = Set.copyOf(corsOrigins);
        }

        boolean hostAllowed(String hostHeader) {
            if (hostHeader == null || hostHeader.isEmpty() || anyHost) {
                return true;
            }
            String name = hostName(hostHeader);
            return LOOPBACK.contains(name) || hosts.contains(name);
        }

        boolean originAllowed(String origin, String hostHeader) {
            if (origin == null) {
                return true;
            }
            if (corsOrigins.contains(origin)) {
                return true;
            }
            String authority;
            try {
                URI uri = URI.create(origin);
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())
                        || uri.getRawAuthority() == null) {
                    return false;
                }
                authority = uri.getRawAuthority().toLowerCase(Locale.ROOT);
            } catch (IllegalArgumentException e) {
                return false;
            }
            String name = hostName(authority);
            return LOOPBACK.contains(name)
                    || hosts.contains(name)
                    || (anyHost && hostHeader != null && authority.equals(hostHeader.toLowerCase(Locale.ROOT)));
        }

        /** The name part of {@code host[:port]} or {@code [v6][:port]}, lower case. */
        static String hostName(String authority) {
            String a = authority.toLowerCase(Locale.ROOT).strip();
            if (a.startsWith("[")) {
                int end = a.indexOf(']');
                return end < 0 ? a : a.substring(0, end + 1);
            }
            int colon = a.indexOf(':');
            return colon < 0 ? a : a.substring(0, colon);
        }
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String host = request.getHeader("Host");
        if (!policy.hostAllowed(host)) {
            JsonResponse.refuseUnread(
                    request,
                    response,
                    403,
                    -32000,
                    "Host header not allowed (DNS rebinding protection); "
                            + "add the name to --allowed-hosts if this server is meant to be reached by it");
            return;
        }
        if (!policy.originAllowed(request.getHeader("Origin"), host)) {
            JsonResponse.refuseUnread(
                    request, response, 403, -32000, "Origin not allowed; add it to --cors-origins to allow it");
            return;
        }
        chain.doFilter(request, response);
    }
}
