package dev.rlmmcp.transport.http;

import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.transport.peer.PeerProxy;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Optional;
import org.eclipse.jetty.ee11.servlet.ServletContextRequest;

/**
 * The door of the peer connector: a request that came in on it must carry a valid {@link PeerAuth#HEADER}
 * (401 otherwise), and is then marked as a peer's, which lets it past the public checks (API key, Host and
 * Origin, CORS). A request on the public connector is never a peer's, whatever headers it carries.
 */
final class PeerGate extends HttpFilter {

    static final String PEER_CONNECTOR = "peer";
    private static final String PEER_NODE = "rlm.peer.node";

    private final transient PeerAuth auth;

    PeerGate(PeerAuth auth) {
        this.auth = auth;
    }

    /** The node id of the peer that sent this request, or null for a client's request. */
    static String peerOf(ServletRequest request) {
        return request.getAttribute(PEER_NODE) instanceof String node ? node : null;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!onPeerConnector(request)) {
            request.removeAttribute(PEER_NODE);
            chain.doFilter(request, response);
            return;
        }
        Optional<String> peer =
                auth.verify(request.getHeader(PeerAuth.HEADER), request.getMethod(), PeerProxy.target(request));
        if (peer.isEmpty()) {
            JsonResponse.refuseUnread(
                    request,
                    response,
                    401,
                    -32001,
                    "this is the node-to-node port of the cluster: it serves only requests signed by a node "
                            + "with the cluster secret (" + PeerAuth.HEADER + "); clients use the public port");
            return;
        }
        request.setAttribute(PEER_NODE, peer.get());
        chain.doFilter(request, response);
    }

    private static boolean onPeerConnector(HttpServletRequest request) {
        ServletContextRequest jetty = ServletContextRequest.getServletContextRequest(request);
        return jetty != null
                && PEER_CONNECTOR.equals(
                        jetty.getConnectionMetaData().getConnector().getName());
    }
}
