package dev.rlmmcp.transport.peer;

import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Sends one client request on to the node that owns its session, over the peer channel, and streams the
 * answer back: status and headers as the owner gave them (hop-by-hop ones aside), the body flushed as it
 * arrives, so an SSE stream's progress notifications and sampling requests reach the client when the owner
 * sends them. A body read already (to find its route) is sent from memory; else it is streamed after the
 * owner's {@code 100 Continue}, so an owner that answers 409 at once has consumed none of it.
 */
public final class PeerProxy {

    /** On a forwarded request, and on its relayed reply: the id of the node that forwarded it. */
    public static final String FORWARDED_BY = "Rlm-Forwarded-By";

    public static final String OWNER = "Rlm-Owner";
    /** On every reply of a cluster node: the id of the node that ran the request (relayed as the owner sent it). */
    public static final String NODE = "Rlm-Node";
    /** On a 503 of a node that is shutting down or fenced: the sender waits for the session to move. */
    public static final String NOT_SERVING = "Rlm-Not-Serving";
    /**
     * One forwarded request's idempotency key, the same on every node it is sent to: the node that admits it
     * remembers it ({@link Deliveries}) and refuses a second delivery instead of running it again.
     */
    public static final String REQUEST_ID = "Rlm-Request-Id";
    /** Whether a refusal's call ran nowhere ({@link #NOT_RUN}) or may have run ({@link #UNKNOWN}): told to clients. */
    public static final String OUTCOME = "Rlm-Outcome";
    /** {@link #OUTCOME} of a refusal: the call ran nowhere, and may be sent again as it is. */
    public static final String NOT_RUN = "not-run";
    /** {@link #OUTCOME} of a call that may have run: its owner got it and gave no answer. */
    public static final String UNKNOWN = "unknown";

    private static final Set<String> NOT_PASSED = Set.of(
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "host",
            "content-length",
            "expect",
            "authorization",
            "date",
            "server",
            PeerAuth.HEADER.toLowerCase(Locale.ROOT),
            FORWARDED_BY.toLowerCase(Locale.ROOT),
            OWNER.toLowerCase(Locale.ROOT),
            NOT_SERVING.toLowerCase(Locale.ROOT),
            REQUEST_ID.toLowerCase(Locale.ROOT));

    private final PeerAuth auth;
    private final PeerClients peers;
    private final PeerConnections connections;

    public PeerProxy(PeerAuth auth, PeerClients peers, PeerConnections connections) {
        this.auth = auth;
        this.peers = peers;
        this.connections = connections;
    }

    /** The owner's answer, its body not yet read: it must be relayed or closed. */
    public record Answer(int status, HttpHeaders headers, InputStream body) {

        public static Answer of(HttpResponse<InputStream> response) {
            return new Answer(response.statusCode(), response.headers(), response.body());
        }

        /** The owner an answer 409 names, or null. */
        public Router.Remote redirect() {
            String owner = headers.firstValue(OWNER).orElse(null);
            if (status != 409 || owner == null) {
                return null;
            }
            String[] parts = owner.strip().split(" ");
            return parts.length == 2 ? new Router.Remote(parts[0], parts[1]) : null;
        }

        /** The owner is shutting down or fenced: its sessions are about to move. */
        public boolean notServing() {
            return status == 503 && headers.firstValue(NOT_SERVING).isPresent();
        }

        public void discard() {
            try {
                body.close();
            } catch (IOException e) {
                // nothing more to read from a connection already given up
            }
        }
    }

    /** The value of {@link #OWNER} naming a node: {@code nodeId host:port}. */
    public static String owner(Router.Remote remote) {
        return remote.nodeId() + " " + remote.address();
    }

    /**
     * Sends the request to {@code owner} under the idempotency key {@code requestId}; {@code body} null streams
     * it from the request. Throws {@link Unreachable} when the owner cannot have received it (its address
     * refused or did not answer the connection), {@link Unanswered} when it may have (see {@link PeerClients}).
     */
    public Answer send(
            HttpServletRequest request, byte[] body, Router.Remote owner, BooleanSupplier stillOwner, String requestId)
            throws IOException {
        String target = target(request);
        String method = request.getMethod();
        List<Map.Entry<String, String>> headers = new ArrayList<>(16);
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
            String name = names.nextElement();
            if (!NOT_PASSED.contains(name.toLowerCase(Locale.ROOT))) {
                for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements(); ) {
                    headers.add(Map.entry(name, values.nextElement()));
                }
            }
        }
        headers.add(Map.entry(PeerAuth.HEADER, auth.sign(method, target)));
        headers.add(Map.entry(FORWARDED_BY, auth.nodeId()));
        headers.add(Map.entry(REQUEST_ID, requestId));
        if (body != null || !hasBody(request)) { // in memory: written in one piece on a pooled connection
            return connections.send(
                    new PeerConnections.Request(method, target, headers, body == null ? new byte[0] : body),
                    owner,
                    stillOwner);
        }
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://" + owner.address() + target))
                .method(method, publisher(request))
                .expectContinue(true);
        headers.forEach(header -> builder.header(header.getKey(), header.getValue()));
        return Answer.of(peers.send(builder.build(), owner, stillOwner));
    }

    /** Writes the owner's answer to the client, flushing whenever the owner has sent nothing more yet. */
    public static void relay(Answer answer, HttpServletResponse response) throws IOException {
        response.setStatus(answer.status());
        answer.headers().map().forEach((name, values) -> {
            if (!name.startsWith(":") && passed(name)) {
                values.forEach(value -> response.addHeader(name, value));
            }
        });
        long length = answer.headers().firstValueAsLong("content-length").orElse(-1);
        if (length >= 0) {
            response.setContentLengthLong(length);
        }
        try (InputStream in = answer.body()) {
            OutputStream out = response.getOutputStream();
            byte[] buffer = new byte[length >= 0 && length < 8192 ? (int) Math.max(length, 1) : 8192];
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                out.write(buffer, 0, n);
                if (in.available() == 0) {
                    out.flush();
                }
            }
            out.flush();
        }
    }

    private static boolean passed(String name) {
        return !NOT_PASSED.contains(name.toLowerCase(Locale.ROOT));
    }

    /** The path with its query, as the client sent them: what a peer request's signature covers. */
    public static String target(HttpServletRequest request) {
        String query = request.getQueryString();
        return request.getRequestURI() + (query == null ? "" : "?" + query);
    }

    private static boolean hasBody(HttpServletRequest request) {
        return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
    }

    private static HttpRequest.BodyPublisher publisher(HttpServletRequest request) {
        return HttpRequest.BodyPublishers.ofInputStream(() -> {
            try {
                return request.getInputStream();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * The owner may have received the request (some of it was written to a connection it had accepted) and
     * gave no answer: it is never sent again, to that node or another, since it may have run there.
     */
    public static final class Unanswered extends IOException {

        Unanswered(Router.Remote owner, String why) {
            super("node " + owner.nodeId() + " at " + owner.address() + " received the request and gave no answer ("
                    + why + "); it may have run there and is not sent again");
        }
    }

    /** The owner node could not be reached (it cannot have received the request): down, or restarting. */
    public static final class Unreachable extends IOException {

        private final transient Router.Remote owner;

        Unreachable(Router.Remote owner, IOException cause) {
            super("node " + owner.nodeId() + " at " + owner.address() + " is unreachable: " + cause, cause);
            this.owner = owner;
        }

        public Router.Remote owner() {
            return owner;
        }
    }
}
