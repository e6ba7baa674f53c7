package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.transport.peer.Deliveries;
import dev.rlmmcp.transport.peer.PeerProxy;
import dev.rlmmcp.transport.peer.Reroute;
import dev.rlmmcp.transport.peer.RouteCache;
import dev.rlmmcp.transport.peer.RouteKey;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends each request on /mcp, /rpc and legacy SSE's /message to the node that serves its session (see {@link RouteKey}). A client's
 * request for a session another live node owns is streamed to that node ({@link PeerProxy}); a peer's request
 * is served here if this node owns (or now takes over) the session, else answered 409 naming the owner, and
 * the sender tries that one, at most {@value #MAX_HOPS} hops in all. A request for no session, or for a
 * session whose owner is gone, is served here; an owner that does not answer is waited for (up to the
 * patience) until the cluster routes its sessions elsewhere, as it does once its lease has run out.
 */
final class RoutingFilter extends HttpFilter {

    static final int MAX_HOPS = 3;
    private static final int SMALL_BODY = 64 * 1024;
    private static final Logger log = LoggerFactory.getLogger(RoutingFilter.class);

    private final transient Router router;
    private final transient RouteCache routes;
    private final transient PeerProxy proxy;
    private final transient ObjectMapper json;
    private final int maxRequestBytes;
    private final transient Function<String, Optional<Router.Remote>> tags;
    private final Duration patience;
    private final transient Deliveries deliveries = new Deliveries();

    RoutingFilter(
            Router router,
            PeerProxy proxy,
            ObjectMapper json,
            int maxRequestBytes,
            Function<String, Optional<Router.Remote>> tags,
            Duration patience) {
        this.router = router;
        this.routes = new RouteCache(router);
        this.patience = patience;
        this.tags = tags;
        this.proxy = proxy;
        this.json = json;
        this.maxRequestBytes = maxRequestBytes;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String method = request.getMethod();
        if (!"POST".equals(method) && !"DELETE".equals(method)) {
            response.setHeader(PeerProxy.NODE, router.nodeId());
            chain.doFilter(request, response);
            return;
        }
        HttpServletRequest routed = request;
        byte[] body = null;
        boolean stream = LegacySseTransport.MESSAGE_PATH.equals(HttpEndpoint.path(request));
        RouteKey key =
                stream ? RouteKey.ofStreamQuery(request.getQueryString()) : RouteKey.ofHeaders(request::getHeader);
        if (key == null && "POST".equals(method)) {
            BufferedRequest buffered = BufferedRequest.read(request, response, maxRequestBytes);
            if (buffered == null) {
                return;
            }
            routed = buffered;
            body = buffered.body();
            key = RouteKey.ofBody(body, "/rpc".equals(HttpEndpoint.path(request)), json, tags);
        }
        if (key == null) {
            key = new RouteKey.None();
        }
        Router.Route route = route(key, routed, response);
        if (route instanceof Router.Remote owner) {
            toOwner(request, routed, body, response, owner, key, chain);
        } else if (route != null) {
            serveHere(routed, response, chain, key);
        }
    }

    /** Where the key routes to; null after answering 503 when the router fails (the cluster database is down). */
    private Router.Route route(RouteKey key, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        try {
            // a peer sent it here because its view names this node: answer from the cluster's view, never a cache
            return PeerGate.peerOf(request) != null ? routes.fresh(key) : routes.route(key);
        } catch (RuntimeException e) {
            log.warn("routing a request failed: {}", e.toString());
            response.setHeader("Retry-After", "2");
            response.setHeader(PeerProxy.OUTCOME, PeerProxy.NOT_RUN);
            JsonResponse.refuseUnread(
                    request,
                    response,
                    503,
                    -32000,
                    "this node cannot tell which node serves the session now (the cluster database did not "
                            + "answer); retry in a few seconds");
            return null;
        }
    }

    /** A peer's request is answered 409 naming the owner; a client's is forwarded to it. */
    private void toOwner(
            HttpServletRequest request,
            HttpServletRequest routed,
            byte[] body,
            HttpServletResponse response,
            Router.Remote owner,
            RouteKey key,
            FilterChain chain)
            throws IOException, ServletException {
        if (PeerGate.peerOf(request) != null) {
            moved(routed, response, owner);
        } else if (body == null && small(request)) {
            // sent from memory: no wait for the owner's 100 Continue, and a 409 can be followed at once
            BufferedRequest buffered = BufferedRequest.read(request, response, maxRequestBytes);
            if (buffered != null) {
                forward(buffered, buffered.body(), response, owner, key, chain);
            }
        } else {
            forward(routed, body, response, owner, key, chain);
        }
    }

    /** A body of known length small enough to hold while it is forwarded. */
    private static boolean small(HttpServletRequest request) {
        long length = request.getContentLengthLong();
        return length > 0 && length <= SMALL_BODY;
    }

    private void serveHere(HttpServletRequest request, HttpServletResponse response, FilterChain chain, RouteKey key)
            throws IOException, ServletException {
        String sessionId = key instanceof RouteKey.Session session ? session.id() : null;
        response.setHeader(PeerProxy.NODE, router.nodeId()); // a forwarded reply carries its owner's instead
        // admitted and counted until served, so that a handover waits for it (see Router#admit)
        try (Router.Admission admitted = router.admit(sessionId)) {
            if (admitted == null) {
                notServing(request, response);
                return;
            }
            if (PeerGate.peerOf(request) != null && !deliveries.first(request.getHeader(PeerProxy.REQUEST_ID))) {
                JsonResponse.refuseUnread(
                        request,
                        response,
                        409,
                        -32000,
                        "this request was delivered to this node already and is not run again; check the "
                                + "session's state before running it again");
                return;
            }
            chain.doFilter(request, response);
        }
    }

    private static void notServing(HttpServletRequest request, HttpServletResponse response) throws IOException {
        notServingHeaders(response);
        JsonResponse.refuseUnread(
                request,
                response,
                503,
                -32000,
                "this node is not serving now (it is shutting down, or cut off from the cluster database); "
                        + "retry in a few seconds");
    }

    /**
     * The headers of a 503 for a call that ran nowhere because this node does not serve its session now: when
     * to retry, that nothing ran, and for a forwarding peer, that it should wait for the session to move.
     */
    static void notServingHeaders(HttpServletResponse response) {
        response.setHeader("Retry-After", "2");
        response.setHeader(PeerProxy.NOT_SERVING, "true");
        response.setHeader(PeerProxy.OUTCOME, PeerProxy.NOT_RUN);
    }

    /** A peer sent a request for a session this node does not own: 409 naming the owner. */
    private static void moved(HttpServletRequest request, HttpServletResponse response, Router.Remote owner)
            throws IOException {
        response.setHeader(PeerProxy.OWNER, PeerProxy.owner(owner));
        JsonResponse.refuseUnread(
                request, response, 409, -32000, "the session is owned by node " + owner.nodeId() + "; ask it");
    }

    /**
     * Streams the request to its owner, following 409s. An owner that does not answer, or answers that it is
     * not serving (shutting down and handing its sessions over, or fenced), is waited for until the cluster
     * routes the session elsewhere.
     */
    private void forward(
            HttpServletRequest request,
            byte[] body,
            HttpServletResponse response,
            Router.Remote first,
            RouteKey key,
            FilterChain chain)
            throws IOException, ServletException {
        Router.Route next = first;
        String requestId = UUID.randomUUID().toString(); // the same on every node it is sent to
        for (int hop = 0; hop < MAX_HOPS && next instanceof Router.Remote owner; hop++) {
            PeerProxy.Answer answer = null;
            try {
                answer = proxy.send(request, body, owner, () -> routes.stillNames(key, owner), requestId);
            } catch (PeerProxy.Unreachable e) {
                log.info("{}", e.getMessage()); // it cannot have received the request: it may go elsewhere
            } catch (PeerProxy.Unanswered e) {
                log.warn("{}", e.getMessage());
                routes.forget(key);
                mayHaveRun(request, response, e);
                return;
            }
            if (answer != null && answer.redirect() != null) {
                answer.discard();
                routes.forget(key);
                Router.Remote named = answer.redirect();
                next = named.nodeId().equals(router.nodeId()) ? routes.fresh(key) : named;
                continue;
            }
            if (answer != null && !answer.notServing()) {
                routes.remember(key, owner);
                response.setHeader(PeerProxy.FORWARDED_BY, router.nodeId()); // beside the owner's Rlm-Node
                PeerProxy.relay(answer, response);
                return;
            }
            if (answer != null) {
                answer.discard();
            }
            routes.forget(key);
            next = Reroute.after(() -> routes.fresh(key), owner, patience);
            if (next.equals(owner)) {
                unreachable(request, response, owner);
                return;
            }
        }
        if (next instanceof Router.Local) {
            serveHere(request, response, chain, key); // the owner let the session go, or its lease ran out
            return;
        }
        response.setHeader("Retry-After", "1");
        JsonResponse.refuseUnread(
                request,
                response,
                503,
                -32000,
                "the session moved between nodes " + MAX_HOPS + " times while this request was routed; retry");
    }

    /** The owner got the request and gave no answer: 502 (the call may have run), never a second run. */
    private static void mayHaveRun(HttpServletRequest request, HttpServletResponse response, IOException e)
            throws IOException {
        if (response.isCommitted()) {
            throw e;
        }
        response.setHeader(PeerProxy.OUTCOME, PeerProxy.UNKNOWN);
        JsonResponse.refuseUnread(
                request, response, 502, -32000, e.getMessage() + "; check the session's state before running it again");
    }

    private static void unreachable(HttpServletRequest request, HttpServletResponse response, Router.Remote owner)
            throws IOException {
        response.setHeader("Retry-After", "5");
        response.setHeader(PeerProxy.OUTCOME, PeerProxy.NOT_RUN);
        JsonResponse.refuseUnread(
                request,
                response,
                503,
                -32000,
                "the node that owns this session (" + owner.nodeId() + ") is unreachable or not serving; another "
                        + "node takes the session over when that node's lease expires: retry in a few seconds");
    }
}
