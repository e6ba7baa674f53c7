package dev.rlmmcp.transport.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** GET /healthz: {"ok": true}, with no authentication and nothing about the server: a liveness probe for load balancers. */
final class HealthzServlet extends HttpServlet {

    private static final byte[] OK = "{\"ok\": true}".getBytes(StandardCharsets.UTF_8);

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Cache-Control", "no-store");
        JsonResponse.write(response, 200, OK);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Allow", "GET");
        JsonResponse.refuseUnread(request, response, 405, -32600, "GET only");
    }

    @Override
    protected void doDelete(HttpServletRequest request, HttpServletResponse response) throws IOException {
        doPost(request, response);
    }

    @Override
    protected void doPut(HttpServletRequest request, HttpServletResponse response) throws IOException {
        doPost(request, response);
    }
}
