package dev.rlmmcp.transport.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Set;

/**
 * CORS for the configured origins only: the request's own origin is echoed (never {@code *}), with
 * credentials allowed; preflight requests are answered here, before authentication, as browsers
 * send them without credentials. Other origins get no CORS headers, so browsers keep them out.
 */
final class CorsFilter extends HttpFilter {

    private static final String ALLOWED_HEADERS =
            "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID";

    private final transient Set<String> origins;

    CorsFilter(Set<String> origins) {
        this.origins = Set.copyOf(origins);
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String origin = request.getHeader("Origin");
        boolean allowed = origin != null && origins.contains(origin);
        if (allowed) {
            response.setHeader("Access-Control-Allow-Origin", origin);
            response.setHeader("Access-Control-Allow-Credentials", "true");
            response.setHeader("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate");
            response.addHeader("Vary", "Origin");
        }
        if (allowed
                && "OPTIONS".equals(request.getMethod())
                && request.getHeader("Access-Control-Request-Method") != null) {
            response.setHeader("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
            response.setHeader("Access-Control-Allow-Headers", ALLOWED_HEADERS);
            response.setHeader("Access-Control-Max-Age", "600");
            response.setStatus(204);
            return;
        }
        chain.doFilter(request, response);
    }
}
