package dev.rlmmcp.transport.http.ui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.rlm.TrajectoryJsonl;
import dev.rlmmcp.tools.Replies;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The trace viewer at /ui: the page, its files, and read-only JSON about the sessions. Nothing here
 * changes a session, starts a kernel or counts as activity. With an API key configured, the page
 * and the JSON need it (see {@link UiAuth}).
 */
public final class UiServlet extends HttpServlet {

    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
    private static final Pattern SESSION = Pattern.compile(
            "/api/sessions/([A-Za-z0-9_-]{1,64})(/variables|/trace\\.jsonl|/rlm/([0-9]{1,9})\\.jsonl)?");
    private static final Pattern ASSET = Pattern.compile("/assets/([a-z]+\\.[a-z]+)");

    private final Sessions sessions;
    private final ObjectMapper json;
    private final UiAuth auth;
    private final UiAssets assets = new UiAssets();
    private final LoginThrottle logins =
            new LoginThrottle(5, java.time.Duration.ofMinutes(1), System::currentTimeMillis);

    UiServlet(Sessions sessions, ObjectMapper json, UiAuth auth) {
        this.sessions = sessions;
        this.json = json;
        this.auth = auth;
    }

    /** Serves the viewer at /ui on this context, guarded by RLM_API_KEY when it is set. */
    /** The viewer, authenticating with RLM_API_KEY when it is set. */
    public static UiServlet of(Sessions sessions, ObjectMapper json) {
        return new UiServlet(sessions, json, UiAuth.fromEnvironment());
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        secureHeaders(response);
        String path = request.getPathInfo() == null ? "" : request.getPathInfo();
        Matcher asset = ASSET.matcher(path);
        if (path.isEmpty()) {
            redirect(response, "/ui/");
        } else if (asset.matches()) {
            sendAsset(response, asset.group(1), 200);
        } else if (path.equals("/login")) {
            if (auth.required()) {
                sendAsset(response, "login.html", 200);
            } else {
                redirect(response, "/ui/");
            }
        } else if (!auth.allows(request)) {
            if (path.startsWith("/api/")) {
                error(
                        response,
                        401,
                        "UNAUTHORIZED",
                        "this server needs its API key",
                        "send Authorization: Bearer <RLM_API_KEY>, or log in at /ui/login");
            } else {
                redirect(response, "/ui/login");
            }
        } else if (path.equals("/")) {
            sendIndex(response);
        } else if (path.equals("/api/sessions")) {
            sendSessions(response);
        } else {
            sendSessionPart(request, response, path);
        }
    }

    /** A session's page, variables, trace or run, by the path under /ui. */
    private void sendSessionPart(HttpServletRequest request, HttpServletResponse response, String path)
            throws IOException {
        Matcher m = SESSION.matcher(path);
        if (!m.matches()) {
            error(response, 404, "NOT_FOUND", "no such page: /ui" + path, "open /ui/");
            return;
        }
        Session session;
        try {
            session = sessions.get(m.group(1));
        } catch (RlmException e) {
            error(
                    response,
                    404,
                    "SESSION_NOT_FOUND",
                    "no session with id " + m.group(1),
                    "it may have been deleted; pick one from /ui/api/sessions");
            return;
        }
        if (m.group(3) != null) {
            sendRun(response, session, Integer.parseInt(m.group(3)));
            return;
        }
        String part = m.group(2) == null ? "" : m.group(2);
        switch (part) {
            case "/variables" -> send(response, Replies.variables(session.variablesView()));
            case "/trace.jsonl" -> sendJsonLines(response, session);
            default -> sendSession(request, response, session);
        }
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        secureHeaders(response);
        String path = request.getPathInfo() == null ? "" : request.getPathInfo();
        if (!sameOrigin(request)) {
            error(response, 403, "FORBIDDEN", "cross-origin form post refused", "use the form on /ui/login");
        } else if (path.equals("/login")) {
            String address = request.getRemoteAddr();
            long wait = logins.retryAfterSeconds(address);
            if (wait > 0) {
                response.setHeader("Retry-After", Long.toString(wait));
                error(
                        response,
                        429,
                        "TOO_MANY_ATTEMPTS",
                        "too many failed logins from this address",
                        "wait " + wait + " s, then log in with the server's RLM_API_KEY");
            } else if (auth.keyMatches(request.getParameter("key"))) {
                logins.succeeded(address);
                auth.grant(response, request.isSecure());
                redirect(response, "/ui/");
            } else {
                logins.failed(address);
                sendLoginFailed(response);
            }
        } else if (path.equals("/logout")) {
            auth.revoke(response);
            redirect(response, auth.required() ? "/ui/login" : "/ui/");
        } else {
            error(response, 405, "METHOD_NOT_ALLOWED", "POST is for /ui/login and /ui/logout only", "use GET");
        }
    }

    private void sendSessions(HttpServletResponse response) throws IOException {
        ObjectNode body = json.createObjectNode();
        var list = body.putArray("sessions");
        for (Session session : sessions.all()) {
            list.add(Replies.summary(session.summary()).put("busy", session.busy()));
        }
        body.put("count", list.size());
        send(response, body);
    }

    /**
     * The session's summary and its trace from entry {@code from} on (all of it by default, at most
     * the {@code last} most recent when given); the number of code steps is {@code code_steps}, as
     * {@code steps} holds the entries.
     */
    private void sendSession(HttpServletRequest request, HttpServletResponse response, Session session)
            throws IOException {
        Integer from = whole(request, "from");
        Integer last = whole(request, "last");
        if (from == null || last == null) {
            error(
                    response,
                    400,
                    "INVALID_ARGUMENT",
                    "from and last must be whole numbers",
                    "pass from=<the trace_length you already have>, last=<how many recent entries at most>");
            return;
        }
        if (last > 0) {
            from = Math.max(from, session.trace(0, 0).traceLength() - last);
        }
        ObjectNode body = Replies.trace(session.trace(from, Integer.MAX_VALUE));
        body.put("code_steps", session.summary().steps());
        send(response, body.put("busy", session.busy()));
    }

