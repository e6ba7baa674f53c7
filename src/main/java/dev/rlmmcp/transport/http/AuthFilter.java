package dev.rlmmcp.transport.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Bearer-token authentication for every path but {@code /healthz} and the trace viewer's
 * {@code /ui}, which authenticates by itself. {@code ?token=} is accepted on {@code GET /sse} only,
 * because a browser's EventSource cannot set headers.
 */
final class AuthFilter extends HttpFilter {

    private final transient ApiKey key;

    AuthFilter(ApiKey key) {
        this.key = key;
    }

    static boolean isPublic(String path) {
        return path.equals("/healthz") || path.equals("/ui") || path.startsWith("/ui/");
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String path = HttpEndpoint.path(request);
        if (isPublic(path)
                || key.matches(bearer(request))
                || (path.equals("/sse")
                        && "GET".equals(request.getMethod())
                        && key.matches(request.getParameter("token")))) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader("WWW-Authenticate", "Bearer realm=\"rlm-mcp\"");
        JsonResponse.refuseUnread(
                request,
                response,
                401,
                -32001,
                "authentication required: send the header Authorization: Bearer <RLM_API_KEY>");
    }

    private static String bearer(HttpServletRequest request) {
        String header = request.getHeader("Authorization");
        if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        return header.substring(7).strip();
    }
}