    /** A non-negative whole-number parameter, 0 when absent, null when it is something else. */
    private static Integer whole(HttpServletRequest request, String name) {
        String given = request.getParameter(name);
        if (given == null) {
            return 0;
        }
        try {
            int value = Integer.parseInt(given);
            return value < 0 ? null : value;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** One JSON object per line: the session first, then each trace entry. */
    private void sendJsonLines(HttpServletResponse response, Session session) throws IOException {
        ObjectNode trace = Replies.trace(session.trace(0, Integer.MAX_VALUE));
        JsonNode steps = trace.remove("steps");
        trace.remove(List.of("start", "end"));
        response.setStatus(200);
        response.setContentType("application/x-ndjson; charset=utf-8");
        response.setHeader("Cache-Control", "no-store");
        response.setHeader("Content-Disposition", "attachment; filename=\"" + session.id() + ".trace.jsonl\"");
        OutputStream out = response.getOutputStream();
        ObjectNode head = json.createObjectNode().put("type", "session");
        head.setAll(trace);
        writeLine(out, head);
        for (JsonNode step : steps) {
            ObjectNode line = json.createObjectNode().put("type", "step");
            line.setAll((ObjectNode) step);
            writeLine(out, line);
        }
    }

    /** Entry {@code index}'s RLM run in alexzhang13/rlm's logger JSONL, which that project's visualizer opens. */
    private void sendRun(HttpServletResponse response, Session session, int index) throws IOException {
        JsonNode entry =
                Replies.trace(session.trace(index, index + 1)).path("steps").path(0);
        if (entry.path("index").asInt(-1) != index || !TrajectoryJsonl.exportable(entry)) {
            error(
                    response,
                    404,
                    "NOT_FOUND",
                    "trace entry " + index + " of session " + session.id() + " holds no RLM run",
                    "use the download link of an entry that shows an RLM tree");
            return;
        }
        response.setStatus(200);
        response.setContentType("application/x-ndjson; charset=utf-8");
        response.setHeader("Cache-Control", "no-store");
        response.setHeader(
                "Content-Disposition", "attachment; filename=\"" + session.id() + "." + index + ".rlm.jsonl\"");
        response.getOutputStream().write(TrajectoryJsonl.text(entry).getBytes(StandardCharsets.UTF_8));
    }

    private void writeLine(OutputStream out, JsonNode node) throws IOException {
        out.write(json.writeValueAsBytes(node));
        out.write('\n');
    }

    private void sendAsset(HttpServletResponse response, String name, int status) throws IOException {
        UiAssets.Asset asset = assets.get(name);
        if (asset == null) {
            error(response, 404, "NOT_FOUND", "no such file: " + name.length() + " characters", "open /ui/");
            return;
        }
        response.setStatus(status);
        response.setContentType(asset.contentType());
        response.setHeader("Cache-Control", "no-cache");
        response.getOutputStream().write(asset.bytes());
    }

    /** The page, with its "Log out" button only when there is a key to log in with. */
    private void sendIndex(HttpServletResponse response) throws IOException {
        if (!auth.required()) {
            sendAsset(response, "index.html", 200);
            return;
        }
        String page = new String(assets.get("index.html").bytes(), StandardCharsets.UTF_8)
                .replace("class=\"logout\" hidden>", "class=\"logout\">");
        response.setStatus(200);
        response.setContentType(assets.get("index.html").contentType());
        response.setHeader("Cache-Control", "no-cache");
        response.getOutputStream().write(page.getBytes(StandardCharsets.UTF_8));
    }

    private void sendLoginFailed(HttpServletResponse response) throws IOException {
        String page = new String(assets.get("login.html").bytes(), StandardCharsets.UTF_8)
                .replace("<p class=\"error\" hidden>", "<p class=\"error\">");
        response.setStatus(401);
        response.setContentType("text/html; charset=utf-8");
        response.setHeader("Cache-Control", "no-store");
        response.getOutputStream().write(page.getBytes(StandardCharsets.UTF_8));
    }

    private void send(HttpServletResponse response, JsonNode body) throws IOException {
        response.setStatus(200);
        response.setContentType("application/json");
        response.setHeader("Cache-Control", "no-store");
        json.writeValue(response.getOutputStream(), body);
    }

    private void error(HttpServletResponse response, int status, String code, String message, String fix)
            throws IOException {
        ObjectNode body = json.createObjectNode();
        body.putObject("error").put("code", code).put("message", message).put("fix", fix);
        response.setStatus(status);
        response.setContentType("application/json");
        response.setHeader("Cache-Control", "no-store");
        json.writeValue(response.getOutputStream(), body);
    }

    private static void redirect(HttpServletResponse response, String to) {
        response.setStatus(303);
        response.setHeader("Location", to);
    }

    private static void secureHeaders(HttpServletResponse response) {
        response.setHeader("Content-Security-Policy", CSP);
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.setHeader("X-Frame-Options", "DENY");
        response.setHeader("Referrer-Policy", "same-origin");
    }

    /** A form post from our own page: Origin, when the browser sends it, names this host. */
    private static boolean sameOrigin(HttpServletRequest request) {
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return true;
        }
        try {
            URI uri = URI.create(origin);
            String host = request.getHeader("Host");
            String authority = uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
            return host != null && host.equalsIgnoreCase(authority);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
